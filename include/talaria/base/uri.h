// URI helpers shared by the schema validator ($ref fragments) and MCP (client roots).
// Thread-safety: pure functions; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace talaria {

// RFC 3986 percent-decoding; a '%' not followed by two hex digits stays as it is.
std::string PercentDecode(std::string_view s);

// The local absolute path of a file:// URI ("file:///a%20b" and "file://localhost/a%20b" give
// "/a b"); nullopt for another scheme, another host, a relative path, a query or fragment, or a
// NUL byte.
std::optional<std::string> FileUriPath(std::string_view uri);

}  // namespace talaria
