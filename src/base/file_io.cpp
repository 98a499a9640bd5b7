#include "talaria/base/file_io.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "talaria/base/poll_timeout.h"
#include "talaria/base/unique_fd.h"

namespace talaria {

Status WriteAll(int fd, std::string_view data) {
  size_t done = 0;
  while (done < data.size()) {
    // Capped per call: Linux writes at most ~2 GiB at once anyway.
    const ssize_t n =
        ::write(fd, data.data() + done, std::min<size_t>(data.size() - done, size_t{1} << 30));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return InternalError(std::string("write: ") + std::strerror(n < 0 ? errno : EIO));
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

Status WriteAllUntil(int fd, std::string_view data, const WriteWait& wait) {
  while (!data.empty()) {
    const size_t chunk = std::min<size_t>(data.size(), size_t{1} << 30);
    const ssize_t n = wait.socket ? ::send(fd, data.data(), chunk, MSG_NOSIGNAL | MSG_DONTWAIT)
                                  : ::write(fd, data.data(), chunk);
    if (n > 0) {
      data.remove_prefix(static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) {
      return UnavailableError(std::string("write: ") + std::strerror(n < 0 ? errno : EIO));
    }
    const auto now = std::chrono::steady_clock::now();
    if (now >= wait.deadline)
      return DeadlineExceededError("write: the reader took nothing in time");
    if (wait.stop.stop_requested())
      return CancelledError("write: stopped while the reader took nothing");
    int timeout = PollTimeoutMs(now, wait.deadline);
    if (wait.stop.stop_possible()) {
      const int slice = static_cast<int>(wait.slice.count());
      timeout = timeout < 0 ? slice : std::min(timeout, slice);
    }
    pollfd room{fd, POLLOUT, 0};
    if (::poll(&room, 1, timeout) < 0 && errno != EINTR) {
      return UnavailableError(std::string("poll: ") + std::strerror(errno));
    }
  }
  return Status::Ok();
}

Status WriteFileAtomic(const std::string& path, std::string_view content,
                       AtomicWriteOptions options) {
  std::string tmp = path + ".tmp.XXXXXX";
  UniqueFd fd(::mkostemp(tmp.data(), O_CLOEXEC));  // O_EXCL, 0600: nothing planted is followed
  if (!fd) return PermissionDeniedError("cannot write " + path + ": " + std::strerror(errno));
  auto fail = [&](std::string_view step, int err) {
    ::unlink(tmp.c_str());
    std::string message = "cannot write ";
    message += path;
    message += " (";
    message += step;
    message += "): ";
    message += std::strerror(err);
    return UnavailableError(message);
  };
  if (options.mode != 0600 && ::fchmod(fd.get(), options.mode) != 0) return fail("chmod", errno);
  if (Status s = WriteAll(fd.get(), content); !s.ok()) return fail("write", errno);
  if (options.sync && ::fsync(fd.get()) != 0) return fail("fsync", errno);
  if (::close(fd.release()) != 0) return fail("close", errno);
  if (::rename(tmp.c_str(), path.c_str()) != 0) return fail("rename", errno);
  return Status::Ok();
}

bool ReadAvailable(int fd, std::string& out) {
  char buffer[64 * 1024];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n > 0) {
      out.append(buffer, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    return n < 0 && errno == EAGAIN;
  }
}

}  // namespace talaria

namespace talaria {

Result<std::string> ReadWholeFile(const std::string& path) {
  int fd;
  do {
    // O_NONBLOCK: a FIFO planted at the path must not hang the open; regular files ignore it.
    fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) {
    const int e = errno;
    const std::string why = "cannot open '" + path + "': " + std::strerror(e);
    if (e == ENOENT) return Err(NotFoundError(why));
    if (e == EACCES || e == ELOOP) return Err(PermissionDeniedError(why));
    return Err(InternalError(why));
  }
  UniqueFd owned(fd);
  struct stat st {};
  if (::fstat(owned.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return Err(PermissionDeniedError("'" + path + "' is not a regular file"));
  }
  std::string out;
  out.reserve(static_cast<size_t>(st.st_size));
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(owned.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Err(InternalError("cannot read '" + path + "': " + std::strerror(errno)));
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

}  // namespace talaria
