// Writing files without leaving half of one behind, and draining descriptors.
//   WriteAll: every byte of `data` to `fd` (EINTR retried), or the errno of the failed write.
//   ReadAvailable: what a non-blocking descriptor holds right now.
//   WriteFileAtomic: `content` replaces `path` whole or not at all — written to a fresh
//     temp file beside it (O_EXCL, never through a link someone planted), optionally fsynced,
//     then renamed over `path`; on any failure the temp file is removed and `path` is untouched.
// Thread-safety: free functions; concurrent WriteFileAtomic calls on one path each leave a
// complete file (the last rename wins).
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>

#include "talaria/base/status.h"

namespace talaria {

// Errors: Internal naming the errno of the failed write.
Status WriteAll(int fd, std::string_view data);

// Appends to `out` everything non-blocking `fd` holds now (EINTR retried). True while the
// descriptor stays open (it ran dry: EAGAIN); false once it reached end of file or failed.
bool ReadAvailable(int fd, std::string& out);

struct AtomicWriteOptions {
  mode_t mode = 0600;
  bool sync = true;  // fsync before the rename: the new content survives a power loss
};

// Errors: PermissionDenied/Unavailable naming `path` and the failing step.
Status WriteFileAtomic(const std::string& path, std::string_view content, AtomicWriteOptions options = {});

}  // namespace talaria
