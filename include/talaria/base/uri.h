// URI helpers shared by the schema validator ($ref fragments), MCP (client roots) and the HTTP
// clients that put text into paths, queries and forms.
// Thread-safety: pure functions; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace talaria {

// RFC 3986 percent-decoding; a '%' not followed by two hex digits stays as it is.
std::string PercentDecode(std::string_view s);

// RFC 3986 percent-encoding of every byte but the unreserved ones (ASCII letters, digits,
// "-._~"), upper-case hex: safe as a path segment, a query value or a form value.
std::string PercentEncode(std::string_view s);

// The local absolute path of a file:// URI ("file:///a%20b" and "file://localhost/a%20b" give
// "/a b"); nullopt for another scheme, another host, a relative path, a query or fragment, or a
// NUL byte.
std::optional<std::string> FileUriPath(std::string_view uri);

}  // namespace talaria
