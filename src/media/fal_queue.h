// The FAL queue API (what fal_client's submit and handler.get do): POST {origin}/{model} with
// the arguments and an x-idempotency-key (kept across the submit's retries), then GET
// {origin}/{app}/requests/{id}/status until COMPLETED, then GET {origin}/{app}/requests/{id}
// for the result. {app} is the model's first two path segments ("fal-ai/flux-2" for
// "fal-ai/flux-2/klein/9b"). A cancelled or timed-out wait cancels the request
// (PUT .../cancel) so it is not left running and billed.
// Thread-safety: RunFalQueue is thread-safe.
#pragma once

#include <chrono>
#include <stop_token>
#include <string>
#include <utility>

#include "talaria/base/json.h"
#include "talaria/base/status.h"

namespace talaria::media {

struct FalTarget {
  std::string origin;  // "https://queue.fal.run" or a gateway's origin, no trailing slash
  std::pair<std::string, std::string> auth_header;  // "Authorization: Key ..."
  bool managed = false;                             // through the tool gateway
};

struct FalPolling {
  std::chrono::milliseconds first{150};  // the first status poll comes after this
  std::chrono::milliseconds max{2'000};  // polls back off (x1.5) up to this
};

// The model's result ({images: [{url, width, height, content_type}], seed, ...}).
// Errors: InvalidArgument (a model id that is not a FAL path), PermissionDenied (401/403; via
// the gateway: "the tool gateway rejected model ..."), Unavailable (other HTTP failures and a
// FAILED/ERROR status, with FAL's detail), DeadlineExceeded at `deadline` and Cancelled on
// `stop` (both after asking FAL to cancel).
Result<Json> RunFalQueue(const FalTarget& target, std::string_view model, const Json& arguments,
                         const FalPolling& polling, const std::stop_token& stop,
                         std::chrono::steady_clock::time_point deadline);

}  // namespace talaria::media
