// Text helpers shared by the linters: the UTF-8/NUL pre-check, byte-to-character columns and
// message cleaning.
#include <cstdint>
#include <cstdio>
#include <string>

#include "lint/linters.h"

namespace talaria::lint_internal {
namespace {

// Length of the well-formed UTF-8 sequence at text[i] (RFC 3629: no overlongs, no surrogates,
// nothing above U+10FFFF), or 0 when it is malformed or truncated.
size_t Utf8SequenceLength(std::string_view text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char c = byte(i);
  if (c < 0x80) return 1;
  size_t len = 0;
  unsigned char lo = 0x80;
  unsigned char hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + len > text.size()) return 0;
  const unsigned char second = byte(i + 1);
  if (second < lo || second > hi) return 0;
  for (size_t k = 2; k < len; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
  }
  return len;
}

std::string HexByte(unsigned char c) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%02X", c);
  return buf;
}

}  // namespace

std::vector<LintIssue> CheckEncoding(std::string_view content, bool check_utf8) {
  int line = 1;
  int column = 1;  // in characters
  for (size_t i = 0; i < content.size();) {
    const auto c = static_cast<unsigned char>(content[i]);
    if (c == '\n') {
      ++line;
      column = 1;
      ++i;
      continue;
    }
    if (c == 0) {
      return {LintIssue{line, column, "NUL byte (0x00) is not allowed in text",
                        "UnicodeDecodeError", LintIssue::Category::kSyntax}};
    }
    size_t len = 1;
    if (c >= 0x80 && check_utf8) {
      len = Utf8SequenceLength(content, i);
      if (len == 0) {
        return {LintIssue{line, column, "invalid UTF-8 byte " + HexByte(c), "UnicodeDecodeError",
                          LintIssue::Category::kSyntax}};
      }
    } else if (c >= 0x80) {
      // Without validation, count lead bytes only so columns stay in characters.
      len = 1;
      if ((c & 0xC0) == 0x80) {
        ++i;
        continue;
      }
    }
    ++column;
    i += len;
  }
  return {};
}

int CharColumn(std::string_view content, int line, int byte_offset_in_line) {
  if (line < 1 || byte_offset_in_line < 0) return 0;
  size_t start = 0;
  for (int l = 1; l < line; ++l) {
    const size_t nl = content.find('\n', start);
    if (nl == std::string_view::npos) return byte_offset_in_line + 1;
    start = nl + 1;
  }
  size_t end = content.find('\n', start);
  if (end == std::string_view::npos) end = content.size();
  const size_t want = start + static_cast<size_t>(byte_offset_in_line);
  int column = 1;
  size_t i = start;
  for (; i < want && i < end; ++i) {
    if ((static_cast<unsigned char>(content[i]) & 0xC0) != 0x80) ++column;
  }
  // Positions past the end of the line (end of input) count one column per byte.
  if (want > i) column += static_cast<int>(want - i);
  return column;
}

std::string CleanMessage(std::string_view text, size_t max_bytes) {
  std::string out;
  out.reserve(std::min(text.size(), max_bytes) + 8);
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    std::string piece;
    size_t len = 1;
    if (c == '\n') {
      piece = "\\n";
    } else if (c == '\t') {
      piece = "\\t";
    } else if (c < 0x20 || c == 0x7F) {
      piece = "\\x" + HexByte(c).substr(2);
    } else if (c < 0x80) {
      piece.assign(1, static_cast<char>(c));
    } else {
      len = Utf8SequenceLength(text, i);
      if (len == 0) {
        len = 1;
        piece = "\\x" + HexByte(c).substr(2);
      } else {
        piece.assign(text.substr(i, len));
      }
    }
    if (out.size() + piece.size() > max_bytes) {
      out += "...";
      return out;
    }
    out += piece;
    i += len;
  }
  return out;
}

}  // namespace talaria::lint_internal
