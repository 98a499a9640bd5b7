#include "memory/memory_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>

#include "talaria/base/file_io.h"

namespace talaria::memory {
namespace {

std::string DirOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

Status ErrnoError(std::string_view what, const std::string& path, int err) {
  std::string message = std::string(what) + " " + path + ": " + std::strerror(err);
  if (err == EACCES || err == EPERM || err == ELOOP) return PermissionDeniedError(message);
  return UnavailableError(message);
}

}  // namespace

Status MakeMemoryDir(const std::string& dir) {
  if (dir.empty()) return Status::Ok();
  struct stat st {};
  if (::stat(dir.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return Status::Ok();
    return UnavailableError("cannot use " + dir + ": not a directory");
  }
  const std::string parent = DirOf(dir);
  if (parent != dir) TALARIA_RETURN_IF_ERROR(MakeMemoryDir(parent));
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return ErrnoError("cannot create", dir, errno);
  }
  return Status::Ok();
}

Result<FileLock> FileLock::Acquire(const std::string& file) {
  TALARIA_RETURN_IF_ERROR(MakeMemoryDir(DirOf(file)));
  const std::string lock_path = file + ".lock";
  UniqueFd fd(::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (!fd) return Err(ErrnoError("cannot open the lock", lock_path, errno));
  while (::flock(fd.get(), LOCK_EX) != 0) {
    if (errno != EINTR) return Err(ErrnoError("cannot lock", lock_path, errno));
  }
  return FileLock(std::move(fd));
}

Result<std::string> ReadMemoryFile(const std::string& path) {
  auto content = ReadWholeFile(path);
  if (!content && content.error().code() == StatusCode::kNotFound) return std::string();
  return content;
}

Status ReplaceMemoryFile(const std::string& path, std::string_view content) {
  TALARIA_RETURN_IF_ERROR(WriteFileAtomic(path, content));
  const std::string dir = DirOf(path);
  UniqueFd dfd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dfd) return ErrnoError("cannot open", dir, errno);
  if (::fsync(dfd.get()) != 0) return ErrnoError("cannot sync", dir, errno);
  return Status::Ok();
}

Result<std::string> BackUpMemoryFile(const std::string& path, std::string_view content) {
  const std::string dir = DirOf(path);
  const std::string base = path.substr(path.rfind('/') + 1) + ".bak.";
  // An identical backup already there is the same refusal again.
  if (DIR* d = ::opendir(dir.c_str())) {
    std::string found;
    while (const dirent* e = ::readdir(d)) {
      const std::string name = e->d_name;
      if (name.rfind(base, 0) != 0) continue;
      std::string candidate = dir;
      candidate += '/';
      candidate += name;
      auto old = ReadWholeFile(candidate);
      if (old && *old == content) {
        found = std::move(candidate);
        break;
      }
    }
    ::closedir(d);
    if (!found.empty()) return found;
  }
  const std::string stem =
      path + ".bak." + std::to_string(static_cast<long long>(std::time(nullptr)));
  for (int n = 0; n < 1000; ++n) {
    const std::string candidate = n == 0 ? stem : stem + "." + std::to_string(n);
    UniqueFd fd(
        ::open(candidate.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600));
    if (!fd) {
      if (errno == EEXIST) continue;
      return Err(ErrnoError("cannot write the backup", candidate, errno));
    }
    if (Status s = WriteAll(fd.get(), content); !s.ok()) {
      ::unlink(candidate.c_str());
      return Err(s);
    }
    if (::fsync(fd.get()) != 0) {
      const int err = errno;
      ::unlink(candidate.c_str());
      return Err(ErrnoError("cannot sync the backup", candidate, err));
    }
    return candidate;
  }
  return Err(UnavailableError("cannot find a free backup name beside " + path));
}

}  // namespace talaria::memory
