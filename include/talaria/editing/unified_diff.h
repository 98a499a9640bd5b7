// Line diffs for the file tools: a minimal edit script (Myers' O(ND) algorithm in linear space)
// and the unified-diff text (`--- a/p`, `+++ b/p`, `@@ -l,n +l,n @@`, 3 lines of context) that
// write/patch results show the model.
// Thread-safety: free functions, no shared state.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace talaria::editing {

// One run of a minimal edit script turning sequence A into sequence B. Runs are maximal (two
// neighbours never share a kind, except a delete followed by an insert) and cover both
// sequences in order: [a_begin, a_end) of A and [b_begin, b_end) of B.
struct DiffRun {
  enum class Kind : unsigned char { kEqual, kDelete, kInsert };
  Kind kind = Kind::kEqual;
  size_t a_begin = 0;
  size_t a_end = 0;
  size_t b_begin = 0;
  size_t b_end = 0;
};

// A shortest edit script between `a` and `b` (elements compared by value). Deletions come before
// insertions where both happen at one place.
std::vector<DiffRun> DiffSequences(std::span<const uint32_t> a, std::span<const uint32_t> b);

// Splits `text` into lines that keep their terminator ("\n", so "\r\n" stays whole); a last line
// without one is kept as is. Empty text has no lines.
std::vector<std::string_view> SplitLinesKeepEnds(std::string_view text);

// A unified diff of `old_text` -> `new_text`: "--- <from_label>\n+++ <to_label>\n" then hunks with
// `context` lines of context. A line lacking a final newline is followed by
// "\ No newline at end of file". Returns "" when the texts are equal.
// Labels are used verbatim, e.g. "a/src/x.cc", "b/src/x.cc" or "/dev/null".
std::string UnifiedDiff(std::string_view old_text, std::string_view new_text,
                        std::string_view from_label, std::string_view to_label, int context = 3);

// UnifiedDiff with the git-style labels "a/<path>" and "b/<path>".
std::string UnifiedFileDiff(std::string_view path, std::string_view old_text,
                            std::string_view new_text);

}  // namespace talaria::editing
