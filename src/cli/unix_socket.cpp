// unix_socket.h: the sockets of talaria's own daemons.
#include "cli/unix_socket.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "talaria/base/poll_timeout.h"

namespace talaria::cli {
namespace {

std::string SocketErrnoText(int err) { return std::strerror(err); }

// sockaddr_un for `path`. When the path does not fit, `dir_holder` keeps the directory open and
// the address names it through /proc/self/fd, which the kernel resolves like any other path.
Result<sockaddr_un> AddressOf(const std::string& path, UniqueFd& dir_holder) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::string target = path;
  if (target.size() >= sizeof(addr.sun_path)) {
    const std::filesystem::path p(path);
    dir_holder.reset(::open(p.parent_path().c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!dir_holder) {
      return Err(UnavailableError("cannot open " + p.parent_path().string() + ": " +
                                  SocketErrnoText(errno)));
    }
    target = "/proc/self/fd/" + std::to_string(dir_holder.get()) + "/" + p.filename().string();
    if (target.size() >= sizeof(addr.sun_path)) {
      return Err(InvalidArgumentError("socket name too long: " + path));
    }
  }
  std::memcpy(addr.sun_path, target.c_str(), target.size() + 1);
  return addr;
}

// Waits for `events` on `fd` until `deadline`; false with `error` set when it did not come.
bool WaitFor(int fd, short events, SteadyTime deadline, Status& error) {
  for (;;) {
    pollfd p{.fd = fd, .events = events, .revents = 0};
    const int n = ::poll(&p, 1, PollTimeoutMs(std::chrono::steady_clock::now(), deadline));
    if (n > 0) return true;
    if (n == 0) {
      error = DeadlineExceededError("timed out waiting for the daemon");
      return false;
    }
    if (errno != EINTR) {
      error = UnavailableError("poll: " + SocketErrnoText(errno));
      return false;
    }
  }
}

}  // namespace

Status EnsurePrivateDirectory(const std::string& path) {
  if (::mkdir(path.c_str(), 0700) != 0 && errno != EEXIST) {
    return UnavailableError("cannot create " + path + ": " + SocketErrnoText(errno));
  }
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    return UnavailableError("cannot stat " + path + ": " + SocketErrnoText(errno));
  }
  if (!S_ISDIR(st.st_mode)) return PermissionDeniedError(path + " is not a directory");
  if (st.st_uid != ::geteuid()) {
    return PermissionDeniedError(path + " belongs to uid " + std::to_string(st.st_uid));
  }
  if ((st.st_mode & 077) != 0 && ::chmod(path.c_str(), 0700) != 0) {
    return PermissionDeniedError("cannot make " + path + " private: " + SocketErrnoText(errno));
  }
  return Status::Ok();
}

Result<UniqueFd> ListenUnixSocket(const std::string& path) {
  UniqueFd dir;
  const sockaddr_un addr = TALARIA_TRY(AddressOf(path, dir));
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd) return Err(UnavailableError("socket: " + SocketErrnoText(errno)));
  if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
    if (errno == EADDRINUSE) return Err(AlreadyExistsError(path + " exists"));
    return Err(UnavailableError("cannot bind " + path + ": " + SocketErrnoText(errno)));
  }
  // The directory is 0700 already; the socket's own mode says the same to anyone who looks.
  if (::chmod(path.c_str(), 0600) != 0 || ::listen(fd.get(), 64) != 0) {
    const int err = errno;
    ::unlink(path.c_str());
    return Err(UnavailableError("cannot listen on " + path + ": " + SocketErrnoText(err)));
  }
  return fd;
}

Result<UniqueFd> ConnectUnixSocket(const std::string& path) {
  UniqueFd dir;
  const sockaddr_un addr = TALARIA_TRY(AddressOf(path, dir));
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) return Err(UnavailableError("socket: " + SocketErrnoText(errno)));
  int rc = 0;
  do {
    rc = ::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof(addr));
  } while (rc != 0 && errno == EINTR);
  if (rc != 0) {
    const int err = errno;
    if (err == ENOENT || err == ECONNREFUSED) {
      return Err(NotFoundError("no daemon listens at " + path));
    }
    return Err(UnavailableError("cannot connect to " + path + ": " + SocketErrnoText(err)));
  }
  return fd;
}

Result<PeerIdentity> PeerOf(int fd) {
  ucred cred{};
  socklen_t len = sizeof(cred);
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
    return Err(UnavailableError("SO_PEERCRED: " + SocketErrnoText(errno)));
  }
  return PeerIdentity{.pid = cred.pid, .uid = cred.uid};
}

Status SendFrame(int fd, std::string_view payload, SteadyTime deadline) {
  if (payload.size() > 0xFFFFFFFFu) return ResourceExhaustedError("frame too large");
  const auto n = static_cast<uint32_t>(payload.size());
  std::string bytes;
  bytes.reserve(4 + payload.size());
  for (int shift = 24; shift >= 0; shift -= 8) bytes.push_back(static_cast<char>(n >> shift));
  bytes.append(payload);
  size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t w =
        ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (w > 0) {
      sent += static_cast<size_t>(w);
      continue;
    }
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      Status error;
      if (!WaitFor(fd, POLLOUT, deadline, error)) return error;
      continue;
    }
    return UnavailableError("the other end is gone: " + SocketErrnoText(errno));
  }
  return Status::Ok();
}

Result<std::string> ReceiveFrame(int fd, size_t max_bytes, SteadyTime deadline) {
  std::string header;
  std::string body;
  size_t want = 4;
  bool in_body = false;
  for (;;) {
    std::string& into = in_body ? body : header;
    if (into.size() == want) {
      if (in_body) return body;
      uint32_t n = 0;
      for (char c : header) n = (n << 8) | static_cast<unsigned char>(c);
      if (n > max_bytes) {
        return Err(ResourceExhaustedError("frame of " + std::to_string(n) + " bytes (limit " +
                                          std::to_string(max_bytes) + ")"));
      }
      in_body = true;
      want = n;
      body.reserve(n);
      continue;
    }
    Status error;
    if (!WaitFor(fd, POLLIN, deadline, error)) return Err(error);
    char buf[65536];
    const size_t room = std::min(sizeof(buf), want - into.size());
    const ssize_t r = ::recv(fd, buf, room, MSG_DONTWAIT);
    if (r > 0) {
      into.append(buf, static_cast<size_t>(r));
      continue;
    }
    if (r < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
    if (r == 0 && !in_body && header.empty()) return Err(NotFoundError("the other end closed"));
    return Err(UnavailableError(r == 0 ? "the other end closed mid-frame"
                                       : "receive failed: " + SocketErrnoText(errno)));
  }
}

}  // namespace talaria::cli
