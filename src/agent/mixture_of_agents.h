// mixture_of_agents: one hard problem put to several models at once, then one model (the
// aggregator) synthesizes their answers — the reference's two layers, over any
// OpenAI-compatible endpoint named in config.yaml:
//
//   moa:
//     base_url: https://openrouter.ai/api/v1     # default: the model: section's
//     api_key_env: OPENROUTER_API_KEY            # default: the model: section's key
//     reference_models:                          # names, or {name, temperature, max_tokens}
//       - {name: anthropic/claude-opus-4.6, temperature: 0.6}   # max_tokens: 32000 unless set
//       - google/gemini-2.5-pro
//     aggregator: {name: anthropic/claude-opus-4.6, temperature: 0.4}  # also reasoning_effort
//     reference_timeout_seconds: 300             # each reference model
//     timeout_seconds: 600                       # the whole call
//     min_successful: 1                          # reference answers the aggregator needs
//     reasoning_effort: xhigh                    # the reference's; none: not sent
//     pricing: {input: 3, output: 15}            # USD per million tokens, for the usage
//
// The tool is available only when the section names reference models and an aggregator and
// the key variable it names is set, in the config the process loaded (ToolCallConfig:
// config.yaml as it was when the process's Runtime read it). Its usage is charged to the calling
// agent's session. An agent's calls use the section as its session's config had it when the
// tool first ran; calls with no agent behind them (`talaria call`, `talaria mcp`) the process's,
// read once.
// Thread-safety: RunMixture is reentrant.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "talaria/agent/chat.h"
#include "talaria/agent/model_client.h"
#include "talaria/base/json.h"
#include "talaria/base/status.h"
#include "talaria/core/config.h"

namespace talaria::agent {

struct MoaModel {
  std::string name;
  std::optional<double> temperature;
  // 0: the endpoint's (the model: section's max_output_tokens, else none sent). Read from
  // config, a reference model's is 32,000 unless set (the reference's), the aggregator's 0.
  int64_t max_tokens = 0;
  std::optional<std::string> reasoning_effort;  // nullopt: the section's; "": none sent
};

struct MoaSettings {
  ModelSettings endpoint;  // base_url, key, headers, timeouts; the model name is per call
  std::vector<MoaModel> references;
  MoaModel aggregator;
  std::chrono::milliseconds reference_timeout{300'000};
  std::chrono::milliseconds timeout{600'000};
  int min_successful = 1;
  std::string reasoning_effort = "xhigh";  // the reference's for both layers; "": none sent
};

// nullopt when config.yaml has no `moa:` section. Errors: InvalidArgument naming the bad key;
// FailedPrecondition when the section lacks reference models, the aggregator, or the key its
// api_key_env names (the message says which).
Result<std::optional<MoaSettings>> MoaSettingsFromConfig(const Config& config);

// What one session read from its config for the tool, kept for the session (agent_impl.h).
struct MoaSessionSettings {
  Result<std::optional<MoaSettings>> loaded;
};

struct MoaOutcome {
  Json result;  // the reference's result object ({success, response, models_used, ...})
  Usage usage;  // every request's, the failed ones' included
};

// Layer 1: every reference model answers `prompt` in parallel (each within reference_timeout);
// layer 2: the aggregator synthesizes the answers. Stops early when `stop` fires or the
// overall timeout passes. Never fails: a failure is a result with success false.
MoaOutcome RunMixture(const MoaSettings& settings, const std::string& prompt,
                      const std::stop_token& stop);

// The aggregator's system prompt for these reference answers.
std::string AggregatorPrompt(const std::vector<std::string>& answers);

}  // namespace talaria::agent
