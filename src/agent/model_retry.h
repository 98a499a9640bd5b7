// When a failed model request is tried again, and after how long: jittered exponential backoff
// (base · 2^(attempt−1), capped, plus up to 50 % jitter) and the server's Retry-After (seconds
// or an HTTP date), capped.
// Thread-safety: free functions.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "talaria/base/status.h"

namespace talaria::agent {

// The delay before retry `attempt` (1 for the first retry); `jitter` in [0, 1) scales the
// extra 0–50 %.
std::chrono::milliseconds BackoffDelay(int attempt, std::chrono::milliseconds base,
                                       std::chrono::milliseconds cap, double jitter);

// A Retry-After header's delay: delta-seconds ("120", fractions accepted) or an IMF-fixdate
// ("Wed, 21 Oct 2015 07:28:00 GMT", relative to `now`; a date in the past is 0). nullopt when
// the value reads as neither.
std::optional<std::chrono::milliseconds> ParseRetryAfter(std::string_view value,
                                                         std::chrono::system_clock::time_point now);

// Whether an HTTP status is worth trying again: 408, 409, 425, 429 and 5xx.
bool IsRetryableStatus(int status);

// The Status of a failed HTTP exchange with the model server: PermissionDenied (401/403),
// InvalidArgument (other 4xx), Unavailable (429, 5xx); the message carries the provider's
// error text found in `body` (its "error.message", "message" or "detail"; else its start).
Status StatusForHttpError(int status, std::string_view body, std::string_view endpoint);

// The provider's own error text in a JSON error body or an `error` value.
std::string ProviderErrorText(std::string_view body);

}  // namespace talaria::agent
