// What the search and extract backends share: their environment, one JSON exchange with a
// service (errors name the backend, the HTTP status and the start of its answer) and readers
// of the loosely typed answers.
// Thread-safety: free functions; thread-safe.
#pragma once

#include <stop_token>
#include <string>
#include <string_view>

#include "talaria/base/json.h"
#include "talaria/base/status.h"
#include "talaria/net/http_client.h"

namespace talaria::web::backend {

std::string Env(const char* name);
// $var without trailing slashes, else `fallback`.
std::string Base(const char* var, std::string_view fallback);
// Sends `req` (JSON in and out, at most 8 MB back). Unavailable "<what> answered HTTP 401: ..."
// for a status outside 2xx or a body that is not JSON.
Result<Json> Exchange(std::string_view what, net::HttpRequest req, const std::stop_token& stop);

// Where Firecrawl requests go: FIRECRAWL_API_URL (default https://api.firecrawl.dev) with
// FIRECRAWL_API_KEY as Bearer, or the managed tool gateway with the user's token when neither
// is set (or FIRECRAWL_USE_GATEWAY=1 or config's web.use_gateway, and the gateway is usable; a
// direct key is never dropped for a gateway that is not). Errors: the gateway's, when there is no
// direct configuration.
struct Endpoint {
  std::string origin;
  net::HeaderList headers;
};
bool FirecrawlConfigured();
// The keyed services: their API key is set in the environment.
bool TavilyConfigured();
bool ExaConfigured();
bool ParallelConfigured();
Result<Endpoint> FirecrawlEndpoint(const std::stop_token& stop);

std::string Str(const Json& object, std::string_view key);    // "" when absent
const Json* Array(const Json& object, std::string_view key);  // null when absent
std::string JoinStrings(const Json* array);                   // the strings, joined with " ... "

}  // namespace talaria::web::backend
