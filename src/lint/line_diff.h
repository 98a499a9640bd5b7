// Line-level diff used by the lint delta: where does each line of the old text sit in the new
// one? Common prefix and suffix are matched first (cheap and exact for the usual local edit),
// then Myers' O(ND) shortest edit script runs on the middle within a work budget; when the
// middle differs too much for the budget, its lines stay unmapped (treated as changed).
// Thread-safety: free functions, no shared state.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

#include "talaria/base/lines.h"

namespace talaria::lint_internal {

// For each 1-based line L of `old_text`, result[L] is the 1-based line of `new_text` holding the
// same unchanged line, or 0 when the edit changed or removed it. result[0] is always 0; the
// vector has (old line count + 1) entries. `max_work` bounds Myers' steps (~(N+M)·D).
std::vector<int> MapOldLinesToNew(std::string_view old_text, std::string_view new_text,
                                  size_t max_work = size_t{40} << 20);

}  // namespace talaria::lint_internal
