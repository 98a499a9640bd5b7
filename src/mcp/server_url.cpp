#include "mcp/server_url.h"

#include "talaria/base/ascii.h"

namespace talaria::mcp::client_internal {

Result<HttpServerUrl> ParseServerUrl(std::string_view url) {
  const size_t sep = url.find("://");
  if (sep == std::string_view::npos)
    return Err(InvalidArgumentError("'url' must start with http:// or https://"));
  const std::string scheme = AsciiLower(url.substr(0, sep));
  if (scheme != "http" && scheme != "https") {
    return Err(InvalidArgumentError("'url' must start with http:// or https://"));
  }
  std::string_view rest = url.substr(sep + 3);
  if (const size_t hash = rest.find('#'); hash != std::string_view::npos)
    rest = rest.substr(0, hash);
  const size_t path_at = rest.find_first_of("/?");
  std::string_view authority = rest.substr(0, path_at);
  HttpServerUrl out;
  if (const size_t at = authority.rfind('@'); at != std::string_view::npos) {
    const std::string_view userinfo = authority.substr(0, at);
    const size_t colon = userinfo.find(':');
    out.user = std::string(userinfo.substr(0, colon));
    if (colon != std::string_view::npos) out.password = std::string(userinfo.substr(colon + 1));
    authority.remove_prefix(at + 1);
  }
  if (authority.empty() || authority.front() == ':')
    return Err(InvalidArgumentError("'url' has no host"));
  if (authority.find_first_of(" \t\r\n") != std::string_view::npos) {
    return Err(InvalidArgumentError("'url' has a malformed host"));
  }
  out.origin = scheme + "://" + std::string(authority);
  out.target = path_at == std::string_view::npos ? "/" : std::string(rest.substr(path_at));
  if (out.target.front() == '?') out.target.insert(0, "/");
  return out;
}

std::string RedactUrl(std::string_view url) {
  std::string out;
  const size_t sep = url.find("://");
  size_t start = 0;
  if (sep != std::string_view::npos) {
    start = sep + 3;
    const size_t end = url.find_first_of("/?#", start);
    const std::string_view authority =
        url.substr(start, end == std::string_view::npos ? end : end - start);
    out.append(url.substr(0, start));
    if (const size_t at = authority.rfind('@'); at != std::string_view::npos) {
      out.append("[REDACTED]@");
      start += at + 1;
    }
  }
  std::string_view rest = url.substr(start);
  if (const size_t hash = rest.find('#'); hash != std::string_view::npos)
    rest = rest.substr(0, hash);
  const size_t q = rest.find('?');
  out.append(rest.substr(0, q));
  if (q == std::string_view::npos) return out;
  std::string_view query = rest.substr(q + 1);
  out.push_back('?');
  bool first = true;
  while (!query.empty() || first) {
    const size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    if (!first) out.push_back('&');
    first = false;
    const size_t eq = pair.find('=');
    out.append(pair.substr(0, eq));
    if (eq != std::string_view::npos) out.append("=[REDACTED]");
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return out;
}

}  // namespace talaria::mcp::client_internal
