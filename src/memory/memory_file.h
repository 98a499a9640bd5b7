// The file side of a memory write: the exclusive lock beside the file, reading it, replacing it
// atomically and durably, and the backup a refused drifted file gets.
// Thread-safety: free functions; FileLock is a move-only handle (one per writer).
#pragma once

#include <string>
#include <string_view>

#include "talaria/base/status.h"
#include "talaria/base/unique_fd.h"

namespace talaria::memory {

// An exclusive flock(2) on `<file>.lock`, held until destruction. flock, not fcntl locks: an
// fcntl lock is dropped when any descriptor of the file closes in the process, and it is not
// exclusive between threads of one process; flock on separate open file descriptions is both.
class FileLock {
 public:
  // Blocks until the lock is ours. Creates the directory (0700) and the lock file (0600).
  // Errors: PermissionDenied/Unavailable naming the lock file.
  static Result<FileLock> Acquire(const std::string& file);

 private:
  explicit FileLock(UniqueFd fd) : fd_(std::move(fd)) {}
  UniqueFd fd_;
};

// The file's content; "" when it does not exist. Errors: those of ReadWholeFile (a symlink or
// something other than a regular file is refused).
Result<std::string> ReadMemoryFile(const std::string& path);

// `content` replaces the file whole: a temp file beside it, fsync, rename, fsync of the
// directory (so the rename itself survives a power loss). Errors: Unavailable naming the step.
Status ReplaceMemoryFile(const std::string& path, std::string_view content);

// Writes `content` to `<path>.bak.<unix seconds>` (".1", ".2", ... when taken) and returns that
// path; an existing backup with the same content is reused, so a model retrying a refused
// write does not fill the directory.
Result<std::string> BackUpMemoryFile(const std::string& path, std::string_view content);

// mkdir -p with mode 0700. Errors: PermissionDenied/Unavailable naming the directory.
Status MakeMemoryDir(const std::string& dir);

}  // namespace talaria::memory
