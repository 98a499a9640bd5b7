#include "tools/files/file_tracker.h"

namespace talaria::tools {

uint64_t FileTracker::Cookie(const safety::FileInfo& info) {
  uint64_t h = static_cast<uint64_t>(info.mtime_ns);
  h = (h ^ info.size) * 0x9E3779B97F4A7C15ULL;
  return h ^ (static_cast<uint64_t>(info.ino) + (h << 6) + (h >> 2));
}

FileTracker::Task& FileTracker::TaskFor(std::string_view task) {
  auto it = tasks_.find(task);
  if (it == tasks_.end()) it = tasks_.emplace(std::string(task), Task{}).first;
  return it->second;
}

int FileTracker::Bump(Task& t, std::string_view key) {
  if (t.last_key == key) {
    ++t.streak;
  } else {
    t.last_key = std::string(key);
    t.streak = 1;
  }
  return t.streak;
}

FileTracker::ReadVerdict FileTracker::RecordRead(std::string_view task, std::string_view path,
                                                 std::string_view region, uint64_t cookie) {
  std::lock_guard lock(mu_);
  Task& t = TaskFor(task);
  ReadVerdict v;
  if (guards_ == ReadGuards::kOff) {
    if (t.seen.size() >= kMaxPathsPerTask) t.seen.clear();
    t.seen[std::string(path)] = cookie;
    return v;
  }
  std::string key(path);
  key += '\0';
  key += region;
  v.consecutive = Bump(t, "r:" + key);
  auto it = t.regions.find(key);
  if (it != t.regions.end() && it->second.cookie == cookie) {
    v.unchanged = true;
    v.unchanged_stubs = ++it->second.stubs;
  } else {
    if (t.regions.size() >= kMaxPathsPerTask) t.regions.clear();
    t.regions[key] = Region{cookie, 0};
  }
  if (t.seen.size() >= kMaxPathsPerTask) t.seen.clear();
  t.seen[std::string(path)] = cookie;
  return v;
}

int FileTracker::RecordSearch(std::string_view task, std::string_view key) {
  if (guards_ == ReadGuards::kOff) return 1;
  std::lock_guard lock(mu_);
  return Bump(TaskFor(task), "s:" + std::string(key));
}

void FileTracker::NoteWrite(std::string_view task, std::string_view path, uint64_t cookie) {
  std::lock_guard lock(mu_);
  Task& t = TaskFor(task);
  std::string prefix(path);
  prefix += '\0';
  for (auto it = t.regions.lower_bound(prefix);
       it != t.regions.end() && it->first.starts_with(prefix);) {
    it = t.regions.erase(it);
  }
  t.seen[std::string(path)] = cookie;
}

std::optional<uint64_t> FileTracker::LastSeen(std::string_view task, std::string_view path) const {
  std::lock_guard lock(mu_);
  auto t = tasks_.find(task);
  if (t == tasks_.end()) return std::nullopt;
  auto it = t->second.seen.find(path);
  if (it == t->second.seen.end()) return std::nullopt;
  return it->second;
}

int FileTracker::RecordPatchMiss(std::string_view task, std::string_view path) {
  std::lock_guard lock(mu_);
  Task& t = TaskFor(task);
  auto it = t.patch_misses.find(path);
  if (it == t.patch_misses.end()) {
    if (t.patch_misses.size() >= kMaxPatchMissPaths) t.patch_misses.clear();
    it = t.patch_misses.emplace(std::string(path), 0).first;
  }
  return ++it->second;
}

void FileTracker::ClearPatchMisses(std::string_view task, std::string_view path) {
  std::lock_guard lock(mu_);
  auto t = tasks_.find(task);
  if (t == tasks_.end()) return;
  if (auto it = t->second.patch_misses.find(path); it != t->second.patch_misses.end())
    t->second.patch_misses.erase(it);
}

void FileTracker::NotifyOtherToolCall(std::string_view task_id) {
  std::lock_guard lock(mu_);
  auto t = tasks_.find(task_id);
  if (t == tasks_.end()) return;
  t->second.last_key.clear();
  t->second.streak = 0;
}

void FileTracker::ForgetReads() {
  std::lock_guard lock(mu_);
  for (auto& [id, t] : tasks_) {
    t.last_key.clear();
    t.streak = 0;
    t.regions.clear();
  }
}

FileTracker* TrackerOf(const ToolContext& ctx) {
  return dynamic_cast<FileTracker*>(ctx.read_tracker.get());
}

}  // namespace talaria::tools
