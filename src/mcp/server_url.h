// An MCP server's http(s) URL as the client reads it from config: split for the HTTP
// connection, and redacted for messages. Plain text rules, in libtalaria itself, so a config is
// checked without loading the HTTP module.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "talaria/base/status.h"

namespace talaria::mcp::client_internal {

// An http(s) URL split for the HTTP client. userinfo becomes Basic credentials.
struct HttpServerUrl {
  std::string origin;  // "http://host:port" / "https://host" as httplib::Client takes it
  std::string target;  // path and query; "/" when empty
  std::string user;
  std::string password;
};
// InvalidArgument unless the scheme is http or https and a host is given.
Result<HttpServerUrl> ParseServerUrl(std::string_view url);
// `url` safe to show: userinfo and the query's values replaced by "[REDACTED]".
std::string RedactUrl(std::string_view url);

}  // namespace talaria::mcp::client_internal
