// Per-session memory of what the file tools read, for the original's read guardrails:
//   - dedup: re-reading an unchanged (path, offset, limit) returns a stub instead of content;
//     after two stubs for the same region the read is blocked;
//   - consecutive reads: the same region or search read 3 times in a row warns, 4 times blocks;
//     any other tool resets the streak (the dispatcher calls NotifyOtherToolCall);
//   - staleness: write_file/patch warn when a file changed since this session last read it.
// Dedup and consecutive reads assume one conversation whose context still holds the earlier
// results; with ReadGuards::kOff (a server whose callers are many conversations) both are off
// and only staleness is kept. ForgetReads starts them over (the context lost earlier results).
// State is kept per task id, bounded (the original's caps: 500 history, 1,000 dedup keys).
// Thread-safety: thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "talaria/confinement/workspace.h"
#include "talaria/core/tool_context.h"
#include "talaria/tools/session.h"

namespace talaria::tools {

class FileTracker final : public ReadLoopObserver {
 public:
  struct ReadVerdict {
    int consecutive = 1;      // how many times in a row this exact read was made
    bool unchanged = false;   // same region read before and the file has not changed
    int unchanged_stubs = 0;  // stubs already returned for this region (incl. this one)
  };

  explicit FileTracker(ReadGuards guards = ReadGuards::kOn) : guards_(guards) {}

  // What identifies one version of a file: mtime alone misses a rewrite within the same coarse
  // clock tick, so size and inode (atomic writes replace the inode) take part.
  static uint64_t Cookie(const safety::FileInfo& info);

  // Records a read of `region` (path + window) of a file whose change cookie is `cookie`. With
  // the guards off the verdict is always a first, changed read (only staleness is recorded).
  ReadVerdict RecordRead(std::string_view task, std::string_view path, std::string_view region,
                         uint64_t cookie);
  // Records a search (keyed by its arguments) for the consecutive-read rule: how many times in
  // a row it was made (always 1 with the guards off).
  int RecordSearch(std::string_view task, std::string_view key);
  // A write landed: dedup for that path is reset, and its new mtime becomes "last seen".
  void NoteWrite(std::string_view task, std::string_view path, uint64_t cookie);
  // The cookie this task last saw for `path` (by read or its own write); nullopt if never.
  std::optional<uint64_t> LastSeen(std::string_view task, std::string_view path) const;

  // A replace in `path` could not find old_string: returns how many times in a row that has
  // happened for this path (the original escalates its hint at 3). A success clears it.
  int RecordPatchMiss(std::string_view task, std::string_view path);
  void ClearPatchMisses(std::string_view task, std::string_view path);

  void NotifyOtherToolCall(std::string_view task_id) override;
  // Forgets every task's reads and searches for dedup and the consecutive rule (what was seen
  // for staleness stays).
  void ForgetReads();

  static constexpr size_t kMaxPathsPerTask = 1000;
  static constexpr size_t kMaxPatchMissPaths = 64;

 private:
  struct Region {
    uint64_t cookie = 0;
    int stubs = 0;
  };
  struct Task {
    std::string last_key;
    int streak = 0;
    std::map<std::string, Region, std::less<>> regions;    // path + '\0' + window
    std::map<std::string, uint64_t, std::less<>> seen;     // path -> cookie
    std::map<std::string, int, std::less<>> patch_misses;  // path -> consecutive misses
  };
  Task& TaskFor(std::string_view task);
  int Bump(Task& t, std::string_view key);

  const ReadGuards guards_;
  mutable std::mutex mu_;
  std::map<std::string, Task, std::less<>> tasks_;  // Guarded by mu_.
};

// The session's tracker, or null when the context has none (then no guardrail applies).
FileTracker* TrackerOf(const ToolContext& ctx);

}  // namespace talaria::tools
