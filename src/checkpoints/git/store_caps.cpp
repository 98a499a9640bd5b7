#include "checkpoints/git/store_caps.h"

#include <sys/stat.h>

#include <algorithm>
#include <deque>
#include <filesystem>
#include <vector>

namespace talaria::checkpoints {
namespace {

namespace fs = std::filesystem;

struct ProjectView {
  std::string path;
  std::string workdir;
  uint64_t bytes = 0;
  std::deque<SnapshotRef> refs;  // oldest first
  bool busy = false;
};

std::vector<std::string> ProjectPaths(const std::string& root) {
  std::vector<std::string> out;
  std::error_code ec;
  for (fs::directory_iterator e(root, ec), end; !ec && e != end; e.increment(ec)) {
    std::error_code kind;
    if (e->is_directory(kind) && e->path().filename().string().size() == 16) {
      out.push_back(e->path().string());
    }
  }
  return out;
}

bool DirectoryExists(const std::string& path) {
  struct stat st {};
  return !path.empty() && ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

}  // namespace

Status PruneToCount(ProjectStore& project, int max_snapshots) {
  std::vector<SnapshotRef> refs = TALARIA_TRY(ListSnapshots(project.repo.get()));
  const size_t keep = static_cast<size_t>(std::max(max_snapshots, 1));
  if (refs.size() <= keep) return Status::Ok();
  for (size_t i = 0; i + keep < refs.size(); ++i) {
    if (git_reference_remove(project.repo.get(), refs[i].name.c_str()) < 0) {
      return GitError("drop snapshot");
    }
  }
  return SweepUnreachable(project);
}

Result<bool> EnforceTotalCap(const std::string& root, uint64_t max_bytes,
                             const std::string& current_workdir, const std::string& current_hash) {
  uint64_t total = DirectoryBytes(root);
  if (total <= max_bytes) return false;

  std::vector<ProjectView> views;
  for (const std::string& path : ProjectPaths(root)) {
    auto project = OpenProjectAt(path, LockWait::kTry);
    if (!project) continue;  // busy, or not a project: passed over
    ProjectView view;
    view.path = path;
    view.workdir = project->workdir;
    // A project whose directory is gone can never be restored into: it goes first, whole.
    if (view.workdir != current_workdir && !DirectoryExists(view.workdir)) {
      const uint64_t bytes = DirectoryBytes(path);
      std::error_code ec;
      fs::remove_all(path, ec);
      total -= std::min(total, bytes);
      continue;
    }
    auto refs = ListSnapshots(project->repo.get());
    if (!refs) continue;
    view.refs.assign(refs->begin(), refs->end());
    view.bytes = DirectoryBytes(path);
    views.push_back(std::move(view));
  }

  bool dropped_current = false;
  while (total > max_bytes) {
    // The oldest snapshot of all; the one just taken only when nothing else is left.
    ProjectView* pick = nullptr;
    for (ProjectView& v : views) {
      if (v.busy || v.refs.empty()) continue;
      const SnapshotRef& front = v.refs.front();
      const bool is_current = !current_hash.empty() && OidHex(front.commit) == current_hash;
      if (is_current && v.refs.size() == 1) {
        bool others = std::any_of(views.begin(), views.end(), [&v](const ProjectView& o) {
          return &o != &v && !o.busy && !o.refs.empty();
        });
        if (others) continue;
      }
      // Commit times are whole seconds: on a tie the project with more snapshots gives one up,
      // so a burst of snapshots does not empty one project while another keeps all of its.
      if (pick == nullptr || front.time < pick->refs.front().time ||
          (front.time == pick->refs.front().time && v.refs.size() > pick->refs.size())) {
        pick = &v;
      }
    }
    if (pick == nullptr) break;  // everything left is busy: the next snapshot tries again
    auto project = OpenProjectAt(pick->path, LockWait::kTry);
    if (!project) {
      pick->busy = true;
      continue;
    }
    const SnapshotRef ref = pick->refs.front();
    pick->refs.pop_front();
    if (OidHex(ref.commit) == current_hash) dropped_current = true;
    if (git_reference_remove(project->repo.get(), ref.name.c_str()) < 0) {
      return Err(GitError("drop snapshot"));
    }
    uint64_t after = 0;
    if (pick->refs.empty()) {
      // No snapshot left: the whole project goes (its index would only pin swept blobs).
      std::error_code ec;
      fs::remove_all(pick->path, ec);
    } else {
      TALARIA_RETURN_IF_ERROR(SweepUnreachable(*project));
      after = DirectoryBytes(pick->path);
    }
    total -= std::min(total, pick->bytes - std::min(pick->bytes, after));
    pick->bytes = after;
  }
  return dropped_current;
}

Result<StoreUsage> MeasureStore(const std::string& root) {
  StoreUsage usage;
  usage.bytes = DirectoryBytes(root);
  for (const std::string& path : ProjectPaths(root)) {
    auto project = OpenProjectAt(path, LockWait::kBlock);
    if (!project) continue;
    ++usage.projects;
    if (auto refs = ListSnapshots(project->repo.get())) usage.snapshots += refs->size();
  }
  return usage;
}

}  // namespace talaria::checkpoints
