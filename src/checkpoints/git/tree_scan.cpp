#include "checkpoints/git/tree_scan.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <string_view>
#include <unordered_map>

#include "checkpoints/exclusions.h"
#include "checkpoints/git/git_util.h"
#include "talaria/base/unique_fd.h"

namespace talaria::checkpoints {
namespace {

constexpr int kMaxDepth = 128;

// What the previous scan knew about a file: enough to tell it has not changed.
struct Known {
  git_oid id;
  int32_t mtime_s;
  uint32_t mtime_ns;
  uint32_t size;
  uint32_t ino;
  uint32_t mode;
};

// git's own rule for "not text": a NUL byte in the first 8000 bytes.
bool LooksBinary(std::string_view content) {
  return std::memchr(content.data(), '\0', std::min<size_t>(content.size(), 8000)) != nullptr;
}

Status IoError(std::string_view what, const std::string& path) {
  return InternalError("checkpoints: " + std::string(what) + " " + path + ": " +
                       std::strerror(errno));
}

// Reads a regular file beneath `dir_fd` without following a symlink at the leaf. nullopt when it
// is no longer a regular file, or grew past `max_bytes` (then *oversize is set).
Result<std::optional<std::string>> ReadBeneath(int dir_fd, const char* name,
                                               const std::string& path, uint64_t max_bytes,
                                               bool* oversize) {
  UniqueFd fd(::openat(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  if (!fd.valid()) {
    if (errno == ENOENT || errno == ELOOP || errno == EACCES) return std::nullopt;
    return Err(IoError("open", path));
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return Err(IoError("stat", path));
  if (!S_ISREG(st.st_mode)) return std::nullopt;
  std::string content;
  content.resize(
      static_cast<size_t>(std::min<uint64_t>(static_cast<uint64_t>(st.st_size), max_bytes)) + 1);
  size_t got = 0;
  while (got < content.size()) {
    const ssize_t n = ::read(fd.get(), content.data() + got, content.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Err(IoError("read", path));
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  if (got > max_bytes) {
    *oversize = true;
    return std::nullopt;
  }
  content.resize(got);
  return std::optional<std::string>(std::move(content));
}

// A symlink's target beneath `dir_fd`, never followed. nullopt when it is no longer a link.
Result<std::optional<std::string>> ReadLinkBeneath(int dir_fd, const char* name,
                                                   const std::string& path) {
  std::string target(PATH_MAX, '\0');
  const ssize_t n = ::readlinkat(dir_fd, name, target.data(), target.size());
  if (n < 0) {
    if (errno == ENOENT || errno == EINVAL || errno == EACCES) return std::nullopt;
    return Err(IoError("readlink", path));
  }
  // A target of PATH_MAX bytes or more may be cut: left out rather than stored wrong.
  if (n == 0 || static_cast<size_t>(n) >= target.size()) return std::nullopt;
  target.resize(static_cast<size_t>(n));
  return std::optional<std::string>(std::move(target));
}

class Scanner {
 public:
  Scanner(git_repository* repo, git_index* index, const ScanLimits& limits)
      : repo_(repo), index_(index), limits_(limits) {}

  Result<ScanReport> Run(int root_fd) {
    const size_t count = git_index_entrycount(index_);
    known_.reserve(count);
    for (size_t i = 0; i < count; ++i) {
      const git_index_entry* e = git_index_get_byindex(index_, i);
      if (e == nullptr) continue;
      known_.emplace(e->path, Known{e->id, e->mtime.seconds, e->mtime.nanoseconds, e->file_size,
                                    e->ino, e->mode});
    }
    if (git_index_clear(index_) < 0) return Err(GitError("clear index"));
    const int dup = ::fcntl(root_fd, F_DUPFD_CLOEXEC, 0);
    if (dup < 0) return Err(IoError("dup", "."));
    TALARIA_RETURN_IF_ERROR(Walk(UniqueFd(dup), "", 0));
    return report_;
  }

 private:
  Status Walk(UniqueFd dir_fd, const std::string& prefix, int depth) {
    DIR* dir = ::fdopendir(dir_fd.get());
    if (dir == nullptr) return IoError("opendir", prefix.empty() ? "." : prefix);
    (void)dir_fd.release();  // the DIR owns it now
    struct CloseDir {
      DIR* d;
      ~CloseDir() { ::closedir(d); }
    } close_dir{dir};
    const int fd = ::dirfd(dir);
    while (true) {
      errno = 0;
      const dirent* ent = ::readdir(dir);
      if (ent == nullptr) {
        if (errno != 0) return IoError("readdir", prefix.empty() ? "." : prefix);
        return Status::Ok();
      }
      const std::string_view name = ent->d_name;
      if (name == "." || name == "..") continue;
      if ((++visited_ & 255) == 0 && std::chrono::steady_clock::now() >= limits_.deadline) {
        return DeadlineExceededError("checkpoints: scanning the directory took too long");
      }
      struct stat st {};
      if (::fstatat(fd, ent->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;  // gone since
      const std::string path = prefix + std::string(name);
      if (S_ISDIR(st.st_mode)) {
        // Past kMaxDepth a tree is left out rather than holding a descriptor per level.
        if (IsExcludedDirName(name) || Skipped(st) || depth >= kMaxDepth) continue;
        UniqueFd sub(::openat(fd, ent->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (!sub.valid()) continue;  // unreadable or replaced: left out, not fatal
        TALARIA_RETURN_IF_ERROR(Walk(std::move(sub), path + "/", depth + 1));
      } else if (S_ISREG(st.st_mode) && !IsExcludedFileName(name)) {
        TALARIA_RETURN_IF_ERROR(AddFile(fd, ent->d_name, path, st));
      } else if (S_ISLNK(st.st_mode) && !IsExcludedFileName(name) && !IsExcludedDirName(name)) {
        // The link itself (its target text), as git keeps one; never what it points at. A
        // link named like an excluded directory (node_modules -> a shared store) stays out.
        TALARIA_RETURN_IF_ERROR(AddFile(fd, ent->d_name, path, st));
      }
    }
  }

  bool Skipped(const struct stat& st) const {
    return std::any_of(limits_.skip_dirs.begin(), limits_.skip_dirs.end(), [&st](const auto& d) {
      return d.first == st.st_dev && d.second == st.st_ino;
    });
  }

  Status AddFile(int dir_fd, const char* name, const std::string& path, const struct stat& st) {
    if (static_cast<uint64_t>(st.st_size) > limits_.max_file_bytes) {
      NoteOversize(path);
      return Status::Ok();
    }
    if (report_.files + 1 > limits_.max_files) {
      return ResourceExhaustedError("checkpoints: the directory has more than " +
                                    std::to_string(limits_.max_files) + " files");
    }
    git_index_entry entry{};
    entry.mtime.seconds = static_cast<int32_t>(st.st_mtim.tv_sec);
    entry.mtime.nanoseconds = static_cast<uint32_t>(st.st_mtim.tv_nsec);
    entry.ctime.seconds = static_cast<int32_t>(st.st_ctim.tv_sec);
    entry.ctime.nanoseconds = static_cast<uint32_t>(st.st_ctim.tv_nsec);
    entry.dev = static_cast<uint32_t>(st.st_dev);
    entry.ino = static_cast<uint32_t>(st.st_ino);
    const bool link = S_ISLNK(st.st_mode);
    if (link) {
      entry.mode = GIT_FILEMODE_LINK;
    } else {
      entry.mode = (st.st_mode & S_IXUSR) != 0 ? GIT_FILEMODE_BLOB_EXECUTABLE : GIT_FILEMODE_BLOB;
    }
    entry.file_size = static_cast<uint32_t>(st.st_size);
    entry.path = path.c_str();

    const int64_t mtime_ns =
        static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
    auto it = known_.find(path);
    if (it != known_.end() && mtime_ns < limits_.racy_after_ns &&
        it->second.mtime_s == entry.mtime.seconds &&
        it->second.mtime_ns == entry.mtime.nanoseconds && it->second.size == entry.file_size &&
        it->second.ino == entry.ino && it->second.mode == entry.mode) {
      entry.id = it->second.id;
    } else {
      bool oversize = false;
      auto content =
          link ? TALARIA_TRY(ReadLinkBeneath(dir_fd, name, path))
               : TALARIA_TRY(ReadBeneath(dir_fd, name, path, limits_.max_file_bytes, &oversize));
      if (oversize) NoteOversize(path);
      if (!content || (!link && LooksBinary(*content))) return Status::Ok();
      if (git_blob_create_from_buffer(&entry.id, repo_, content->data(), content->size()) < 0) {
        return GitError("write blob " + path);
      }
      entry.file_size = static_cast<uint32_t>(content->size());
      ++report_.read;
    }
    if (git_index_add(index_, &entry) < 0) return GitError("index " + path);
    ++report_.files;
    return Status::Ok();
  }

  void NoteOversize(const std::string& path) {
    if (report_.oversize++ == 0) report_.first_oversize = path;
  }

  git_repository* repo_;
  git_index* index_;
  const ScanLimits& limits_;
  std::unordered_map<std::string, Known> known_;
  ScanReport report_;
  size_t visited_ = 0;
};

}  // namespace

Result<ScanReport> SyncIndex(int root_fd, git_repository* repo, git_index* index,
                             const ScanLimits& limits) {
  return Scanner(repo, index, limits).Run(root_fd);
}

}  // namespace talaria::checkpoints
