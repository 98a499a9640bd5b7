// Tool-name repair: the name a model wrote, mapped onto one of the tools it was offered.
//
// Models (local ones above all) misspell tool names: `ReadFile`, `read-file`, `terminal_tool`,
// `patch"` with a leaked quote, `read_fil`. The original tried, in turn: cut at the first quote
// or angle bracket, lower-case, separators to '_', CamelCase to snake_case, a stripped "tool"
// suffix, then a fuzzy match. Here a fuzzy match is taken only when it is unique (no second
// candidate close to it): guessing between `read_file` and `write_file` would run the wrong tool.
// Thread-safety: free functions, no shared state.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace talaria::agent {

// Maps a spelling to the tool it names among those offered (aliases included), or "" when it
// names none. The loop passes the registry's alias resolution filtered by the session's tools.
using ToolNameLookup = std::function<std::string(std::string_view name)>;

// Similarity in [0, 1]: 2 * (longest common subsequence) / (|a| + |b|), the measure of the
// original's difflib match for short names.
double NameSimilarity(std::string_view a, std::string_view b);

inline constexpr double kFuzzyNameCutoff = 0.7;
// A fuzzy match must beat the runner-up by this much to count as unique.
inline constexpr double kFuzzyNameMargin = 0.1;

// The offered tool `name` means, or nullopt when no repair finds exactly one. `offered` is the
// list fuzzy matching draws from; `lookup` decides exact matches (and aliases).
std::optional<std::string> RepairToolName(std::string_view name,
                                          std::span<const std::string> offered,
                                          const ToolNameLookup& lookup);

// The result text a call of an unknown tool gets: the name, and the real tools.
std::string UnknownToolMessage(std::string_view name, std::span<const std::string> offered);

}  // namespace talaria::agent
