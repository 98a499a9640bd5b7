// One JSON exchange with Home Assistant's REST API: `HASS_URL` (default
// http://homeassistant.local:8123) with `Authorization: Bearer $HASS_TOKEN` (a long-lived
// access token). HA is an endpoint the user configured, usually on the local network, so it is
// called directly, not through the web tools' network guard (as the web search backends are).
// Thread-safety: free functions; thread-safe (a new HTTP client per exchange).
#pragma once

#include <chrono>
#include <stop_token>
#include <string>
#include <string_view>

#include "talaria/base/json.h"
#include "talaria/base/status.h"

namespace talaria::homeassistant {

inline constexpr std::string_view kDefaultHassUrl = "http://homeassistant.local:8123";

struct HaEndpoint {
  std::string base;  // without a trailing slash
  std::string token;
};

// $HASS_URL (or the default) and $HASS_TOKEN, read at each call: a changed token takes effect
// without a restart.
HaEndpoint EndpointFromEnvironment();

struct HaAnswer {
  int status = 0;
  std::string body;  // at most 32 MB
};

// Sends one request (`body` as JSON when not empty) and returns whatever HA answered, any
// status. Errors: Unavailable (no connection, the connection dropped, the answer passed 32 MB),
// DeadlineExceeded (`timeout` for the whole exchange), Cancelled.
Result<HaAnswer> SendToHomeAssistant(const HaEndpoint& endpoint, std::string_view method,
                                     std::string_view path, std::string_view body,
                                     std::chrono::milliseconds timeout,
                                     const std::stop_token& stop);

// The answer's JSON when the status is 2xx. Unavailable "HTTP 401: <start of the body>"
// otherwise, InvalidArgument when a 2xx body is not JSON.
Result<Json> JsonOf(const HaAnswer& answer);

}  // namespace talaria::homeassistant
