// A run's metrics from the tracking service (Weights & Biases) over its HTTP API: POST
// <WANDB_BASE_URL>/graphql with `Authorization: Basic base64("api:" + WANDB_API_KEY)`, the
// project's runs filtered by display name, as wandb.Api().runs(...) asks. The summary and the
// sampled history arrive as JSON strings inside the GraphQL answer.
// Thread-safety: free functions; thread-safe.
#pragma once

#include <stop_token>
#include <string>

#include <nlohmann/json.hpp>
#include "rl/rl_settings.h"

#include "talaria/base/json.h"
#include "talaria/base/status.h"

namespace talaria::rl {

struct RunMetrics {
  std::string url;    // the run's page
  std::string state;  // "running", "finished", "crashed", ...
  Json summary;       // the summary metrics (an object)
  Json history;       // array of sampled rows (only when asked for)
};

// The W&B run displayed as `display_name` in `project`. NotFound when there is none;
// Unavailable for HTTP and GraphQL errors (the message says which), FailedPrecondition when
// WANDB_API_KEY is unset.
Result<RunMetrics> FetchRunMetrics(const RlSettings& settings, const std::string& project,
                                   const std::string& display_name, int history_samples,
                                   const std::stop_token& stop);

// The original's status metrics from a summary: step, reward_mean, loss, percent_correct,
// eval_percent_correct (null when absent).
Json StatusMetrics(const Json& summary);

}  // namespace talaria::rl
