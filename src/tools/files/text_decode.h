// Turning file bytes into text a model can read: byte-order marks, UTF-16, and binary files
// recognised (and named) instead of dumped.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace talaria::tools {

enum class TextEncoding : unsigned char { kUtf8, kUtf8Bom, kUtf16Le, kUtf16Be };

// From the first bytes of a file.
TextEncoding DetectEncoding(std::string_view head);

// What a binary file is ("PNG image data", "ELF executable", ... or "binary data"), or
// nullopt when `head` (the first few KB) looks like text in `encoding`.
std::optional<std::string> DescribeBinary(std::string_view head, TextEncoding encoding);

// "Binary file (PNG image data, 4.1 KB) — cannot display as text."
std::string BinaryFileMessage(std::string_view kind, size_t size);

// UTF-16 (without its BOM) to UTF-8; unpaired surrogates become U+FFFD.
std::string Utf16ToUtf8(std::string_view bytes, bool big_endian);

// "4.1 KB" / "2.0 MB" / "12 bytes".
std::string HumanBytes(size_t size);

}  // namespace talaria::tools
