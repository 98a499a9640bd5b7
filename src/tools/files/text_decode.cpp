#include "tools/files/text_decode.h"

#include <array>
#include <cstdio>

#include "talaria/base/utf8.h"

namespace talaria::tools {
namespace {

struct Magic {
  std::string_view prefix;
  std::string_view kind;
};

constexpr std::array<Magic, 14> kMagics = {{
    {"\x89PNG\r\n\x1a\n", "PNG image data"},
    {"\xFF\xD8\xFF", "JPEG image data"},
    {"GIF87a", "GIF image data"},
    {"GIF89a", "GIF image data"},
    {"%PDF-", "PDF document"},
    {"PK\x03\x04", "Zip archive data"},
    {"\x7F"
     "ELF",
     "ELF executable"},
    {"\x1F\x8B", "gzip compressed data"},
    {"BZh", "bzip2 compressed data"},
    {"\xFD"
     "7zXZ",
     "XZ compressed data"},
    {"7z\xBC\xAF\x27\x1C", "7-zip archive data"},
    {"SQLite format 3", "SQLite database"},
    {std::string_view("\0asm", 4), "WebAssembly binary"},  // a literal would stop at the NUL
    {"RIFF", "RIFF data (audio/video)"},
}};

bool ValidUtf8Prefix(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (len == 0) return false;
    if (i + len > s.size()) return true;  // cut at the end of the sample: fine
    for (size_t k = 1; k < len; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    }
    i += len;
  }
  return true;
}

}  // namespace

TextEncoding DetectEncoding(std::string_view head) {
  if (head.starts_with("\xEF\xBB\xBF")) return TextEncoding::kUtf8Bom;
  if (head.starts_with("\xFF\xFE")) return TextEncoding::kUtf16Le;
  if (head.starts_with("\xFE\xFF")) return TextEncoding::kUtf16Be;
  return TextEncoding::kUtf8;
}

std::optional<std::string> DescribeBinary(std::string_view head, TextEncoding encoding) {
  if (encoding == TextEncoding::kUtf16Le || encoding == TextEncoding::kUtf16Be) return std::nullopt;
  for (const Magic& m : kMagics) {
    if (head.starts_with(m.prefix)) return std::string(m.kind);
  }
  if (head.find('\0') != std::string_view::npos) return std::string("binary data");
  // Text that is not UTF-8 and is mostly control bytes is not worth showing either. Well-formed
  // UTF-8 (IsValidUtf8 skips ASCII a word at a time) is a valid prefix too: the byte-wise check
  // is only for a sample that is not.
  if (!IsValidUtf8(head) && !ValidUtf8Prefix(head)) {
    size_t control = 0;
    for (char ch : head) {
      const auto c = static_cast<unsigned char>(ch);
      if (c < 0x09 || (c > 0x0D && c < 0x20)) ++control;
    }
    if (control * 10 > head.size()) return std::string("binary data");
  }
  return std::nullopt;
}

std::string HumanBytes(size_t size) {
  char buf[32];
  if (size >= 1024 * 1024) {
    std::snprintf(buf, sizeof buf, "%.1f MB", static_cast<double>(size) / (1024.0 * 1024.0));
  } else if (size >= 1024) {
    std::snprintf(buf, sizeof buf, "%.1f KB", static_cast<double>(size) / 1024.0);
  } else {
    std::snprintf(buf, sizeof buf, "%zu bytes", size);
  }
  return buf;
}

std::string BinaryFileMessage(std::string_view kind, size_t size) {
  return "Binary file (" + std::string(kind) + ", " + HumanBytes(size) +
         ") \xE2\x80\x94 cannot display as text.";
}

std::string Utf16ToUtf8(std::string_view bytes, bool big_endian) {
  std::string out;
  out.reserve(bytes.size());
  auto unit = [&](size_t i) -> char16_t {
    const auto a = static_cast<unsigned char>(bytes[i]);
    const auto b = static_cast<unsigned char>(bytes[i + 1]);
    return static_cast<char16_t>(big_endian ? (a << 8) | b : (b << 8) | a);
  };
  for (size_t i = 0; i + 1 < bytes.size(); i += 2) {
    char16_t u = unit(i);
    if (u >= 0xD800 && u <= 0xDBFF && i + 3 < bytes.size()) {
      char16_t lo = unit(i + 2);
      if (lo >= 0xDC00 && lo <= 0xDFFF) {
        AppendUtf8(out, 0x10000 + ((static_cast<char32_t>(u) - 0xD800) << 10) + (lo - 0xDC00));
        i += 2;
        continue;
      }
    }
    AppendUtf8(out, (u >= 0xD800 && u <= 0xDFFF) ? char32_t{0xFFFD} : char32_t{u});
  }
  return out;
}

}  // namespace talaria::tools
