// IP literals in every spelling a resolver or browser accepts (network_guard.h): the guard must
// read "2130706433", "0x7f.1" and "[::ffff:7f00:1]" as the loopback address they reach.
#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "talaria/web/network_guard.h"

namespace talaria::web {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsHex(char c) { return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// One part of an inet_aton-style IPv4 literal: decimal, 0x hex or 0-prefixed octal. nullopt on
// a bad digit or a value past 32 bits.
std::optional<uint64_t> ParsePart(std::string_view s) {
  if (s.empty()) return std::nullopt;
  int base = 10;
  if (s.size() >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    s.remove_prefix(2);
    if (s.empty()) return uint64_t{0};  // "0x" reads as 0, as browsers do
  } else if (s.size() >= 2 && s[0] == '0') {
    base = 8;
    s.remove_prefix(1);
  }
  uint64_t v = 0;
  for (char c : s) {
    int d = 0;
    if (IsDigit(c)) {
      d = c - '0';
    } else if (base == 16 && IsHex(c)) {
      d = (c | 0x20) - 'a' + 10;
    } else {
      return std::nullopt;
    }
    if (d >= base) return std::nullopt;
    v = v * static_cast<uint64_t>(base) + static_cast<uint64_t>(d);
    if (v > 0xFFFFFFFFULL) return std::nullopt;
  }
  return v;
}

std::optional<IpAddress> ParseV4(std::string_view host) {
  if (!host.empty() && host.back() == '.') host.remove_suffix(1);
  if (host.empty()) return std::nullopt;
  uint64_t parts[4] = {0, 0, 0, 0};
  size_t n = 0;
  size_t start = 0;
  while (true) {
    const size_t dot = host.find('.', start);
    const std::string_view part =
        host.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (n == 4) return std::nullopt;
    const std::optional<uint64_t> v = ParsePart(part);
    if (!v) return std::nullopt;
    parts[n++] = *v;
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  // Every part but the last is one byte; the last fills the bytes left (a.b.c.d, a.b.c16,
  // a.b24, a32).
  uint32_t value = 0;
  for (size_t i = 0; i + 1 < n; ++i) {
    if (parts[i] > 0xFF) return std::nullopt;
    value |= static_cast<uint32_t>(parts[i]) << (24 - 8 * i);
  }
  const unsigned last_bits = 32 - 8 * static_cast<unsigned>(n - 1);
  if (last_bits < 32 && parts[n - 1] >= (uint64_t{1} << last_bits)) return std::nullopt;
  value |= static_cast<uint32_t>(parts[n - 1]);
  return IpAddress::V4(value);
}

std::optional<IpAddress> ParseV6(std::string_view host) {
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (host.find(':') == std::string_view::npos) return std::nullopt;
  const size_t zone = host.find('%');
  if (zone != std::string_view::npos) host = host.substr(0, zone);
  if (host.size() >= INET6_ADDRSTRLEN) return std::nullopt;
  const std::string text(host);
  IpAddress a;
  a.v6 = true;
  if (inet_pton(AF_INET6, text.c_str(), a.bytes.data()) != 1) return std::nullopt;
  return a;
}

}  // namespace

IpAddress IpAddress::V4(uint32_t host_order) {
  IpAddress a;
  a.bytes[0] = static_cast<uint8_t>(host_order >> 24);
  a.bytes[1] = static_cast<uint8_t>(host_order >> 16);
  a.bytes[2] = static_cast<uint8_t>(host_order >> 8);
  a.bytes[3] = static_cast<uint8_t>(host_order);
  return a;
}

uint32_t IpAddress::v4() const {
  return (uint32_t{bytes[0]} << 24) | (uint32_t{bytes[1]} << 16) | (uint32_t{bytes[2]} << 8) |
         uint32_t{bytes[3]};
}

std::string IpAddress::ToString() const {
  char buf[INET6_ADDRSTRLEN] = {0};
  inet_ntop(v6 ? AF_INET6 : AF_INET, bytes.data(), buf, sizeof(buf));
  return buf;
}

std::optional<IpAddress> ParseIpLiteral(std::string_view host) {
  if (host.find(':') != std::string_view::npos) return ParseV6(host);
  return ParseV4(host);
}

bool IsAmbiguousNumericHost(std::string_view host) {
  if (!host.empty() && host.back() == '.') host.remove_suffix(1);
  const size_t dot = host.rfind('.');
  const std::string_view last = dot == std::string_view::npos ? host : host.substr(dot + 1);
  if (last.empty() || !IsDigit(last.front())) return false;
  return !ParseV4(host).has_value();
}

}  // namespace talaria::web
