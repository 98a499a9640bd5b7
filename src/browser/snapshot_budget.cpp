// FitSnapshot (snapshot_budget.h).
#include "browser/snapshot_budget.h"

#include <filesystem>

#include "talaria/base/file_io.h"
#include "talaria/base/paths.h"
#include "talaria/base/sha256.h"

namespace talaria::browser {
namespace {

// Room kept for the closing line (the original keeps 80 characters; the path needs more).
constexpr size_t kTailRoom = 200;

std::string Store(std::string_view snapshot) {
  const std::string dir = TalariaHome() + "/cache/browser";
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  std::string path = dir + "/snapshot-" + Sha256Hex(snapshot).substr(0, 16) + ".txt";
  if (!WriteFileAtomic(path, snapshot, {.mode = 0600, .sync = false}).ok()) return "";
  return path;
}

}  // namespace

BudgetedSnapshot FitSnapshot(std::string_view snapshot, int64_t budget) {
  BudgetedSnapshot out;
  const size_t limit = budget > 0 ? static_cast<size_t>(budget) : 0;
  if (snapshot.size() <= limit) {
    out.text = std::string(snapshot);
    return out;
  }
  const size_t room = limit > kTailRoom ? limit - kTailRoom : limit / 2;
  size_t cut = snapshot.rfind('\n', room);
  if (cut == std::string_view::npos) cut = 0;
  // Lines after the cut: each newline from the cut on starts one (a trailing newline does not).
  size_t left = cut == 0 ? 1 : 0;
  for (size_t i = cut; i < snapshot.size(); ++i) left += snapshot[i] == '\n' ? 1 : 0;
  if (snapshot.back() == '\n') --left;
  out.truncated = true;
  out.full_path = Store(snapshot);
  out.text = std::string(snapshot.substr(0, cut));
  out.text += "\n[... " + std::to_string(left) + " more lines truncated";
  if (!out.full_path.empty()) out.text += "; the whole snapshot: read_file " + out.full_path;
  out.text += "; or browser_snapshot with scope]";
  return out;
}

}  // namespace talaria::browser
