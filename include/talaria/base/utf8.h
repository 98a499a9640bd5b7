// UTF-8: encoding one code point, checking well-formedness.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace talaria {

// Appends `cp` as UTF-8; values past U+10FFFF become U+FFFD.
inline void AppendUtf8(std::string& out, char32_t cp) {
  if (cp > 0x10FFFF) cp = 0xFFFD;
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// True when `text` is well-formed UTF-8 (no overlongs, surrogates or code points past
// U+10FFFF). `bad_offset` receives the first bad byte's offset when false.
bool IsValidUtf8(std::string_view text, size_t* bad_offset = nullptr);

// The length (1 to 4) of the well-formed UTF-8 sequence `text` starts with, as IsValidUtf8
// judges it; 0 when it starts with an ill-formed or cut-off one, or is empty.
size_t Utf8SequenceLength(std::string_view text);

}  // namespace talaria
