// What the cloud providers and the Camofox driver share: one JSON exchange over talaria's
// HttpClient that keeps the HTTP status (Browserbase's 402 rules, Camofox's 404s need it), the
// error a status becomes, and checks of what a provider hands back (ids that go into paths,
// CDP URLs).
// Thread-safety: free functions; thread-safe.
#pragma once

#include <chrono>
#include <stop_token>
#include <string>
#include <string_view>

// Answer holds a Json by value: the complete type, not json_fwd.hpp.
#include <nlohmann/json.hpp>

#include "talaria/base/json.h"
#include "talaria/base/status.h"
#include "talaria/net/http_client.h"

namespace talaria::browser::rest {

struct Answer {
  int status = 0;
  net::HeaderList headers;
  std::string raw;  // the body as received (at most 32 MB)
  Json json;        // the body parsed; null when empty or not JSON
  bool ok() const { return status >= 200 && status <= 299; }
};

struct Call {
  std::string method = "GET";
  std::string url;
  net::HeaderList headers;
  const Json* body = nullptr;  // sent as application/json when set
  std::chrono::milliseconds timeout{30'000};
};

// Sends `call` and returns the answer whatever its status. Errors (the transport's, with
// `who` in front): Unavailable, DeadlineExceeded, Cancelled, InvalidArgument.
Result<Answer> Exchange(std::string_view who, const Call& call, std::stop_token stop);

// The error an answer outside 2xx becomes: "<who>: <what> answered HTTP 402: <the service's
// message>" with PermissionDenied (401, 403), ResourceExhausted (402, 429), NotFound (404),
// InvalidArgument (400, 422) or Unavailable (the rest). Secrets in the message are redacted.
Status StatusError(std::string_view who, std::string_view what, const Answer& answer);

// The first string field of `keys` in `object` (or in its "data" object), or "".
std::string StringField(const Json& object, std::initializer_list<std::string_view> keys);

// An id a provider handed out, checked before it becomes part of a path: 1 to 200 of
// [A-Za-z0-9._-], not "." or "..". InvalidArgument otherwise.
Status CheckId(std::string_view who, std::string_view id);

// A CDP URL a provider handed out: ws:// or wss://. InvalidArgument otherwise.
Status CheckCdpUrl(std::string_view who, std::string_view url);

}  // namespace talaria::browser::rest
