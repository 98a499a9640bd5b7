// One project's shadow repository, opened and locked: the pieces checkpoint_store.cpp and
// store_prune.cpp share. <root>/<hash16>/ holds `lock` (flock), `repo/` (bare), `index` and
// `project.json`.
// Thread-safety: a ProjectStore belongs to one thread; the flock keeps other threads and
// processes out of the project while it lives.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "checkpoints/git/git_util.h"
#include "talaria/base/status.h"
#include "talaria/base/unique_fd.h"

namespace talaria::checkpoints {

inline constexpr std::string_view kRefPrefix = "refs/talaria/";

// A snapshot's ref: refs/talaria/<sequence, 10 digits> -> a parentless commit.
struct SnapshotRef {
  std::string name;
  uint64_t sequence = 0;
  git_oid commit{};
  int64_t time = 0;  // the commit's time, seconds
};

enum class LockWait : unsigned char { kBlock, kTry };

struct ProjectStore {
  std::string workdir;  // canonical
  std::string path;     // <root>/<hash16>
  UniqueFd lock;
  RepoPtr repo;

  std::string repo_path() const { return path + "/repo"; }
  std::string index_path() const { return path + "/index"; }
};

// "<first 16 hex digits of sha256(workdir)>".
std::string ProjectId(std::string_view workdir);

// Opens (kCreate: creating) and locks the project of `workdir` under `root`. NotFound when it
// does not exist and create is false; Unavailable when kTry and another holder has it.
enum class Create : unsigned char { kYes, kNo };
Result<ProjectStore> OpenProject(const std::string& root, const std::string& workdir, Create create,
                                 LockWait wait = LockWait::kBlock);
// Opens and locks the project directory `path` itself (the size cap walks every project).
Result<ProjectStore> OpenProjectAt(const std::string& path, LockWait wait);

// The project's snapshots, oldest first.
Result<std::vector<SnapshotRef>> ListSnapshots(git_repository* repo);

// Deletes every loose object no snapshot reaches. When the project's index names a blob that is
// gone, the index is deleted too (the next scan reads every file again).
Status SweepUnreachable(ProjectStore& project);

// Bytes of the files under `path` (apparent sizes).
uint64_t DirectoryBytes(const std::string& path);

// Records {workdir, created_at, last_touch} in project.json.
void TouchProjectRecord(const ProjectStore& project);
// The workdir project.json names; empty when unreadable.
std::string RecordedWorkdir(const std::string& project_path);

}  // namespace talaria::checkpoints
