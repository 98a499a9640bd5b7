// Small string helpers every module needs: trimming, blank checks, joining. ASCII only: bytes
// outside the given set are content, whatever the locale.
// Thread-safety: free functions, no shared state.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace talaria {

inline constexpr std::string_view kAsciiSpace = " \t\r\n\f\v";  // isspace() in the C locale
inline constexpr std::string_view kJsonSpace = " \t\r\n";       // RFC 8259 whitespace
inline constexpr std::string_view kLineSpace = " \t";           // inside one line (HTTP OWS)

// `s` without leading and trailing bytes of `chars`.
inline std::string_view Trim(std::string_view s, std::string_view chars = kAsciiSpace) {
  const size_t b = s.find_first_not_of(chars);
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(chars) - b + 1);
}

// Whether `s` holds nothing but bytes of `chars`.
inline bool IsBlank(std::string_view s, std::string_view chars = kAsciiSpace) {
  return s.find_first_not_of(chars) == std::string_view::npos;
}

// The value of a hexadecimal digit, -1 for any other byte.
inline int HexDigitValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The items with `separator` between them.
inline std::string Join(std::span<const std::string> items, std::string_view separator) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += separator;
    out += items[i];
  }
  return out;
}

}  // namespace talaria
