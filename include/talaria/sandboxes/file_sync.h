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
//
// Keeping two trees in step, deletions included (tools/synced_environment.h): each side's
// listing (ListLocalTree, ListRemoteTree) stamps every file with its mtime to the nanosecond
// and its size; what differs from the listing of the last exchange (DiffListings) goes across
// with PushFiles or PullFiles, so a file that did not change is never sent again.
// Thread-safety: as the environment's Run.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
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

// Regular files under a directory (relative paths) and their stamps ("<mtime> <size>", the
// mtime with the file system's full precision). Stamps are compared only with the same side's.
using TreeListing = std::map<std::string, std::string>;

struct TreeChanges {
  std::vector<std::string> changed;  // new, or a different stamp
  std::vector<std::string> deleted;
  bool empty() const { return changed.empty() && deleted.empty(); }
};

// What differs from `before` to `after`, in path order.
TreeChanges DiffListings(const TreeListing& before, const TreeListing& after);

// This machine's tree under `local_dir`: links are not followed (neither listed nor entered);
// a path with a component named in options.exclude is left out. Errors: NotFound (no
// local_dir), Internal (an unreadable directory).
Result<TreeListing> ListLocalTree(const std::string& local_dir, const SyncOptions& options);
// One local file's stamp, as ListLocalTree gives it. Errors: NotFound, Internal.
Result<std::string> LocalFileStamp(const std::string& path);

// The far side's tree under `remote_dir` (GNU find; options.exclude as locally), in one command.
// Errors: Unavailable (the command failed: no such directory, no find), InvalidArgument (an
// answer that is not a listing).
Result<TreeListing> ListRemoteTree(env::Environment& env, const std::string& remote_dir,
                                   const SyncOptions& options);

// Copies `changes.changed` (relative to `local_dir`) into `remote_dir` as one tar stream and
// removes `changes.deleted` there, then lists the far side's tree, all in one command; returns
// that listing. Errors: as PushTree, and as ListRemoteTree.
Result<TreeListing> PushFiles(env::Environment& env, const std::string& local_dir,
                              const std::string& remote_dir, const TreeChanges& changes,
                              const SyncOptions& options);

// Brings `files` (relative to `remote_dir`) into `local_dir` as one tar stream, checked as
// PullChanged's; one that is gone by then is left out. Errors: as PullChanged.
Status PullFiles(env::Environment& env, const std::string& remote_dir,
                 const std::vector<std::string>& files, const std::string& local_dir,
                 const SyncOptions& options);

}  // namespace talaria::sandboxes
