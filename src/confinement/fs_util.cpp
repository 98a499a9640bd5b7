#include "talaria/confinement/fs_util.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace talaria::safety::internal {
namespace {

// Some magic numbers are missing from older linux/magic.h.
constexpr unsigned long kProcSuperMagic = 0x9fa0;
constexpr unsigned long kSysfsMagic = 0x62656572;
constexpr unsigned long kDevptsSuperMagic = 0x1cd1;
constexpr unsigned long kDebugfsMagic = 0x64626720;
constexpr unsigned long kTracefsMagic = 0x74726163;
constexpr unsigned long kSecurityfsMagic = 0x73636673;
constexpr unsigned long kEfivarfsMagic = 0xde5e81e4;
constexpr unsigned long kConfigfsMagic = 0x62656570;
constexpr unsigned long kBpfFsMagic = 0xcafe4a11;

std::string Quote(std::string_view s) { return "'" + std::string(s) + "'"; }

}  // namespace

int Openat2(int dir_fd, const char* path, uint64_t flags, uint64_t mode, uint64_t resolve) {
  struct open_how how {};
  how.flags = flags;
  how.mode = mode;
  how.resolve = resolve;
  int eagain_left = 64;
  for (;;) {
    long fd = ::syscall(SYS_openat2, dir_fd, path, &how, sizeof(how));
    if (fd >= 0) return static_cast<int>(fd);
    if (errno == EINTR) continue;
    // EAGAIN: the kernel saw a concurrent rename while resolving ".." (from a symlink target)
    // and refused rather than risk an escape; a retry is safe.
    if (errno == EAGAIN && eagain_left-- > 0) continue;
    return -1;
  }
}

bool HaveOpenat2() {
  int fd = Openat2(AT_FDCWD, "/", O_PATH | O_CLOEXEC, 0, 0);
  if (fd < 0) return errno != ENOSYS;
  ::close(fd);
  return true;
}

Status ErrnoStatus(int err, std::string_view op, std::string_view shown) {
  const std::string p = Quote(shown);
  switch (err) {
    case ENOENT:
      return NotFoundError("File not found: " + p);
    case ENOTDIR:
      return NotFoundError("File not found: " + p +
                           " (a component of the path is not a directory)");
    case EXDEV:
      return PermissionDeniedError("Access denied: " + p +
                                   " resolves outside the workspace (through a symlink; "
                                   "absolute symlinks are never followed inside the workspace)");
    case ELOOP:
      return PermissionDeniedError("Access denied: " + p +
                                   " goes through a symlink that is not allowed here (a loop, a "
                                   "/proc magic link, or a symlink where none may be followed)");
    case EACCES:
    case EPERM:
      return PermissionDeniedError("Permission denied: " + p + " (" + std::string(op) + ")");
    case EROFS:
      return PermissionDeniedError("Read-only file system: " + p);
    case ENAMETOOLONG:
      return InvalidArgumentError("Path too long: " + p);
    case EISDIR:
      return InvalidArgumentError(p + " is a directory, not a file");
    case EEXIST:
      return AlreadyExistsError(p + " already exists");
    case ENOTEMPTY:
      return FailedPreconditionError(p + " is a non-empty directory");
    case ENOSPC:
      return ResourceExhaustedError("No space left on device while writing " + p);
    case EDQUOT:
      return ResourceExhaustedError("Disk quota exceeded while writing " + p);
    case EMFILE:
    case ENFILE:
      return ResourceExhaustedError("Too many open files while opening " + p);
    case ENOMEM:
      return ResourceExhaustedError("Out of memory while opening " + p);
    case ETXTBSY:
      return FailedPreconditionError(p + " is a running executable");
    default:
      return InternalError(std::string(op) + " " + p + ": " + std::strerror(err));
  }
}

Result<std::string> FdRealPath(int fd) {
  char link[40];
  std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  char buf[PATH_MAX + 64];
  const ssize_t n = ::readlink(link, buf, sizeof buf);
  if (n < 0) {
    return Err(InternalError(std::string("cannot determine the real path of an open file "
                                         "(is /proc mounted?): ") +
                             std::strerror(errno)));
  }
  if (static_cast<size_t>(n) >= sizeof buf) return Err(InternalError("real path too long"));
  if (n == 0 || buf[0] != '/') {
    return Err(InternalError("the open file has no path in this mount namespace"));
  }
  return std::string(buf, static_cast<size_t>(n));
}

Result<std::optional<std::string_view>> PseudoFsName(int fd) {
  struct statfs sfs {};
  while (::fstatfs(fd, &sfs) != 0) {
    if (errno == EINTR) continue;
    return Err(InternalError(std::string("fstatfs: ") + std::strerror(errno)));
  }
  switch (static_cast<unsigned long>(sfs.f_type)) {
    case kProcSuperMagic:
      return std::optional<std::string_view>("procfs");
    case kSysfsMagic:
      return std::optional<std::string_view>("sysfs");
    case kDevptsSuperMagic:
      return std::optional<std::string_view>("devpts");
    case kDebugfsMagic:
      return std::optional<std::string_view>("debugfs");
    case kTracefsMagic:
      return std::optional<std::string_view>("tracefs");
    case kSecurityfsMagic:
      return std::optional<std::string_view>("securityfs");
    case kEfivarfsMagic:
      return std::optional<std::string_view>("efivarfs");
    case kConfigfsMagic:
      return std::optional<std::string_view>("configfs");
    case kBpfFsMagic:
      return std::optional<std::string_view>("bpffs");
    default:
      return std::optional<std::string_view>();
  }
}

std::string_view FileTypeName(mode_t mode) {
  switch (mode & S_IFMT) {
    case S_IFREG:
      return "a regular file";
    case S_IFDIR:
      return "a directory";
    case S_IFCHR:
      return "a character device";
    case S_IFBLK:
      return "a block device";
    case S_IFIFO:
      return "a FIFO (named pipe)";
    case S_IFSOCK:
      return "a socket";
    case S_IFLNK:
      return "a symbolic link";
    default:
      return "a special file";
  }
}

FileInfo ToFileInfo(const struct stat& st) {
  FileInfo info;
  info.size = static_cast<uint64_t>(st.st_size);
  info.mode = st.st_mode;
  info.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
  info.dev = st.st_dev;
  info.ino = st.st_ino;
  return info;
}

Result<UniqueFd> Reopen(int path_fd, const struct stat& before, int flags, std::string_view shown,
                        struct stat* after) {
  char link[40];
  std::snprintf(link, sizeof link, "/proc/self/fd/%d", path_fd);
  int fd;
  do {
    fd = ::open(link, flags | O_CLOEXEC | O_NOCTTY);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) return Err(ErrnoStatus(errno, "open", shown));
  UniqueFd out(fd);
  struct stat now {};
  if (::fstat(out.get(), &now) != 0) return Err(ErrnoStatus(errno, "fstat", shown));
  if (now.st_dev != before.st_dev || now.st_ino != before.st_ino) {
    return Err(InternalError("reopening " + Quote(shown) + " reached a different file"));
  }
  if (after != nullptr) *after = now;
  return out;
}

}  // namespace talaria::safety::internal
