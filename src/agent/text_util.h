// Small text helpers the loop's units share.
// Thread-safety: free functions, no shared state.
#pragma once

#include <cstddef>
#include <string_view>

namespace talaria::agent {

// The longest prefix of `text` of at most `max_bytes` that does not end inside a UTF-8 sequence.
inline std::string_view Utf8Prefix(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  size_t end = max_bytes;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return text.substr(0, end);
}

// The longest suffix of `text` of at most `max_bytes` that starts at a UTF-8 sequence.
inline std::string_view Utf8Suffix(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  size_t start = text.size() - max_bytes;
  while (start < text.size() && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) ++start;
  return text.substr(start);
}

}  // namespace talaria::agent
