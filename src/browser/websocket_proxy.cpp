// websocket_proxy.h: the environment's proxy for a CDP WebSocket.
#include "browser/websocket_proxy.h"

#include <cstdlib>

#include "talaria/base/ascii.h"
#include "talaria/base/base64.h"

namespace talaria::browser {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

const char* FirstSet(std::initializer_list<const char*> names) {
  for (const char* name : names) {
    const char* value = std::getenv(name);
    if (value != nullptr && *value != '\0') return value;
  }
  return nullptr;
}

// Percent-decoding for the user and password of a proxy URL.
std::string Unescape(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size()) {
      const std::string hex(s.substr(i + 1, 2));
      char* end = nullptr;
      const long v = std::strtol(hex.c_str(), &end, 16);
      if (end == hex.c_str() + 2) {
        out.push_back(static_cast<char>(v));
        i += 2;
        continue;
      }
    }
    out.push_back(s[i]);
  }
  return out;
}

Result<WebSocketProxy> ParseProxy(std::string_view url) {
  url = Trim(url);
  if (const size_t sep = url.find("://"); sep != std::string_view::npos) {
    if (!EqualsIgnoringAsciiCase(url.substr(0, sep), "http")) {
      return Err(InvalidArgumentError("proxy " + std::string(url.substr(0, sep)) +
                                      "://: only http:// proxies carry a CDP WebSocket"));
    }
    url.remove_prefix(sep + 3);
  }
  url = url.substr(0, url.find_first_of("/?#"));
  WebSocketProxy proxy;
  if (const size_t at = url.rfind('@'); at != std::string_view::npos) {
    const std::string_view userinfo = url.substr(0, at);
    const size_t colon = userinfo.find(':');
    const std::string user = Unescape(userinfo.substr(0, colon));
    const std::string password =
        colon == std::string_view::npos ? "" : Unescape(userinfo.substr(colon + 1));
    proxy.authorization = "Basic " + Base64Encode(user + ":" + password);
    url.remove_prefix(at + 1);
  }
  std::string_view host = url;
  std::string_view port;
  if (!url.empty() && url.front() == '[') {
    const size_t close = url.find(']');
    if (close == std::string_view::npos) return Err(InvalidArgumentError("proxy: bad IPv6 host"));
    host = url.substr(1, close - 1);
    if (close + 1 < url.size()) {
      if (url[close + 1] != ':') return Err(InvalidArgumentError("proxy: bad port"));
      port = url.substr(close + 2);
    }
  } else if (const size_t colon = url.rfind(':'); colon != std::string_view::npos) {
    host = url.substr(0, colon);
    port = url.substr(colon + 1);
  }
  if (host.empty()) return Err(InvalidArgumentError("proxy: no host"));
  for (char c : host) {
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) {
      return Err(InvalidArgumentError("proxy: bad host"));
    }
  }
  if (port.empty()) port = "1080";
  if (port.size() > 5 || port.find_first_not_of("0123456789") != std::string_view::npos ||
      std::atoi(std::string(port).c_str()) == 0 || std::atoi(std::string(port).c_str()) > 65535) {
    return Err(InvalidArgumentError("proxy: bad port"));
  }
  proxy.host = std::string(host);
  proxy.port = std::string(port);
  const bool v6 = proxy.host.find(':') != std::string::npos;
  proxy.where = (v6 ? "[" + proxy.host + "]" : proxy.host) + ":" + proxy.port;
  return proxy;
}

}  // namespace

bool NoProxyCovers(std::string_view no_proxy, std::string_view host) {
  while (!host.empty() && host.back() == '.') host.remove_suffix(1);
  while (!no_proxy.empty()) {
    const size_t comma = no_proxy.find(',');
    std::string_view entry = Trim(no_proxy.substr(0, comma));
    no_proxy = comma == std::string_view::npos ? "" : no_proxy.substr(comma + 1);
    if (entry == "*") return true;
    if (!entry.empty() && entry.front() == '[' && entry.back() == ']') {
      entry = entry.substr(1, entry.size() - 2);
    }
    while (!entry.empty() && entry.front() == '.') entry.remove_prefix(1);
    while (!entry.empty() && entry.back() == '.') entry.remove_suffix(1);
    if (entry.empty() || entry.size() > host.size()) continue;
    const std::string_view tail = host.substr(host.size() - entry.size());
    if (!EqualsIgnoringAsciiCase(tail, entry)) continue;
    if (tail.size() == host.size() || host[host.size() - entry.size() - 1] == '.') return true;
  }
  return false;
}

Result<std::optional<WebSocketProxy>> WebSocketProxyFor(bool tls, std::string_view host) {
  const char* url = tls ? FirstSet({"https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"})
                        : FirstSet({"http_proxy", "all_proxy", "ALL_PROXY"});
  if (url == nullptr) return std::nullopt;
  if (const char* no = FirstSet({"no_proxy", "NO_PROXY"});
      no != nullptr && NoProxyCovers(no, host)) {
    return std::nullopt;
  }
  auto proxy = ParseProxy(url);
  if (!proxy) return Err(proxy.error());
  return std::optional<WebSocketProxy>(std::move(*proxy));
}

}  // namespace talaria::browser
