// Files in and out of an environment whose file system is not this machine's (a sandbox
// service), as one tar stream each way over the environment's own command channel: the archive
// goes in as the stdin of one command and comes back as the output of one, base64 in both
// directions (the services carry JSON text). The way the original's file sync works, without a
// call per file.
//
//   TALARIA_RETURN_IF_ERROR(PushTree(*env, "/home/me/project", "/workspace", {}));
//   ... commands change files in the sandbox ...
//   auto changed = PullChanged(*env, "/workspace", "/home/me/project", {});
//
// Only regular files and directories come back: an archive holding anything else (links,
// devices), an absolute name or a ".." component is refused whole before anything is written.
// Thread-safety: as the environment's Run.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "talaria/base/status.h"
#include "talaria/env/environment.h"

namespace talaria::sandboxes {

struct SyncOptions {
  std::chrono::milliseconds timeout{300'000};
  size_t max_bytes = size_t{256} << 20;         // the archive, either way
  std::vector<std::string> exclude = {".git"};  // tar --exclude patterns when pushing
  // PushTree: only files whose contents changed after this time (seconds since the epoch; tar
  // --newer-mtime); 0: the whole tree.
  int64_t newer_than_epoch_s = 0;
};

// Copies `local_dir`'s tree into `remote_dir` (created when missing) and marks the time, so
// PullChanged brings back only what changed after. Errors: NotFound (no local_dir),
// ResourceExhausted (larger than max_bytes), Unavailable (the remote side failed; its output).
Status PushTree(env::Environment& env, const std::string& local_dir, const std::string& remote_dir,
                const SyncOptions& options);

// Brings the regular files under `remote_dir` changed since the last PushTree/PullChanged into
// `local_dir`; returns their paths relative to it. Errors: as PushTree, and InvalidArgument for
// an archive it refuses.
Result<std::vector<std::string>> PullChanged(env::Environment& env, const std::string& remote_dir,
                                             const std::string& local_dir,
                                             const SyncOptions& options);

}  // namespace talaria::sandboxes
