#include "checkpoints/git/restore_paths.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace talaria::checkpoints {
namespace {

Status IoError(std::string_view what, std::string_view path) {
  return InternalError("checkpoints: " + std::string(what) + " " + std::string(path) + ": " +
                       std::strerror(errno));
}

Result<UniqueFd> OpenDirNoFollow(int dir_fd, const std::string& name, std::string_view path) {
  UniqueFd fd(::openat(dir_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) {
    // ELOOP/ENOTDIR: swapped for a link or a file since it was looked at.
    if (errno == ELOOP || errno == ENOTDIR) {
      return Err(FailedPreconditionError("checkpoints: " + std::string(path) +
                                         " changed while it was restored"));
    }
    return Err(IoError("open", path));
  }
  return fd;
}

constexpr int kMaxDepth = 256;

// The names in directory `fd` but "." and "..". The descriptor is duplicated for the listing,
// so `fd` stays usable.
Result<std::vector<std::string>> ListNames(int fd, std::string_view path) {
  const int dup = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (dup < 0) return Err(IoError("dup", path));
  std::unique_ptr<DIR, int (*)(DIR*)> dir(::fdopendir(dup), &::closedir);
  if (dir == nullptr) {
    ::close(dup);
    return Err(IoError("list", path));
  }
  // The duplicate shares the directory's offset with `fd`: an earlier listing left it at the
  // end.
  ::rewinddir(dir.get());
  std::vector<std::string> names;
  errno = 0;
  while (const dirent* e = ::readdir(dir.get())) {
    const std::string_view name = e->d_name;
    if (name != "." && name != "..") names.emplace_back(name);
  }
  if (errno != 0) return Err(IoError("list", path));
  return names;
}

enum class TreePass { kCheck, kRemove };

// kCheck: fails on the first file or link under directory `fd` that is not kept. kRemove:
// unlinks what is kept, then each emptied directory; anything else left makes rmdir fail.
Status WalkTree(int fd, const std::string& rel, const std::string& top, const KeptBySnapshot& kept,
                TreePass pass, int depth) {
  if (depth > kMaxDepth) {
    return FailedPreconditionError("checkpoints: " + rel + " is nested deeper than " +
                                   std::to_string(kMaxDepth) + " levels");
  }
  const std::vector<std::string> names = TALARIA_TRY(ListNames(fd, rel));
  for (const std::string& name : names) {
    const std::string path = rel + "/" + name;
    struct stat st {};
    if (::fstatat(fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno == ENOENT) continue;
      return IoError("stat", path);
    }
    if (S_ISDIR(st.st_mode)) {
      UniqueFd sub = TALARIA_TRY(OpenDirNoFollow(fd, name, path));
      TALARIA_RETURN_IF_ERROR(WalkTree(sub.get(), path, top, kept, pass, depth + 1));
      if (pass == TreePass::kRemove && ::unlinkat(fd, name.c_str(), AT_REMOVEDIR) != 0) {
        return IoError("remove the directory", path);
      }
      continue;
    }
    const bool is_kept = (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)) && kept(path);
    if (pass == TreePass::kCheck && !is_kept) {
      return FailedPreconditionError(
          "checkpoints: " + path +
          " is not in the pre-rollback snapshot (left out by the exclusions or the size cap, or "
          "not a regular file), so the directory " +
          top + " is not replaced; move it away and restore again");
    }
    if (pass == TreePass::kRemove && is_kept && ::unlinkat(fd, name.c_str(), 0) != 0 &&
        errno != ENOENT) {
      return IoError("remove", path);
    }
  }
  return Status::Ok();
}

}  // namespace

Status RemoveDirectoryEntry(int dir_fd, std::string_view name, std::string_view rel,
                            const KeptBySnapshot& kept) {
  const std::string leaf(name);
  const std::string path(rel);
  struct stat st {};
  if (::fstatat(dir_fd, leaf.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode)) {
    return Status::Ok();
  }
  UniqueFd dir = TALARIA_TRY(OpenDirNoFollow(dir_fd, leaf, path));
  // Everything is checked before anything is removed: a refusal leaves the directory whole.
  TALARIA_RETURN_IF_ERROR(WalkTree(dir.get(), path, path, kept, TreePass::kCheck, 0));
  TALARIA_RETURN_IF_ERROR(WalkTree(dir.get(), path, path, kept, TreePass::kRemove, 0));
  if (::unlinkat(dir_fd, leaf.c_str(), AT_REMOVEDIR) != 0) {
    if (errno == ENOTEMPTY || errno == EEXIST) {
      return FailedPreconditionError("checkpoints: " + path +
                                     " gained entries while it was replaced; it stays");
    }
    return IoError("remove the directory", path);
  }
  return Status::Ok();
}

Result<UniqueFd> OpenParentBeneath(int root_fd, std::string_view rel) {
  const int dup = ::fcntl(root_fd, F_DUPFD_CLOEXEC, 0);
  if (dup < 0) return Err(IoError("dup", "."));
  UniqueFd dir(dup);
  size_t start = 0;
  for (size_t slash = rel.find('/'); slash != std::string_view::npos;
       start = slash + 1, slash = rel.find('/', start)) {
    const std::string name(rel.substr(start, slash - start));
    const std::string_view so_far = rel.substr(0, slash);
    struct stat st {};
    bool make = false;
    if (::fstatat(dir.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno != ENOENT) return Err(IoError("stat", so_far));
      make = true;
    } else if (S_ISLNK(st.st_mode)) {
      if (::unlinkat(dir.get(), name.c_str(), 0) != 0 && errno != ENOENT) {
        return Err(IoError("remove the symlink", so_far));
      }
      make = true;
    } else if (!S_ISDIR(st.st_mode)) {
      return Err(FailedPreconditionError("checkpoints: " + std::string(so_far) +
                                         " is a directory in the snapshot but not in the present"));
    }
    if (make && ::mkdirat(dir.get(), name.c_str(), 0755) != 0 && errno != EEXIST) {
      return Err(IoError("create directory", so_far));
    }
    dir = TALARIA_TRY(OpenDirNoFollow(dir.get(), name, so_far));
  }
  return dir;
}

Status RemoveLinkEntry(int dir_fd, std::string_view name) {
  const std::string leaf(name);
  struct stat st {};
  if (::fstatat(dir_fd, leaf.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISLNK(st.st_mode)) {
    return Status::Ok();
  }
  if (::unlinkat(dir_fd, leaf.c_str(), 0) != 0 && errno != ENOENT) {
    return IoError("remove the symlink", name);
  }
  return Status::Ok();
}

Status PlaceLinkEntry(int dir_fd, std::string_view name, std::string_view target) {
  if (target.empty() || target.find('\0') != std::string_view::npos) {
    return InvalidArgumentError("checkpoints: the snapshot's link " + std::string(name) +
                                " has no usable target");
  }
  const std::string leaf(name);
  struct stat st {};
  if (::fstatat(dir_fd, leaf.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode)) {
    return FailedPreconditionError("checkpoints: " + leaf +
                                   " is a directory in the present; a link cannot replace it");
  }
  std::random_device rd;
  const std::string temp = "." + leaf.substr(0, 200) + ".talaria-link-" + std::to_string(rd());
  if (::symlinkat(std::string(target).c_str(), dir_fd, temp.c_str()) != 0) {
    return IoError("create the symlink", name);
  }
  // rename(2) replaces a file or a link named `leaf` itself; it never follows one.
  if (::renameat(dir_fd, temp.c_str(), dir_fd, leaf.c_str()) != 0) {
    Status failed = IoError("place the symlink", name);
    (void)::unlinkat(dir_fd, temp.c_str(), 0);
    return failed;
  }
  return Status::Ok();
}

}  // namespace talaria::checkpoints
