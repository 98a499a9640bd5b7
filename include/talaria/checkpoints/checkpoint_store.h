// Checkpoints: shadow snapshots of a project directory, taken before the agent mutates it, so a
// human can list them, diff one against the present and restore a snapshot or one file.
//
// The store lives under $TALARIA_HOME/checkpoints/ (CheckpointSettings::root), one shadow git
// repository per project (libgit2; no git process): <root>/<hash16>/ holds a bare repository
// `repo/`, the project's own index `index` (stat data, so unchanged files are not re-read) and
// `project.json` {workdir, created_at, last_touch}; hash16 is the first 16 hex digits of the
// SHA-256 of the absolute directory. The user's own repository is never opened: version-control
// directories are excluded like dependencies, build output, caches, binaries and media, `.env*`
// and logs. Each snapshot is a parentless commit named by a ref `refs/talaria/<sequence>`, so
// pruning the oldest never changes the hashes of the others; objects no ref reaches are swept
// when snapshots are pruned, and the caps (snapshots per project, bytes per file, bytes of the
// whole store) hold after every snapshot, not eventually.
//
// Thread-safety: thread-safe. Every operation on a project holds an flock on its directory, so
// several talaria processes share one store safely.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "talaria/base/status.h"
#include "talaria/core/config.h"

namespace talaria::checkpoints {

// config.yaml's `checkpoints` section (off by default, as in the original).
//   checkpoints:
//     enabled: true
//     max_snapshots: 20        # per project; the oldest are pruned
//     max_total_size_mb: 500   # the whole store; the oldest snapshots go first
//     max_file_size_mb: 10     # larger files are left out of snapshots
//     max_files: 50000         # a directory with more files is not snapshotted
//     timeout_s: 30            # one snapshot's scan, 10-60
struct CheckpointSettings {
  bool enabled = false;
  int max_snapshots = 20;
  uint64_t max_total_bytes = uint64_t{500} << 20;
  uint64_t max_file_bytes = uint64_t{10} << 20;
  size_t max_files = 50000;
  std::chrono::seconds timeout{30};
  std::string root;  // empty: $TALARIA_HOME/checkpoints
  // Directories never snapshotted (besides "/"); empty: the user's home (UserHome()).
  std::vector<std::string> refused_dirs;
};

// The `checkpoints` section. Errors: InvalidArgument naming the bad key.
Result<CheckpointSettings> CheckpointSettingsFromConfig(const Config& config);

struct CheckpointInfo {
  std::string hash;        // 40 hex digits
  std::string short_hash;  // 8
  int64_t timestamp = 0;   // seconds since the epoch
  std::string reason;      // "before write_file", "before terminal: rm -rf build", ...
  // Against the snapshot before it (the first: against nothing).
  int files_changed = 0;
  int insertions = 0;
  int deletions = 0;
};

enum class SnapshotKind : unsigned char {
  kTaken,      // a new snapshot
  kUnchanged,  // the directory matches the latest snapshot: none taken
  kSkipped,    // not snapshotted (too many files, over the store cap); `note` says why
};

struct SnapshotOutcome {
  SnapshotKind kind = SnapshotKind::kTaken;
  std::string hash;  // kTaken and kUnchanged: the snapshot that holds the directory's state
  std::string note;  // kSkipped: why; kTaken: files left out (over the size cap), if any
};

struct RestoreOutcome {
  std::string restored_to;  // the snapshot's short hash
  std::string reason;       // the snapshot's reason
  std::string directory;
  std::string file;  // empty: the whole snapshot
  std::vector<std::string> files_restored;
  std::string pre_rollback;  // the snapshot of the present taken first (empty: unchanged)
};

// Disk use of the store, for `talaria checkpoints list` and the size cap.
struct StoreUsage {
  uint64_t bytes = 0;
  size_t projects = 0;
  size_t snapshots = 0;
};

class CheckpointStore {
 public:
  // Creates the store's root if missing. Nothing is scanned or pruned here (opening is cheap:
  // the original's `git gc` at start-up stalled it). Errors: Internal (libgit2 init, mkdir).
  static Result<std::shared_ptr<CheckpointStore>> Open(CheckpointSettings settings);
  virtual ~CheckpointStore() = default;

  virtual const CheckpointSettings& settings() const = 0;

  // Snapshots `dir` (absolute) unless it matches the latest snapshot; then prunes the project
  // to max_snapshots and the store to max_total_bytes. Errors: InvalidArgument (relative, not a
  // directory), PermissionDenied ("/", the home directory, inside the store),
  // DeadlineExceeded (the scan took longer than timeout), Internal (libgit2).
  virtual Result<SnapshotOutcome> Snapshot(std::string_view dir, std::string_view reason) = 0;

  // The project's snapshots, newest first (empty when it has none).
  virtual Result<std::vector<CheckpointInfo>> List(std::string_view dir) = 0;

  // A unified diff from snapshot `hash` (4-64 hex digits, a unique prefix) to the directory as
  // it is now. Errors: InvalidArgument (bad hash), NotFound (no such snapshot).
  virtual Result<std::string> Diff(std::string_view dir, std::string_view hash) = 0;

  // Puts the snapshot's files (or only `file`, relative to dir) back, after snapshotting the
  // present ("pre-rollback"). Files created after the snapshot are left alone, as the
  // original's `git checkout <hash> -- .` does. Writes go through a workspace confined to
  // `dir` (a symlink planted since cannot redirect them). Errors: InvalidArgument (bad hash,
  // a file path that leaves dir), NotFound (no such snapshot, or the file is not in it).
  virtual Result<RestoreOutcome> Restore(std::string_view dir, std::string_view hash,
                                         std::optional<std::string> file) = 0;

  virtual Result<StoreUsage> Usage() = 0;
};

// The directory a mutation of `path` is snapshotted in: the nearest ancestor of `path` (a file
// or directory, absolute) that holds a project marker (.git, pyproject.toml, package.json,
// Cargo.toml, go.mod, Makefile, ...), not above `boundary`; else `boundary` when `path` lies
// inside it; else the directory of `path`. Pure path logic plus stat; thread-safe.
std::string ProjectDirFor(std::string_view path, std::string_view boundary);

// Whether a terminal command may destroy files, so it is snapshotted before it runs (the
// original's heuristic, on the parsed command): rm, rmdir, mv, cp, install, truncate, dd,
// shred, sed -i, git reset/clean/checkout/restore/stash, and an overwriting `>` redirect to a
// file. A command that does not parse counts as destructive. Thread-safe.
bool IsDestructiveCommand(std::string_view command);

}  // namespace talaria::checkpoints
