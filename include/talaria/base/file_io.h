// Writing files without leaving half of one behind, and draining descriptors.
//   WriteAll: every byte of `data` to `fd` (EINTR retried), or the errno of the failed write.
//   WriteAllUntil: the same, where a full non-blocking descriptor is waited on (poll) until a
//     deadline or a stop request: a reader that stopped reading cannot hold the writer forever.
//   ReadAvailable: what a non-blocking descriptor holds right now.
//   ReadWholeFile: a file's whole content (not through a symlink at the leaf).
//   WriteFileAtomic: `content` replaces `path` whole or not at all — written to a fresh
//     temp file beside it (O_EXCL, never through a link someone planted), optionally fsynced,
//     then renamed over `path`; on any failure the temp file is removed and `path` is untouched.
// Thread-safety: free functions; concurrent WriteFileAtomic calls on one path each leave a
// complete file (the last rename wins).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <stop_token>
#include <string>
#include <string_view>

#include "talaria/base/status.h"

namespace talaria {

// Errors: Internal naming the errno of the failed write.
Status WriteAll(int fd, std::string_view data);

// How long WriteAllUntil waits for room in a full descriptor.
struct WriteWait {
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  std::stop_token stop;  // checked again at least every `slice`
  std::chrono::milliseconds slice{100};
  bool socket = false;  // send(MSG_NOSIGNAL | MSG_DONTWAIT): EPIPE, never SIGPIPE; never blocks
};

// Errors: DeadlineExceeded when the deadline came first, Cancelled when `stop` was requested
// first, Unavailable naming the errno of a failed write (EPIPE: the reader is gone) or poll.
// REQUIRES: unless wait.socket (send with MSG_NOSIGNAL | MSG_DONTWAIT), SIGPIPE is blocked or
// ignored, and a descriptor that must not block the deadline is O_NONBLOCK.
Status WriteAllUntil(int fd, std::string_view data, const WriteWait& wait);

// Appends to `out` everything non-blocking `fd` holds now (EINTR retried). True while the
// descriptor stays open (it ran dry: EAGAIN); false once it reached end of file or failed.
bool ReadAvailable(int fd, std::string& out);

// The whole content of the regular file at `path`; a symlink at the leaf is refused, and a FIFO
// or device is refused without blocking. Errors:
// NotFound, PermissionDenied (EACCES, a symlink, not a regular file), Internal (other errnos).
Result<std::string> ReadWholeFile(const std::string& path);

struct AtomicWriteOptions {
  mode_t mode = 0600;
  bool sync = true;  // fsync before the rename: the new content survives a power loss
};

// Errors: PermissionDenied/Unavailable naming `path` and the failing step.
Status WriteFileAtomic(const std::string& path, std::string_view content,
                       AtomicWriteOptions options = {});

}  // namespace talaria
