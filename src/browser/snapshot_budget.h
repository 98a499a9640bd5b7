// What the model sees of a snapshot: the whole text when it fits the budget, else the lines
// that fit (cut on a line boundary) and a closing line naming how many lines were left out and
// the file holding the whole snapshot for read_file ($TALARIA_HOME/cache/browser/).
// Thread-safety: thread-safe (distinct snapshots go to distinct files).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace talaria::browser {

struct BudgetedSnapshot {
  std::string text;
  bool truncated = false;
  std::string full_path;  // when truncated and stored
};

BudgetedSnapshot FitSnapshot(std::string_view snapshot, int64_t budget);

}  // namespace talaria::browser
