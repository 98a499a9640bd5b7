// ParseHostPort and IsLoopbackHost (http_transport.h): plain text rules, in libtalaria itself so
// that checking an address never loads the HTTP module.
#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <string>

#include "talaria/base/ascii.h"
#include "talaria/mcp/http_transport.h"

namespace talaria::mcp {

Result<HostPort> ParseHostPort(std::string_view text) {
  HostPort out;
  std::string_view port_text;
  if (text.starts_with('[')) {
    const size_t close = text.find(']');
    if (close == std::string_view::npos || close == 1) {
      return Err(
          InvalidArgumentError("bad address \"" + std::string(text) + "\": expected [IPV6]:PORT"));
    }
    out.host = std::string(text.substr(1, close - 1));
    if (close + 1 >= text.size() || text[close + 1] != ':') {
      return Err(InvalidArgumentError("bad address \"" + std::string(text) + "\": missing :PORT"));
    }
    port_text = text.substr(close + 2);
  } else if (const size_t colon = text.rfind(':'); colon != std::string_view::npos) {
    if (text.find(':') != colon) {
      return Err(InvalidArgumentError("bad address \"" + std::string(text) +
                                      "\": put an IPv6 address in brackets, [::1]:PORT"));
    }
    out.host = colon == 0 ? "127.0.0.1" : std::string(text.substr(0, colon));
    port_text = text.substr(colon + 1);
  } else {
    out.host = "127.0.0.1";
    port_text = text;
  }
  const bool digits = !port_text.empty() && port_text.size() <= 5 &&
                      std::all_of(port_text.begin(), port_text.end(), [](char c) {
                        return std::isdigit(static_cast<unsigned char>(c)) != 0;
                      });
  const int port = digits ? std::stoi(std::string(port_text)) : -1;
  if (port < 0 || port > 65535) {
    return Err(InvalidArgumentError("bad address \"" + std::string(text) +
                                    "\": expected HOST:PORT with PORT 0-65535"));
  }
  out.port = port;
  return out;
}

bool IsLoopbackHost(std::string_view host) {
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  const std::string h = AsciiLower(host);
  if (h == "localhost") return true;
  in_addr v4{};
  if (::inet_pton(AF_INET, h.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  if (::inet_pton(AF_INET6, h.c_str(), &v6) == 1) return IN6_IS_ADDR_LOOPBACK(&v6);
  return false;
}

}  // namespace talaria::mcp
