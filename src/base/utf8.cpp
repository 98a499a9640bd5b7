#include "talaria/base/utf8.h"

#include "base/swar.h"

namespace talaria {

size_t Utf8SequenceLength(std::string_view text) {
  if (text.empty()) return 0;
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  const unsigned char c = s[0];
  if (c < 0x80) return 1;
  size_t len = 0;
  char32_t cp = 0;
  char32_t min = 0;
  if ((c & 0xE0) == 0xC0) {
    len = 2, cp = c & 0x1F, min = 0x80;
  } else if ((c & 0xF0) == 0xE0) {
    len = 3, cp = c & 0x0F, min = 0x800;
  } else if ((c & 0xF8) == 0xF0) {
    len = 4, cp = c & 0x07, min = 0x10000;
  }
  if (len == 0 || len > n) return 0;
  for (size_t k = 1; k < len; ++k) {
    if ((s[k] & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (s[k] & 0x3F);
  }
  // Overlong forms, UTF-16 surrogates and code points past U+10FFFF are all ill-formed.
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return len;
}

bool IsValidUtf8(std::string_view text, size_t* bad_offset) {
  size_t i = 0;
  while (i < text.size()) {
    i += swar::AsciiRun(text.data() + i, text.size() - i);
    if (i == text.size()) break;
    const size_t len = Utf8SequenceLength(text.substr(i));
    if (len == 0) {
      if (bad_offset != nullptr) *bad_offset = i;
      return false;
    }
    i += len;
  }
  return true;
}

}  // namespace talaria
