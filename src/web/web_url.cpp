// ParseWebUrl and UrlCarriesSecret (network_guard.h): the syntax half of the guard. Anything a
// parser could read two ways (user info, backslashes, encoded hosts, numeric hosts that are not
// quite IPv4) is refused rather than guessed at; a non-ASCII host is judged as its IDNA ASCII
// form; the URL handed on is rebuilt from the parts judged.
#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>

#include "talaria/base/redact.h"
#include "talaria/base/uri.h"
#include "talaria/web/network_guard.h"
#include "web/idn.h"

namespace talaria::web {
namespace {

Status RefuseUrl(std::string_view what, std::string_view rule) {
  return PermissionDeniedError(std::string(kGuardRefusal) + std::string(what) +
                               " (rule: " + std::string(rule) + ")");
}

bool HostChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_';
}

}  // namespace

std::string WebUrl::origin() const {
  const bool bracket = ip && ip->v6;
  return scheme + "://" + (bracket ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

Result<WebUrl> ParseWebUrl(std::string_view url) {
  if (url.size() > 8192) return Err(InvalidArgumentError("URL longer than 8192 bytes"));
  for (char c : url) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u == 0x7F) {
      return Err(InvalidArgumentError("URL contains a space or control character"));
    }
  }
  const size_t sep = url.find("://");
  if (sep == std::string_view::npos || sep == 0) {
    return Err(InvalidArgumentError("not an absolute http(s) URL"));
  }
  WebUrl out;
  for (char c : url.substr(0, sep))
    out.scheme += static_cast<char>(c | (c >= 'A' && c <= 'Z' ? 0x20 : 0));
  if (out.scheme != "http" && out.scheme != "https") {
    return Err(RefuseUrl("scheme '" + out.scheme + "' is not http or https", "scheme"));
  }
  const std::string_view rest = url.substr(sep + 3);
  const size_t auth_end = rest.find_first_of("/?#");
  const std::string_view authority = rest.substr(0, auth_end);
  std::string_view tail = auth_end == std::string_view::npos ? "" : rest.substr(auth_end);
  if (authority.find('@') != std::string_view::npos) {
    return Err(RefuseUrl("user info in a URL is not followed", "userinfo"));
  }
  if (authority.find('\\') != std::string_view::npos) {
    return Err(RefuseUrl("a backslash in a URL's host is not followed", "userinfo"));
  }
  std::string_view host;
  std::string_view port;
  if (!authority.empty() && authority.front() == '[') {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos)
      return Err(InvalidArgumentError("unclosed '[' in URL host"));
    host = authority.substr(0, close + 1);
    const std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return Err(InvalidArgumentError("junk after the URL's IPv6 host"));
      port = after.substr(1);
    }
    if (host.find('%') != std::string_view::npos) {
      return Err(RefuseUrl("an IPv6 zone id in a URL is not followed", "zone-id"));
    }
  } else {
    const size_t colon = authority.rfind(':');
    host = authority.substr(0, colon);
    if (colon != std::string_view::npos) port = authority.substr(colon + 1);
  }
  out.port = out.scheme == "https" ? 443 : 80;
  if (!port.empty()) {
    if (port.size() > 5) return Err(InvalidArgumentError("URL port out of range"));
    int p = 0;
    for (char c : port) {
      if (c < '0' || c > '9') return Err(InvalidArgumentError("URL port is not a number"));
      p = p * 10 + (c - '0');
    }
    if (p < 1 || p > 65535) return Err(InvalidArgumentError("URL port out of range"));
    out.port = p;
  }
  if (host.empty()) return Err(InvalidArgumentError("URL has no host"));
  if (host.front() == '[') {
    out.ip = ParseIpLiteral(host);
    if (!out.ip || !out.ip->v6) return Err(InvalidArgumentError("URL host is not an IPv6 address"));
  } else {
    std::string ascii;
    if (std::any_of(host.begin(), host.end(),
                    [](char c) { return static_cast<unsigned char>(c) >= 0x80; })) {
      // Judged as the name it becomes: the mapping can turn fullwidth digits into an address.
      auto mapped = HostToAscii(host);
      if (!mapped) return Err(RefuseUrl(mapped.error().message(), "idn"));
      ascii = std::move(*mapped);
      host = ascii;
    }
    std::string lower;
    lower.reserve(host.size());
    for (char c : host) {
      if (c == '%') return Err(RefuseUrl("a percent-encoded host name", "encoded-host"));
      const char l = (c >= 'A' && c <= 'Z') ? static_cast<char>(c | 0x20) : c;
      if (!HostChar(l))
        return Err(InvalidArgumentError("URL host has a character hosts never have"));
      lower += l;
    }
    if (IsAmbiguousNumericHost(lower)) {
      return Err(
          RefuseUrl("numeric host '" + lower + "' is not a valid IPv4 address", "numeric-host"));
    }
    out.ip = ParseIpLiteral(lower);
    if (!out.ip) {
      if (lower.back() == '.') lower.pop_back();
      if (lower.empty() || lower.find("..") != std::string::npos || lower.front() == '.') {
        return Err(InvalidArgumentError("URL host is not a valid name"));
      }
      out.host = std::move(lower);
    }
  }
  out.host_is_ip = out.ip.has_value();
  if (out.ip) out.host = out.ip->ToString();
  const size_t hash = tail.find('#');
  if (hash != std::string_view::npos) tail = tail.substr(0, hash);
  const bool default_port = out.port == (out.scheme == "https" ? 443 : 80);
  out.normalized = out.scheme + "://" + (out.ip && out.ip->v6 ? "[" + out.host + "]" : out.host);
  if (!default_port) out.normalized += ":" + std::to_string(out.port);
  if (tail.empty() || tail.front() != '/') out.normalized += '/';
  out.normalized += tail;
  return out;
}

// Whether the secret redactor could match `text` at all: every key pattern it knows needs a run
// of at least 11 token characters ("eyJ" + 8 of a JWT part is the shortest), and every
// assignment pattern a secret-looking name. Most URLs have neither, and the redactor's dozen
// regular expressions are most of the guard's cost.
bool MightCarrySecret(std::string_view text) {
  size_t run = 0;
  for (char c : text) {
    const bool token = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                       c == '_' || c == '-';
    run = token ? run + 1 : 0;
    if (run >= 11) return true;
  }
  std::string lower(text);
  for (char& c : lower) c = (c >= 'A' && c <= 'Z') ? static_cast<char>(c | 0x20) : c;
  for (std::string_view word :
       {"key", "secret", "token", "passw", "credential", "authorization", "-----begin"}) {
    if (lower.find(word) != std::string::npos) return true;
  }
  return false;
}

bool UrlCarriesSecret(std::string_view url) {
  const auto carries = [](std::string_view text) {
    return MightCarrySecret(text) && ContainsSecret(text);
  };
  if (carries(url)) return true;
  if (url.find('%') == std::string_view::npos) return false;
  const std::string once = PercentDecode(url);
  if (once != url && carries(once)) return true;
  const std::string twice = PercentDecode(once);
  return twice != once && carries(twice);
}

}  // namespace talaria::web
