// Base64Encode and Base64Decode (base64.h).
#include "talaria/base/base64.h"

#include <array>
#include <cstdint>

namespace talaria {
namespace {

constexpr std::string_view kAlphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

constexpr std::array<int8_t, 256> Reverse() {
  std::array<int8_t, 256> r{};
  for (auto& v : r) v = -1;
  for (size_t i = 0; i < kAlphabet.size(); ++i) {
    r[static_cast<uint8_t>(kAlphabet[i])] = static_cast<int8_t>(i);
  }
  return r;
}
constexpr std::array<int8_t, 256> kReverse = Reverse();

bool IsSkippedSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

Status Malformed(std::string_view why, size_t at) {
  return InvalidArgumentError("not valid base64: " + std::string(why) + " at offset " +
                              std::to_string(at));
}

}  // namespace

std::string Base64Encode(std::string_view bytes) {
  // Written by index into a string sized once: appending a character at a time cost three
  // times as much on a 24 MiB input.
  std::string out((bytes.size() + 2) / 3 * 4, '=');
  char* o = out.data();
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const uint32_t v = (uint32_t{static_cast<uint8_t>(bytes[i])} << 16) |
                       (uint32_t{static_cast<uint8_t>(bytes[i + 1])} << 8) |
                       static_cast<uint8_t>(bytes[i + 2]);
    *o++ = kAlphabet[(v >> 18) & 63];
    *o++ = kAlphabet[(v >> 12) & 63];
    *o++ = kAlphabet[(v >> 6) & 63];
    *o++ = kAlphabet[v & 63];
  }
  if (i < bytes.size()) {
    uint32_t v = uint32_t{static_cast<uint8_t>(bytes[i])} << 16;
    if (i + 1 < bytes.size()) v |= uint32_t{static_cast<uint8_t>(bytes[i + 1])} << 8;
    *o++ = kAlphabet[(v >> 18) & 63];
    *o++ = kAlphabet[(v >> 12) & 63];
    if (i + 1 < bytes.size()) *o = kAlphabet[(v >> 6) & 63];  // else the '=' stays
  }
  return out;
}

Result<std::string> Base64Decode(std::string_view text, Base64Alphabet alphabet) {
  std::string out(text.size() / 4 * 3 + 3, '\0');
  size_t n = 0;  // bytes written
  uint32_t acc = 0;
  int bits = 0;
  size_t symbols = 0;  // alphabet characters seen
  size_t padding = 0;  // '=' seen
  for (size_t at = 0; at < text.size(); ++at) {
    const char c = text[at];
    int8_t v = kReverse[static_cast<uint8_t>(c)];
    if (v < 0) {
      if (IsSkippedSpace(c)) continue;
      if (c == '=') {
        if (++padding > 2) return Err(Malformed("more than two '='", at));
        continue;
      }
      if (alphabet == Base64Alphabet::kStandardOrUrlSafe && (c == '-' || c == '_')) {
        v = c == '-' ? 62 : 63;
      } else {
        return Err(Malformed("a character outside the alphabet", at));
      }
    }
    if (padding > 0) return Err(Malformed("data after the padding", at));
    ++symbols;
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[n++] = static_cast<char>((acc >> bits) & 0xff);
    }
  }
  if (symbols % 4 == 1) return Err(Malformed("a lone character in the last group", text.size()));
  if (padding > 0 && (symbols + padding) % 4 != 0) {
    return Err(Malformed("padding that does not complete the last group", text.size()));
  }
  out.resize(n);
  return out;
}

}  // namespace talaria
