// One JSON exchange with a media service (FAL, OpenAI images, a vision endpoint) and the
// download of a generated image. Services are endpoints the user configured and are called
// directly; an image URL a service hands back is fetched through the network guard like any
// URL from outside.
// Thread-safety: free functions; thread-safe.
#pragma once

#include <chrono>
#include <stop_token>
#include <string>
#include <string_view>

// JsonAnswer holds a Json by value: the complete type, not json_fwd.hpp.
#include <nlohmann/json.hpp>

#include "talaria/base/json.h"
#include "talaria/base/status.h"
#include "talaria/net/http_client.h"

namespace talaria::media {

struct JsonAnswer {
  int status = 0;
  Json body;         // null when the body was not JSON
  std::string text;  // the body's first 300 bytes, for messages
};

// Sends `req` (JSON body when set; at most 16 MB back) and returns the status and parsed body
// whatever the status. Errors: those of HttpClient::Send with `what` as context.
Result<JsonAnswer> SendJson(std::string_view what, net::HttpRequest req,
                            const std::stop_token& stop);

// The service's own words for a failed answer: error.message, error, detail, message, or the
// start of the body.
std::string ServiceError(const JsonAnswer& answer);

// The bytes behind `url`: a data: URL is decoded; http(s) goes through the network guard
// (web.allow_private and web.ca_file from config.yaml) with a `max_bytes` cap.
// Errors: PermissionDenied from the guard, InvalidArgument (not a URL or data URL, bad base64),
// Unavailable (HTTP status outside 2xx), ResourceExhausted (over max_bytes), and the fetch's.
Result<std::string> FetchBytes(std::string_view url, size_t max_bytes, const std::stop_token& stop,
                               std::chrono::steady_clock::time_point deadline);

}  // namespace talaria::media
