// Brings a project's shadow index to the state of its directory: the directory is walked
// beneath one dirfd (openat with O_NOFOLLOW at every step, so no symlink leads the walk out of
// it), excluded names are skipped, a file whose stat data match its index entry keeps its blob
// without being read, and every other file is read and written into the repository as a blob.
// A symlink is kept as git keeps one: its target text as a blob of mode 120000 (readlinkat; what
// it points at is never opened, inside the project or out of it).
// Thread-safety: not thread-safe; the caller holds the project's lock.
#pragma once

#include <git2.h>
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "talaria/base/status.h"

namespace talaria::checkpoints {

struct ScanLimits {
  uint64_t max_file_bytes = 0;
  size_t max_files = 0;
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  // Directories never descended into (the store itself, $TALARIA_HOME), by device and inode.
  std::vector<std::pair<dev_t, ino_t>> skip_dirs;
  // Index entries modified at or after this (ns since the epoch) are re-read even when their
  // stat data match: a write in the same clock tick as the last scan would otherwise be missed.
  int64_t racy_after_ns = 0;
};

struct ScanReport {
  size_t files = 0;            // in the index afterwards
  size_t read = 0;             // read and hashed this time
  size_t oversize = 0;         // left out for max_file_bytes
  std::string first_oversize;  // one of them, for the note
};

// Replaces the entries of `index` with the files under `root_fd`. Errors: ResourceExhausted
// (more than max_files files), DeadlineExceeded, Internal (I/O, libgit2). On error `index` is
// left partly updated: the caller discards it.
Result<ScanReport> SyncIndex(int root_fd, git_repository* repo, git_index* index,
                             const ScanLimits& limits);

}  // namespace talaria::checkpoints
