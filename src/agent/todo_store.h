// TodoStore: the session's task list behind the `todo` tool, with the original's semantics
// (reference b.1): replace or merge by id, statuses pending|in_progress|completed|cancelled,
// every call answers with the whole list and a summary. Kept per session in the session store
// (Snapshot/Restore) and re-injected after a compaction (FormatForInjection).
// Thread-safety: not thread-safe; the loop calls it from the turn's thread.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "talaria/base/json.h"

namespace talaria::agent {

inline constexpr size_t kMaxTodoContentChars = 4000;
inline constexpr size_t kMaxTodoItems = 256;

struct TodoItem {
  std::string id;
  std::string content;
  std::string status;  // pending | in_progress | completed | cancelled
  std::string parent;  // another item's id; empty: top level
};

class TodoStore {
 public:
  // A todo call's arguments: {"todos": [...], "merge": bool}; without "todos" it only reads.
  // Returns {"todos": [...], "summary": {...}} (plus "note" when more than one item is
  // in_progress).
  Json Apply(const Json& args);
  Json Result() const;

  // {"todos": [...]}: what the session store keeps; Restore accepts it (and ignores junk).
  Json Snapshot() const;
  void Restore(const Json& snapshot);

  // The pending and in_progress items for the model after a compaction; "" when none.
  std::string FormatForInjection() const;

  const std::vector<TodoItem>& items() const { return items_; }

 private:
  void Replace(const Json& todos);
  void Merge(const Json& todos);

  std::vector<TodoItem> items_;
};

}  // namespace talaria::agent
