// A memory file as entries: splitting on "\n§\n", joining back, counting characters the way the
// limits do (code points, as the original's len()), and the drift check that tells a file a
// rewrite would silently change from one it can safely rewrite.
// Thread-safety: free functions, no shared state.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace talaria::memory {

// The entries of `raw`: split on the delimiter, each trimmed, empty ones dropped.
std::vector<std::string> SplitEntries(std::string_view raw);
std::string JoinEntries(const std::vector<std::string>& entries);

// Code points of UTF-8 text (bytes that do not continue a sequence).
size_t CountChars(std::string_view text);
// The characters of the entries once joined: what the limit is checked against.
size_t JoinedChars(const std::vector<std::string>& entries);

// Why rewriting `raw` would change what the person wrote — not valid UTF-8, a NUL byte, empty
// entries or blank lines around a separator (it does not round-trip through split and join), an
// entry over `limit` — or "" when it is safe.
std::string DriftReason(std::string_view raw, size_t limit);

// "P% — cur/limit chars" (success results, the snapshot header) and "cur/limit" (refusals).
std::string UsageText(size_t chars, size_t limit);
std::string UsageShort(size_t chars, size_t limit);

// The first `max_chars` characters of `entry` (whole code points), "..." when cut.
std::string Preview(std::string_view entry, size_t max_chars = 80);

}  // namespace talaria::memory
