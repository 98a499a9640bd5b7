// The memory tool's operations on a list of entries, with no files involved: the original's
// add / replace / remove semantics (substring matching of old_text, duplicates, ambiguity with
// previews, the budget) applied all or nothing.
// Thread-safety: free functions, no shared state.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <tl/expected.hpp>

#include "talaria/base/json.h"
#include "talaria/memory/memory_store.h"

namespace talaria::memory {

struct Applied {
  std::vector<std::string> entries;
  std::string message;
  bool changed = false;  // false: nothing to write (an exact duplicate)
};

enum class RefusalKind : unsigned char {
  kArguments,  // the call itself is wrong (no match, ambiguous, empty content, ...)
  kFull,       // the end result would be over the limit
  kThreat,     // content the threat scan refuses
};

struct Refusal {
  RefusalKind kind = RefusalKind::kArguments;
  std::string error;
  Json matches;               // null, or the previews of the entries an old_text matched
  bool show_entries = false;  // the result lists the current entries
};

// Checks what can be checked without the file: content present and clean for add/replace,
// old_text present for replace/remove, no entry separator inside content.
tl::expected<void, Refusal> ValidateOperations(const std::vector<Operation>& operations,
                                               bool batch);

// Applies `operations` in order to `entries`; the limit is checked on the end result (and on a
// lone replace). `label` names the store in messages ("Memory", "User profile").
tl::expected<Applied, Refusal> ApplyOperations(std::vector<std::string> entries,
                                               const std::vector<Operation>& operations,
                                               size_t limit, bool batch, std::string_view label);

}  // namespace talaria::memory
