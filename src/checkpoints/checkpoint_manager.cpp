#include "talaria/checkpoints/checkpoint_manager.h"

#include <sys/stat.h>

#include <array>

#include "talaria/base/log.h"

namespace talaria::checkpoints {
namespace {

constexpr std::array<std::string_view, 14> kProjectMarkers = {
    ".git",          "pyproject.toml", "setup.py", "package.json", "Cargo.toml", "go.mod",
    "Makefile",      "CMakeLists.txt", "pom.xml",  "build.gradle", "Gemfile",    ".hg",
    "composer.json", "mix.exs"};

constexpr size_t kReasonCommandBytes = 200;

bool Exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

bool IsDir(std::string_view path) {
  struct stat st {};
  return ::stat(std::string(path).c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool IsWithin(std::string_view path, std::string_view dir) {
  if (dir.empty()) return false;
  if (dir == "/") return !path.empty() && path.front() == '/';
  return path == dir ||
         (path.size() > dir.size() && path.starts_with(dir) && path[dir.size()] == '/');
}

std::string Parent(std::string_view path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string_view::npos || slash == 0) return "/";
  return std::string(path.substr(0, slash));
}

}  // namespace

std::string ProjectDirFor(std::string_view path, std::string_view boundary) {
  std::string dir = IsDir(path) ? std::string(path) : Parent(path);
  const bool bounded = IsWithin(dir, boundary);
  for (std::string at = dir;; at = Parent(at)) {
    if (bounded && !IsWithin(at, boundary)) break;
    for (std::string_view marker : kProjectMarkers) {
      if (Exists(at + "/" + std::string(marker))) return at;
    }
    if (at == "/" || (bounded && at == boundary)) break;
  }
  return bounded ? std::string(boundary) : dir;
}

CheckpointManager::CheckpointManager(std::shared_ptr<CheckpointStore> store,
                                     std::vector<std::string> boundaries)
    : store_(std::move(store)), boundaries_(std::move(boundaries)) {}

std::string CheckpointManager::BoundaryOf(std::string_view path) const {
  for (const std::string& b : boundaries_) {
    if (IsWithin(path, b) && b != "/") return b;
  }
  return {};
}

void CheckpointManager::BeforeFileMutation(std::string_view path, std::string_view tool) {
  if (path.empty() || path.front() != '/') return;
  SnapshotOnce(ProjectDirFor(path, BoundaryOf(path)), "before " + std::string(tool));
}

void CheckpointManager::BeforeCommand(std::string_view command, std::string_view cwd) {
  if (cwd.empty() || cwd.front() != '/' || !IsDestructiveCommand(command)) return;
  std::string shown(command.substr(0, kReasonCommandBytes));
  if (command.size() > kReasonCommandBytes) shown += "...";
  SnapshotOnce(ProjectDirFor(cwd, BoundaryOf(cwd)), "before terminal: " + shown);
}

void CheckpointManager::NewTurn() {
  std::lock_guard lock(mu_);
  touched_.clear();
  turns_ = true;
}

std::vector<std::string> CheckpointManager::TouchedThisTurn() const {
  std::lock_guard lock(mu_);
  return {touched_.begin(), touched_.end()};
}

void CheckpointManager::SnapshotOnce(const std::string& dir, std::string_view reason) {
  // Held across the snapshot: a parallel call for the same directory must not mutate it while
  // the first call's snapshot is still reading it.
  std::lock_guard lock(mu_);
  if (!touched_.insert(dir).second && turns_) return;
  auto outcome = store_->Snapshot(dir, reason);
  if (!outcome) {
    // "/" and the home directory are refused by design: not worth a warning each turn.
    if (outcome.error().code() != StatusCode::kPermissionDenied) {
      LogWarn("checkpoints: no snapshot of " + dir + ": " + outcome.error().message());
    }
  } else if (outcome->kind == SnapshotKind::kSkipped) {
    LogWarn("checkpoints: no snapshot of " + dir + ": " + outcome->note);
  }
}

}  // namespace talaria::checkpoints
