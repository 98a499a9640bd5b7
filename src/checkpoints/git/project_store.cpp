#include "checkpoints/git/project_store.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include "talaria/base/file_io.h"
#include "talaria/base/json.h"
#include "talaria/base/sha256.h"

namespace talaria::checkpoints {
namespace {

namespace fs = std::filesystem;

struct OidHash {
  size_t operator()(const git_oid& oid) const {
    size_t h;
    std::memcpy(&h, oid.id, sizeof h);
    return h;
  }
};
struct OidEq {
  bool operator()(const git_oid& a, const git_oid& b) const { return git_oid_equal(&a, &b) != 0; }
};
using OidSet = std::unordered_set<git_oid, OidHash, OidEq>;

Result<UniqueFd> LockProject(const std::string& path, LockWait wait) {
  UniqueFd fd(::open((path + "/lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (!fd.valid()) {
    if (errno == ENOENT) return Err(NotFoundError("checkpoints: no project at " + path));
    return Err(InternalError("checkpoints: lock " + path + ": " + std::strerror(errno)));
  }
  const int op = wait == LockWait::kTry ? LOCK_EX | LOCK_NB : LOCK_EX;
  while (::flock(fd.get(), op) != 0) {
    if (errno == EINTR) continue;
    if (errno == EWOULDBLOCK) return Err(UnavailableError("checkpoints: project busy"));
    return Err(InternalError("checkpoints: lock " + path + ": " + std::strerror(errno)));
  }
  return fd;
}

Result<RepoPtr> OpenRepo(const std::string& repo_path, Create create) {
  git_repository* raw = nullptr;
  if (git_repository_open_bare(&raw, repo_path.c_str()) == 0) return RepoPtr(raw);
  if (create == Create::kNo) return Err(NotFoundError("checkpoints: no store at " + repo_path));
  if (git_repository_init(&raw, repo_path.c_str(), /*is_bare=*/1) < 0) {
    return Err(GitError("create store " + repo_path));
  }
  return RepoPtr(raw);
}

// Marks a snapshot's commit and everything its tree reaches.
Status MarkReachable(git_repository* repo, const git_oid& commit_id, OidSet& live) {
  git_commit* raw = nullptr;
  if (git_commit_lookup(&raw, repo, &commit_id) < 0) return GitError("read snapshot");
  CommitPtr commit(raw);
  live.insert(commit_id);
  const git_oid* tree_id = git_commit_tree_id(commit.get());
  if (!live.insert(*tree_id).second) return Status::Ok();  // same tree as another snapshot
  git_tree* tree_raw = nullptr;
  if (git_tree_lookup(&tree_raw, repo, tree_id) < 0) return GitError("read snapshot tree");
  TreePtr tree(tree_raw);
  auto mark = [](const char*, const git_tree_entry* entry, void* payload) -> int {
    static_cast<OidSet*>(payload)->insert(*git_tree_entry_id(entry));
    return 0;
  };
  if (git_tree_walk(tree.get(), GIT_TREEWALK_PRE, mark, &live) < 0) {
    return GitError("walk snapshot tree");
  }
  return Status::Ok();
}

}  // namespace

std::string ProjectId(std::string_view workdir) { return Sha256Hex(workdir).substr(0, 16); }

Result<ProjectStore> OpenProjectAt(const std::string& path, LockWait wait) {
  ProjectStore project;
  project.path = path;
  project.lock = TALARIA_TRY(LockProject(path, wait));
  project.repo = TALARIA_TRY(OpenRepo(project.repo_path(), Create::kNo));
  project.workdir = RecordedWorkdir(path);
  return project;
}

Result<ProjectStore> OpenProject(const std::string& root, const std::string& workdir, Create create,
                                 LockWait wait) {
  ProjectStore project;
  project.workdir = workdir;
  project.path = root + "/" + ProjectId(workdir);
  if (create == Create::kYes && ::mkdir(project.path.c_str(), 0700) != 0 && errno != EEXIST) {
    return Err(InternalError("checkpoints: mkdir " + project.path + ": " + std::strerror(errno)));
  }
  if (create == Create::kNo && ::access(project.path.c_str(), F_OK) != 0) {
    return Err(NotFoundError("checkpoints: no snapshots of " + workdir));
  }
  project.lock = TALARIA_TRY(LockProject(project.path, wait));
  project.repo = TALARIA_TRY(OpenRepo(project.repo_path(), create));
  return project;
}

Result<std::vector<SnapshotRef>> ListSnapshots(git_repository* repo) {
  git_strarray names{};
  if (git_reference_list(&names, repo) < 0) return Err(GitError("list snapshots"));
  struct Dispose {
    git_strarray* a;
    ~Dispose() { git_strarray_dispose(a); }
  } dispose{&names};
  std::vector<SnapshotRef> out;
  for (size_t i = 0; i < names.count; ++i) {
    std::string_view name = names.strings[i];
    if (!name.starts_with(kRefPrefix)) continue;
    std::string_view digits = name.substr(kRefPrefix.size());
    SnapshotRef ref;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), ref.sequence);
    if (ec != std::errc() || end != digits.data() + digits.size()) continue;
    if (git_reference_name_to_id(&ref.commit, repo, names.strings[i]) < 0) continue;
    git_commit* raw = nullptr;
    if (git_commit_lookup(&raw, repo, &ref.commit) < 0) continue;  // damaged: not listed
    CommitPtr commit(raw);
    ref.time = git_commit_time(commit.get());
    ref.name = std::string(name);
    out.push_back(std::move(ref));
  }
  std::sort(out.begin(), out.end(),
            [](const SnapshotRef& a, const SnapshotRef& b) { return a.sequence < b.sequence; });
  return out;
}

Status SweepUnreachable(ProjectStore& project) {
  git_repository* repo = project.repo.get();
  OidSet live;
  std::vector<SnapshotRef> refs = TALARIA_TRY(ListSnapshots(repo));
  for (const SnapshotRef& ref : refs)
    TALARIA_RETURN_IF_ERROR(MarkReachable(repo, ref.commit, live));

  // Loose objects: objects/<2 hex>/<38 hex>. libgit2 never packs on its own, so these are all.
  std::error_code ec;
  const fs::path objects = fs::path(project.repo_path()) / "objects";
  // Explicit increment(ec): a range-for's ++ throws when an entry goes away mid-walk.
  for (fs::directory_iterator dir(objects, ec), end; !ec && dir != end; dir.increment(ec)) {
    const std::string prefix = dir->path().filename().string();
    if (prefix.size() != 2 || !dir->is_directory(ec)) continue;
    std::error_code inner;
    for (fs::directory_iterator file(dir->path(), inner); !inner && file != end;
         file.increment(inner)) {
      const std::string hex = prefix + file->path().filename().string();
      git_oid oid;
      if (hex.size() != GIT_OID_HEXSZ || git_oid_fromstr(&oid, hex.c_str()) < 0) continue;
      std::error_code removed;
      if (live.count(oid) == 0) fs::remove(file->path(), removed);
    }
    ec.clear();
  }

  // The index caches blob ids by stat data; one that names a swept blob would put a hole in the
  // next snapshot, so such an index is dropped (the next scan reads every file).
  git_index* raw = nullptr;
  if (git_index_open(&raw, project.index_path().c_str()) == 0) {
    IndexPtr index(raw);
    const size_t count = git_index_entrycount(index.get());
    bool stale = false;
    for (size_t i = 0; i < count && !stale; ++i) {
      const git_index_entry* e = git_index_get_byindex(index.get(), i);
      stale = e != nullptr && live.count(e->id) == 0;
    }
    if (stale) ::unlink(project.index_path().c_str());
  }
  return Status::Ok();
}

uint64_t DirectoryBytes(const std::string& path) {
  uint64_t total = 0;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(path, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_regular_file(ec)) total += it->file_size(ec);
  }
  return total;
}

void TouchProjectRecord(const ProjectStore& project) {
  const std::string file = project.path + "/project.json";
  const int64_t now = static_cast<int64_t>(std::time(nullptr));
  Json record = Json::object();
  if (auto old = ReadWholeFile(file)) {
    if (auto parsed = ParseJson(*old); parsed && parsed->is_object()) record = std::move(*parsed);
  }
  record["workdir"] = project.workdir;
  if (!record.contains("created_at")) record["created_at"] = now;
  record["last_touch"] = now;
  // Best effort: the record serves the size cap's clean-up, not the snapshots.
  (void)WriteFileAtomic(file, DumpJson(record), AtomicWriteOptions{0600, false});
}

std::string RecordedWorkdir(const std::string& project_path) {
  auto text = ReadWholeFile(project_path + "/project.json");
  if (!text) return {};
  auto parsed = ParseJson(*text);
  if (!parsed || !parsed->is_object() || !(*parsed)["workdir"].is_string()) return {};
  return (*parsed)["workdir"].get<std::string>();
}

}  // namespace talaria::checkpoints
