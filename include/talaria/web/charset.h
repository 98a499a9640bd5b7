// Text of any declared encoding as UTF-8: the charset a web page is in is found the way a
// browser finds it (a byte order mark, then the Content-Type header's charset, then a <meta>
// in the first 1024 bytes of HTML), and converted with iconv.
// Thread-safety: pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "talaria/base/status.h"

namespace talaria::web {

// The charset `body` is in, lower case: from its BOM, the Content-Type value's `charset=`
// parameter, or (for HTML) a <meta charset> / <meta http-equiv> near the top; else "utf-8"
// when the bytes are valid UTF-8, else "windows-1252" (what browsers assume).
std::string DetectCharset(std::string_view body, std::string_view content_type, bool is_html);

// `body` in `charset` as UTF-8 (a BOM dropped; bytes that do not decode become U+FFFD).
// InvalidArgument when iconv does not know the charset.
Result<std::string> DecodeToUtf8(std::string_view body, std::string_view charset);

// The media type of a Content-Type value, lower case, without parameters ("text/html").
std::string MediaType(std::string_view content_type);

}  // namespace talaria::web
