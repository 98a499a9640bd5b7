// Relative references resolved against a base URL (RFC 3986 section 5.2, with the WHATWG URL
// standard's leniencies that pages rely on: tabs and newlines removed, backslashes as slashes
// in http(s) URLs).
// Thread-safety: free functions, no shared state.
#pragma once

#include <string>
#include <string_view>

namespace talaria::html {

// `reference` resolved against `base`. An absolute reference comes back cleaned; with an empty
// or relative base a relative reference comes back as it was (cleaned).
std::string ResolveUrl(std::string_view base, std::string_view reference);

// Whether a link to `url` is worth keeping in the markdown: not empty, not a bare fragment,
// not javascript:, not absurdly long.
bool IsUsefulLinkTarget(std::string_view url);

}  // namespace talaria::html
