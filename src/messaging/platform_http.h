// One request to a messaging platform's HTTP API, retried when the platform answers that it is
// rate-limiting (each platform says how long to wait in its own way: a Retry-After header, a
// retry_after field in seconds, retry_after_ms). Only rate-limit answers are retried: they say
// the message was not taken; a 5xx or a dropped connection may have delivered it, and sending
// again would send it twice.
// Thread-safety: free functions; thread-safe.
#pragma once

#include <chrono>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>  // Reply holds a Json by value

#include "talaria/base/json.h"
#include "talaria/base/status.h"
#include "talaria/net/http_client.h"

namespace talaria::messaging {

using Clock = std::chrono::steady_clock;

// How long one send may take and wait.
struct CallLimits {
  std::stop_token stop;
  Clock::time_point deadline = Clock::time_point::max();
  int max_retries = 3;                         // rate-limit retries per request
  std::chrono::milliseconds max_wait{30'000};  // the longest single wait talaria accepts
};

struct Reply {
  int status = 0;
  net::HeaderList headers;
  std::string body;
  Json json;  // null when the body is not JSON
  std::string Header(std::string_view name) const;
};

// The wait a rate-limit reply asks for; nullopt when `reply` is not a rate limit.
using RateLimitReader = std::optional<std::chrono::milliseconds> (*)(const Reply& reply);

// HTTP 429 with the Retry-After header's seconds (1 s when absent or unreadable).
std::optional<std::chrono::milliseconds> RetryAfterHeader(const Reply& reply);

// Sends `request` (any status comes back as a Reply) and retries it after the wait a rate-limit
// reply asks for. Errors: the transport's (naming `platform`); Unavailable when the platform is
// still rate-limiting after max_retries, or asks for a wait longer than max_wait or past the
// deadline (the message says how long it asked); Cancelled while waiting.
Result<Reply> Exchange(std::string_view platform, net::HttpRequest request,
                       RateLimitReader rate_limit, const CallLimits& limits);

// "<platform> answered HTTP <status>: <start of body>" as Unavailable.
Status Rejected(std::string_view platform, const Reply& reply, std::string_view detail = "");

}  // namespace talaria::messaging
