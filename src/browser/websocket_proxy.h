// Which proxy a CDP WebSocket goes through, from the environment as curl (and so the net
// module) reads it: wss:// uses https_proxy / HTTPS_PROXY, ws:// uses http_proxy (lowercase
// only, as curl: HTTP_PROXY may be set by a CGI request header), either falls back to
// all_proxy / ALL_PROXY; no_proxy / NO_PROXY lists hosts that go direct ("*" for all, a domain
// also covers its subdomains, a leading dot is ignored, an address matches itself). The
// connection is then tunnelled with HTTP CONNECT (ws/websocket_transport.cpp), TLS and the
// upgrade running inside the tunnel as they would directly.
// Thread-safety: reads the environment; no state.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "talaria/base/status.h"

namespace talaria::browser {

struct WebSocketProxy {
  std::string host;           // no brackets
  std::string port;           // explicit or 1080 (curl's default for a proxy without one)
  std::string authorization;  // "Basic <base64>" from user:password@ in the URL; "" without
  std::string where;          // host:port, for messages (never the credentials)
};

// nullopt: connect directly. InvalidArgument: a proxy variable names something we cannot use
// (a scheme other than http://, a bad port), rather than silently going direct.
Result<std::optional<WebSocketProxy>> WebSocketProxyFor(bool tls, std::string_view host);

// Whether `host` is exempted by a no_proxy value.
bool NoProxyCovers(std::string_view no_proxy, std::string_view host);

}  // namespace talaria::browser
