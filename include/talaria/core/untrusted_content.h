// Untrusted-content wrapping for tool results that carry text from outside (MCP servers; the
// web tools later): the model is told, in the result itself, that what follows is data and not
// instructions. As in the original (make_tool_result_message):
//   - text of at least kUntrustedWrapMinChars is wrapped in
//     <untrusted_tool_result source="..."> ... </untrusted_tool_result> after a "treat as data"
//     preamble; shorter text is returned as is (too short to carry an injection);
//   - every `untrusted_tool_result` inside the text (any case) becomes `untrusted-tool-result`,
//     so the content cannot close the wrapper early or forge a nested one. There is no
//     "already wrapped" shortcut: that would be forgeable;
//   - text of at least kElisionNoticeMinChars whose first 64 KB show that the source itself left
//     part of its data out ("... 12 more items", "has_more": true, data_preview) gets a notice,
//     inside the wrapper, so the model does not take the visible part for the whole.
// Thread-safety: free functions, no shared state.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace talaria {

inline constexpr size_t kUntrustedWrapMinChars = 32;
inline constexpr size_t kElisionNoticeMinChars = 1000;

// `source` names where the text came from (a tool name, a URL); quotes, angle brackets and
// control characters in it are replaced by '_'.
std::string WrapUntrusted(std::string_view text, std::string_view source);

// True when `text` shows an upstream elision marker in its first 64 KB (see above).
bool HasUpstreamElision(std::string_view text);

}  // namespace talaria
