// CheckpointStore over libgit2: snapshot, list, diff, restore (the caps are store_caps.cpp's).
// Built into libtalaria_checkpoints.so (checkpoints_module.h).
#include "checkpoints/checkpoints_module.h"
#include "talaria/checkpoints/checkpoint_store.h"

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>

#include "checkpoints/git/project_store.h"
#include "checkpoints/git/restore_paths.h"
#include "checkpoints/git/store_caps.h"
#include "checkpoints/git/tree_scan.h"
#include "talaria/base/ascii.h"
#include "talaria/base/paths.h"
#include "talaria/confinement/workspace.h"

namespace talaria::checkpoints {
namespace {

constexpr size_t kShortHash = 8;

// One entry of a snapshot to write back: a file's content or a symlink's target.
struct SnapshotEntry {
  std::string path;
  git_oid id;
  git_filemode_t mode;
};

Result<std::string> RealDirectory(std::string_view dir) {
  if (dir.empty() || dir.front() != '/') {
    return Err(
        InvalidArgumentError("checkpoints: the directory must be absolute: " + std::string(dir)));
  }
  char buf[PATH_MAX];
  if (::realpath(std::string(dir).c_str(), buf) == nullptr) {
    return Err(InvalidArgumentError("checkpoints: no directory " + std::string(dir) + ": " +
                                    std::strerror(errno)));
  }
  struct stat st {};
  if (::stat(buf, &st) != 0 || !S_ISDIR(st.st_mode)) {
    return Err(InvalidArgumentError("checkpoints: not a directory: " + std::string(dir)));
  }
  return std::string(buf);
}

std::string RealOrSelf(const std::string& path) {
  char buf[PATH_MAX];
  return ::realpath(path.c_str(), buf) != nullptr ? std::string(buf) : path;
}

bool IsWithin(std::string_view path, std::string_view dir) {
  return path == dir || (path.size() > dir.size() && path.starts_with(dir) &&
                         (dir == "/" || path[dir.size()] == '/'));
}

// 4-64 hex digits, lower-cased; InvalidArgument otherwise.
Result<std::string> ValidHash(std::string_view hash) {
  if (hash.size() < 4 || hash.size() > 64 ||
      !std::all_of(hash.begin(), hash.end(), [](char c) { return std::isxdigit(c) != 0; })) {
    return Err(InvalidArgumentError("checkpoints: '" + std::string(hash.substr(0, 80)) +
                                    "' is not a snapshot hash (4-64 hex digits)"));
  }
  return AsciiLower(hash);
}

// A path inside the snapshot: relative (or absolute inside workdir), no "." or ".." parts.
Result<std::string> ValidFile(std::string_view file, const std::string& workdir) {
  std::string rel(file);
  if (IsWithin(rel, workdir) && rel.size() > workdir.size()) rel = rel.substr(workdir.size() + 1);
  bool ok = !rel.empty() && rel.front() != '/' && rel.find('\0') == std::string::npos;
  for (size_t start = 0; ok && start <= rel.size();) {
    size_t end = rel.find('/', start);
    if (end == std::string::npos) end = rel.size();
    const std::string_view part = std::string_view(rel).substr(start, end - start);
    ok = !part.empty() && part != "." && part != "..";
    start = end + 1;
  }
  if (!ok) {
    return Err(InvalidArgumentError("checkpoints: '" + std::string(file) +
                                    "' is not a path inside " + workdir));
  }
  return rel;
}

Result<TreePtr> TreeOf(git_repository* repo, const git_oid& commit_id) {
  git_commit* raw = nullptr;
  if (git_commit_lookup(&raw, repo, &commit_id) < 0) return Err(GitError("read snapshot"));
  CommitPtr commit(raw);
  git_tree* tree = nullptr;
  if (git_commit_tree(&tree, commit.get()) < 0) return Err(GitError("read snapshot tree"));
  return TreePtr(tree);
}

Result<TreePtr> LookupTree(git_repository* repo, const git_oid& tree_id) {
  git_tree* tree = nullptr;
  if (git_tree_lookup(&tree, repo, &tree_id) < 0) return Err(GitError("read tree"));
  return TreePtr(tree);
}

CheckpointInfo InfoOf(git_repository* repo, const SnapshotRef& ref) {
  CheckpointInfo info;
  info.hash = OidHex(ref.commit);
  info.short_hash = info.hash.substr(0, kShortHash);
  info.timestamp = ref.time;
  git_commit* raw = nullptr;
  if (git_commit_lookup(&raw, repo, &ref.commit) == 0) {
    CommitPtr commit(raw);
    const char* message = git_commit_message(commit.get());
    info.reason = message != nullptr ? message : "";
  }
  return info;
}

// The snapshot whose hash starts with `prefix`. NotFound: none; InvalidArgument: several.
Result<SnapshotRef> FindSnapshot(git_repository* repo, const std::string& prefix) {
  std::vector<SnapshotRef> refs = TALARIA_TRY(ListSnapshots(repo));
  std::optional<SnapshotRef> found;
  for (const SnapshotRef& ref : refs) {
    if (!OidHex(ref.commit).starts_with(prefix)) continue;
    if (found && !git_oid_equal(&found->commit, &ref.commit)) {
      return Err(InvalidArgumentError("checkpoints: '" + prefix + "' names several snapshots"));
    }
    found = ref;
  }
  if (!found) return Err(NotFoundError("checkpoints: no snapshot " + prefix));
  return *found;
}

int64_t MtimeNs(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return 0;
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
}

class StoreImpl final : public CheckpointStore {
 public:
  explicit StoreImpl(CheckpointSettings settings) : settings_(std::move(settings)) {}

  const CheckpointSettings& settings() const override { return settings_; }

  Result<SnapshotOutcome> Snapshot(std::string_view dir, std::string_view reason) override {
    const std::string workdir = TALARIA_TRY(AllowedDirectory(dir));
    SnapshotOutcome outcome;
    {
      ProjectStore project = TALARIA_TRY(OpenProject(settings_.root, workdir, Create::kYes));
      outcome = TALARIA_TRY(TakeLocked(project, reason));
      if (outcome.kind != SnapshotKind::kTaken) return outcome;
      TALARIA_RETURN_IF_ERROR(PruneToCount(project, settings_.max_snapshots));
      TouchProjectRecord(project);
    }
    // The total cap, after the project's lock is released (it locks projects one at a time).
    const bool dropped = TALARIA_TRY(
        EnforceTotalCap(settings_.root, settings_.max_total_bytes, workdir, outcome.hash));
    if (dropped) {
      outcome.kind = SnapshotKind::kSkipped;
      outcome.note = "the snapshot alone is larger than checkpoints.max_total_size_mb";
      outcome.hash.clear();
    }
    return outcome;
  }

  Result<std::vector<CheckpointInfo>> List(std::string_view dir) override {
    const std::string workdir = TALARIA_TRY(RealDirectory(dir));
    auto project = OpenProject(settings_.root, workdir, Create::kNo);
    if (!project) {
      if (project.error().code() == StatusCode::kNotFound) return std::vector<CheckpointInfo>{};
      return Err(project.error());
    }
    git_repository* repo = project->repo.get();
    std::vector<SnapshotRef> refs = TALARIA_TRY(ListSnapshots(repo));
    std::vector<CheckpointInfo> out;
    TreePtr previous;
    for (const SnapshotRef& ref : refs) {  // oldest first: each against the one before
      CheckpointInfo info = InfoOf(repo, ref);
      TreePtr tree = TALARIA_TRY(TreeOf(repo, ref.commit));
      git_diff* raw = nullptr;
      if (git_diff_tree_to_tree(&raw, repo, previous.get(), tree.get(), nullptr) < 0) {
        return Err(GitError("diff snapshots"));
      }
      DiffPtr diff(raw);
      git_diff_stats* stats_raw = nullptr;
      if (git_diff_get_stats(&stats_raw, diff.get()) == 0) {
        DiffStatsPtr stats(stats_raw);
        info.files_changed = static_cast<int>(git_diff_stats_files_changed(stats.get()));
        info.insertions = static_cast<int>(git_diff_stats_insertions(stats.get()));
        info.deletions = static_cast<int>(git_diff_stats_deletions(stats.get()));
      }
      out.push_back(std::move(info));
      previous = std::move(tree);
    }
    std::reverse(out.begin(), out.end());
    return out;
  }

  Result<std::string> Diff(std::string_view dir, std::string_view hash) override {
    const std::string prefix = TALARIA_TRY(ValidHash(hash));
    const std::string workdir = TALARIA_TRY(RealDirectory(dir));
    ProjectStore project = TALARIA_TRY(OpenProject(settings_.root, workdir, Create::kNo));
    git_repository* repo = project.repo.get();
    const SnapshotRef ref = TALARIA_TRY(FindSnapshot(repo, prefix));
    TreePtr then = TALARIA_TRY(TreeOf(repo, ref.commit));
    // The present as a tree (its blobs land in the store; the next sweep drops them if no
    // snapshot keeps them). The index file is not written: it stays the latest snapshot's.
    IndexPtr index = TALARIA_TRY(OpenIndex(project));
    const git_oid now_id = TALARIA_TRY(ScanPresent(project, index.get(), nullptr));
    TreePtr now = TALARIA_TRY(LookupTree(repo, now_id));
    git_diff* raw = nullptr;
    if (git_diff_tree_to_tree(&raw, repo, then.get(), now.get(), nullptr) < 0) {
      return Err(GitError("diff"));
    }
    DiffPtr diff(raw);
    git_buf buf{};
    if (git_diff_to_buf(&buf, diff.get(), GIT_DIFF_FORMAT_PATCH) < 0) {
      return Err(GitError("format diff"));
    }
    std::string text(buf.ptr != nullptr ? buf.ptr : "", buf.size);
    git_buf_dispose(&buf);
    return text;
  }

  Result<RestoreOutcome> Restore(std::string_view dir, std::string_view hash,
                                 std::optional<std::string> file) override {
    const std::string prefix = TALARIA_TRY(ValidHash(hash));
    const std::string workdir = TALARIA_TRY(AllowedDirectory(dir));
    std::optional<std::string> rel;
    if (file) rel = TALARIA_TRY(ValidFile(*file, workdir));
    RestoreOutcome outcome;
    {
      ProjectStore project = TALARIA_TRY(OpenProject(settings_.root, workdir, Create::kNo));
      git_repository* repo = project.repo.get();
      const SnapshotRef ref = TALARIA_TRY(FindSnapshot(repo, prefix));
      const CheckpointInfo info = InfoOf(repo, ref);
      outcome.restored_to = info.short_hash;
      outcome.reason = info.reason;
      outcome.directory = workdir;
      if (rel) outcome.file = *rel;
      TreePtr tree = TALARIA_TRY(TreeOf(repo, ref.commit));

      std::vector<SnapshotEntry> blobs;
      if (rel) {
        git_tree_entry* raw = nullptr;
        if (git_tree_entry_bypath(&raw, tree.get(), rel->c_str()) < 0) {
          return Err(
              NotFoundError("checkpoints: " + *rel + " is not in snapshot " + info.short_hash));
        }
        TreeEntryPtr entry(raw);
        if (git_tree_entry_type(entry.get()) != GIT_OBJECT_BLOB) {
          return Err(InvalidArgumentError("checkpoints: " + *rel + " is a directory in snapshot " +
                                          info.short_hash + "; restore the whole snapshot"));
        }
        blobs.push_back(
            {*rel, *git_tree_entry_id(entry.get()), git_tree_entry_filemode(entry.get())});
      } else {
        auto collect = [](const char* root, const git_tree_entry* entry, void* payload) -> int {
          if (git_tree_entry_type(entry) != GIT_OBJECT_BLOB) return 0;
          static_cast<std::vector<SnapshotEntry>*>(payload)->push_back(
              {std::string(root) + git_tree_entry_name(entry), *git_tree_entry_id(entry),
               git_tree_entry_filemode(entry)});
          return 0;
        };
        if (git_tree_walk(tree.get(), GIT_TREEWALK_PRE, collect, &blobs) < 0) {
          return Err(GitError("walk snapshot"));
        }
      }

      // The present first, so a restore can itself be undone.
      const SnapshotOutcome pre = TALARIA_TRY(
          TakeLocked(project, "pre-rollback snapshot (restoring " + info.short_hash + ")"));
      if (pre.kind == SnapshotKind::kTaken) outcome.pre_rollback = pre.hash.substr(0, kShortHash);
      // What the pre-rollback snapshot holds may be removed to make way (a directory where the
      // snapshot has a link or a file): it can be brought back from there.
      TreePtr pre_tree;
      if (pre.kind == SnapshotKind::kTaken || pre.kind == SnapshotKind::kUnchanged) {
        git_oid pre_id;
        if (git_oid_fromstr(&pre_id, pre.hash.c_str()) == 0) {
          auto t = TreeOf(repo, pre_id);
          if (t) pre_tree = std::move(*t);
        }
      }
      const KeptBySnapshot kept = [&pre_tree](std::string_view path) {
        if (pre_tree == nullptr) return false;
        git_tree_entry* raw = nullptr;
        if (git_tree_entry_bypath(&raw, pre_tree.get(), std::string(path).c_str()) < 0) {
          return false;
        }
        TreeEntryPtr entry(raw);
        return git_tree_entry_type(entry.get()) == GIT_OBJECT_BLOB;
      };
      TALARIA_RETURN_IF_ERROR(WriteBlobs(repo, workdir, blobs, kept, outcome));
      TALARIA_RETURN_IF_ERROR(PruneToCount(project, settings_.max_snapshots));
      TouchProjectRecord(project);
    }
    (void)TALARIA_TRY(EnforceTotalCap(settings_.root, settings_.max_total_bytes, workdir, ""));
    return outcome;
  }

  Result<StoreUsage> Usage() override { return MeasureStore(settings_.root); }

 private:
  // A directory snapshots may be taken of and restored into.
  Result<std::string> AllowedDirectory(std::string_view dir) const {
    std::string workdir = TALARIA_TRY(RealDirectory(dir));
    if (workdir == "/") {
      return Err(PermissionDeniedError("checkpoints: the root directory is never snapshotted"));
    }
    for (const std::string& refused : settings_.refused_dirs) {
      if (!refused.empty() && workdir == RealOrSelf(refused)) {
        return Err(PermissionDeniedError("checkpoints: " + workdir +
                                         " is the home directory; it is never snapshotted"));
      }
    }
    for (const std::string& own : {RealOrSelf(settings_.root), RealOrSelf(TalariaHome())}) {
      if (IsWithin(workdir, own)) {
        return Err(PermissionDeniedError("checkpoints: " + workdir + " is talaria's own state"));
      }
    }
    return workdir;
  }

  Result<IndexPtr> OpenIndex(const ProjectStore& project) const {
    git_index* raw = nullptr;
    if (git_index_open(&raw, project.index_path().c_str()) < 0) {
      // A damaged index is only a cache: start over without it.
      ::unlink(project.index_path().c_str());
      if (git_index_open(&raw, project.index_path().c_str()) < 0) {
        return Err(GitError("open index"));
      }
    }
    return IndexPtr(raw);
  }

  // Scans the project's directory into `index` and writes its tree.
  Result<git_oid> ScanPresent(const ProjectStore& project, git_index* index,
                              ScanReport* report_out) const {
    UniqueFd root_fd(::open(project.workdir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!root_fd.valid()) {
      return Err(InvalidArgumentError("checkpoints: cannot open " + project.workdir + ": " +
                                      std::strerror(errno)));
    }
    ScanLimits limits;
    limits.max_file_bytes = settings_.max_file_bytes;
    limits.max_files = settings_.max_files;
    limits.deadline = std::chrono::steady_clock::now() + settings_.timeout;
    limits.racy_after_ns = MtimeNs(project.index_path());
    for (const std::string& own : {settings_.root, TalariaHome()}) {
      struct stat st {};
      if (::stat(own.c_str(), &st) == 0) limits.skip_dirs.emplace_back(st.st_dev, st.st_ino);
    }
    ScanReport report = TALARIA_TRY(SyncIndex(root_fd.get(), project.repo.get(), index, limits));
    git_oid tree_id;
    if (git_index_write_tree_to(&tree_id, index, project.repo.get()) < 0) {
      return Err(GitError("write tree"));
    }
    if (report_out != nullptr) *report_out = std::move(report);
    return tree_id;
  }

  // One snapshot of the locked project (no pruning).
  Result<SnapshotOutcome> TakeLocked(ProjectStore& project, std::string_view reason) const {
    git_repository* repo = project.repo.get();
    IndexPtr index = TALARIA_TRY(OpenIndex(project));
    ScanReport report;
    auto tree_id = ScanPresent(project, index.get(), &report);
    if (!tree_id) {
      const StatusCode code = tree_id.error().code();
      if (code == StatusCode::kResourceExhausted || code == StatusCode::kDeadlineExceeded) {
        return SnapshotOutcome{SnapshotKind::kSkipped, "", tree_id.error().message()};
      }
      return Err(tree_id.error());
    }
    std::vector<SnapshotRef> refs = TALARIA_TRY(ListSnapshots(repo));
    SnapshotOutcome outcome;
    if (report.oversize > 0) {
      outcome.note = std::to_string(report.oversize) +
                     " file(s) over checkpoints.max_file_size_mb " + "left out (" +
                     report.first_oversize + ")";
    }
    if (!refs.empty()) {
      TreePtr latest = TALARIA_TRY(TreeOf(repo, refs.back().commit));
      if (git_oid_equal(git_tree_id(latest.get()), &*tree_id)) {
        (void)git_index_write(index.get());  // keep the refreshed stat data
        outcome.kind = SnapshotKind::kUnchanged;
        outcome.hash = OidHex(refs.back().commit);
        return outcome;
      }
    }
    TreePtr tree = TALARIA_TRY(LookupTree(repo, *tree_id));
    git_signature* sig_raw = nullptr;
    if (git_signature_now(&sig_raw, "talaria", "talaria@localhost") < 0) {
      return Err(GitError("signature"));
    }
    SignaturePtr sig(sig_raw);
    git_oid commit_id;
    const std::string message(reason.empty() ? std::string_view("snapshot") : reason);
    if (git_commit_create(&commit_id, repo, nullptr, sig.get(), sig.get(), nullptr, message.c_str(),
                          tree.get(), 0, nullptr) < 0) {
      return Err(GitError("write snapshot"));
    }
    char name[64];
    std::snprintf(name, sizeof name, "%.*s%010llu", static_cast<int>(kRefPrefix.size()),
                  kRefPrefix.data(),
                  static_cast<unsigned long long>(refs.empty() ? 1 : refs.back().sequence + 1));
    git_reference* ref_raw = nullptr;
    if (git_reference_create(&ref_raw, repo, name, &commit_id, /*force=*/0, nullptr) < 0) {
      return Err(GitError("name snapshot"));
    }
    RefPtr ref(ref_raw);
    if (git_index_write(index.get()) < 0) return Err(GitError("write index"));
    outcome.kind = SnapshotKind::kTaken;
    outcome.hash = OidHex(commit_id);
    return outcome;
  }

  // Writes the snapshot's files back through a workspace confined to `workdir`, and its
  // symlinks as links (restore_paths.h); a link standing in the way is replaced, and so is a
  // directory whose every file is `kept` (the pre-rollback snapshot can bring it back).
  static Status WriteBlobs(git_repository* repo, const std::string& workdir,
                           const std::vector<SnapshotEntry>& blobs, const KeptBySnapshot& kept,
                           RestoreOutcome& outcome) {
    safety::WorkspaceOptions options;
    options.roots = {workdir};
    // One syncfs at the end instead of two fsyncs per file (a tree of thousands of files).
    options.durability = safety::Durability::kNone;
    auto ws = safety::Workspace::Open(std::move(options));
    if (!ws) return ws.error();
    UniqueFd root(::open(workdir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!root.valid()) {
      return InternalError("checkpoints: cannot open " + workdir + ": " + std::strerror(errno));
    }
    size_t failed = 0;
    std::string first_failure;
    for (const SnapshotEntry& entry : blobs) {
      const std::string& path = entry.path;
      git_blob* raw = nullptr;
      Status s = Status::Ok();
      if (git_blob_lookup(&raw, repo, &entry.id) < 0) {
        s = GitError("read " + path);
      } else {
        BlobPtr blob(raw);
        const std::string_view content(static_cast<const char*>(git_blob_rawcontent(blob.get())),
                                       static_cast<size_t>(git_blob_rawsize(blob.get())));
        s = WriteEntry(**ws, root.get(), entry, content, kept);
      }
      if (s.ok()) {
        outcome.files_restored.push_back(path);
      } else if (failed++ == 0) {
        first_failure = path + ": " + s.message();
      }
    }
    (void)::syncfs(root.get());
    if (failed > 0) {
      return InternalError(
          "checkpoints: " + std::to_string(failed) + " file(s) not restored (" + first_failure +
          "); the pre-rollback snapshot " +
          (outcome.pre_rollback.empty() ? std::string("-") : outcome.pre_rollback) +
          " holds the state before");
    }
    return Status::Ok();
  }

  // One entry: its parents made real directories, a link or a kept directory in its place
  // removed, then the file through the workspace (its policy: never a sensitive path) or the
  // link in place.
  static Status WriteEntry(const safety::Workspace& ws, int root_fd, const SnapshotEntry& entry,
                           std::string_view content, const KeptBySnapshot& kept) {
    const std::string& path = entry.path;
    const size_t slash = path.rfind('/');
    const std::string_view leaf = slash == std::string::npos
                                      ? std::string_view(path)
                                      : std::string_view(path).substr(slash + 1);
    UniqueFd parent = TALARIA_TRY(OpenParentBeneath(root_fd, path));
    TALARIA_RETURN_IF_ERROR(RemoveLinkEntry(parent.get(), leaf));
    // Before the workspace's check, which refuses a directory standing where a file goes.
    TALARIA_RETURN_IF_ERROR(RemoveDirectoryEntry(parent.get(), leaf, path, kept));
    TALARIA_RETURN_IF_ERROR(ws.CheckWritable(path));
    if (entry.mode == GIT_FILEMODE_LINK) return PlaceLinkEntry(parent.get(), leaf, content);
    auto written = ws.WriteAtomic(path, content);
    return written ? Status::Ok() : written.error();
  }

  CheckpointSettings settings_;
};

}  // namespace

Result<std::shared_ptr<CheckpointStore>> OpenGitStore(CheckpointSettings settings) {
  TALARIA_RETURN_IF_ERROR(InitLibgit2());
  std::error_code ec;
  std::filesystem::create_directories(settings.root, ec);
  if (ec) {
    return Err(InternalError("checkpoints: cannot create " + settings.root + ": " + ec.message()));
  }
  ::chmod(settings.root.c_str(), 0700);
  return std::shared_ptr<CheckpointStore>(std::make_shared<StoreImpl>(std::move(settings)));
}

}  // namespace talaria::checkpoints
