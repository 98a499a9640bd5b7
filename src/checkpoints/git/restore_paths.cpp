#include "checkpoints/git/restore_paths.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>
#include <string>

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

}  // namespace

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
