#include "talaria/base/spawn.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <system_error>
#include <vector>

#include "talaria/base/spawn_child.h"

extern char** environ;

namespace talaria {
namespace base_internal {
namespace {

Status MoveAboveStdio(UniqueFd& fd) {
  if (fd.get() > STDERR_FILENO) return {};
  const int moved = ::fcntl(fd.get(), F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
  if (moved < 0) return ErrnoStatus(errno, "fcntl(F_DUPFD_CLOEXEC)");
  fd.reset(moved);
  return {};
}

class SpawnFileActions {
 public:
  SpawnFileActions() { ok_ = ::posix_spawn_file_actions_init(&fa_) == 0; }
  ~SpawnFileActions() {
    if (ok_) ::posix_spawn_file_actions_destroy(&fa_);
  }
  SpawnFileActions(const SpawnFileActions&) = delete;
  SpawnFileActions& operator=(const SpawnFileActions&) = delete;
  bool ok() const { return ok_; }
  posix_spawn_file_actions_t* get() { return &fa_; }

 private:
  posix_spawn_file_actions_t fa_;
  bool ok_ = false;
};

class SpawnAttr {
 public:
  SpawnAttr() { ok_ = ::posix_spawnattr_init(&attr_) == 0; }
  ~SpawnAttr() {
    if (ok_) ::posix_spawnattr_destroy(&attr_);
  }
  SpawnAttr(const SpawnAttr&) = delete;
  SpawnAttr& operator=(const SpawnAttr&) = delete;
  bool ok() const { return ok_; }
  posix_spawnattr_t* get() { return &attr_; }

 private:
  posix_spawnattr_t attr_;
  bool ok_ = false;
};

Result<std::vector<char*>> MakeCStringArray(const std::vector<std::string>& strings,
                                            std::string_view what) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (const auto& s : strings) {
    if (s.find('\0') != std::string::npos) {
      return Err(InvalidArgumentError(std::string(what) + " contains a NUL byte"));
    }
    out.push_back(const_cast<char*>(s.c_str()));
  }
  out.push_back(nullptr);
  return out;
}

}  // namespace

Status ErrnoStatus(int err, std::string_view what) {
  std::string msg =
      std::string(what) + ": " + std::error_code(err, std::generic_category()).message();
  switch (err) {
    case ENOENT:
    case ENOTDIR:
      return NotFoundError(std::move(msg));
    case EACCES:
    case EPERM:
    case ENOEXEC:
      return PermissionDeniedError(std::move(msg));
    case EMFILE:
    case ENFILE:
    case EAGAIN:
    case ENOMEM:
      return ResourceExhaustedError(std::move(msg));
    default:
      return InternalError(std::move(msg));
  }
}

Status MakePipe(UniqueFd& read_end, UniqueFd& write_end) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return ErrnoStatus(errno, "pipe2");
  read_end.reset(fds[0]);
  write_end.reset(fds[1]);
  if (auto s = MoveAboveStdio(read_end); !s.ok()) return s;
  return MoveAboveStdio(write_end);
}

Status SetNonBlocking(int fd) {
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
    return ErrnoStatus(errno, "fcntl(O_NONBLOCK)");
  return {};
}

Status CheckWorkingDirectory(const std::string& cwd) {
  if (cwd.empty()) return {};
  struct stat st {};
  if (::stat(cwd.c_str(), &st) != 0) return ErrnoStatus(errno, "working directory '" + cwd + "'");
  if (!S_ISDIR(st.st_mode))
    return NotFoundError("working directory '" + cwd + "' is not a directory");
  return {};
}

Result<pid_t> SpawnChild(const SpawnOptions& options, const ChildStdio& stdio) {
  if (options.argv.empty() || options.argv[0].empty())
    return Err(InvalidArgumentError("empty argv"));
  // A source at or below kInheritedFd is moved up first: dup2 onto itself would keep O_CLOEXEC,
  // and one among the stdio numbers would be overwritten before it is duplicated.
  UniqueFd moved_inherit;
  int inherit_fd = options.inherit_fd;
  if (inherit_fd >= 0 && inherit_fd <= kInheritedFd) {
    moved_inherit.reset(::fcntl(inherit_fd, F_DUPFD_CLOEXEC, kInheritedFd + 1));
    if (!moved_inherit) return Err(ErrnoStatus(errno, "fcntl(F_DUPFD_CLOEXEC)"));
    inherit_fd = moved_inherit.get();
  }
  std::vector<char*> argv = TALARIA_TRY(MakeCStringArray(options.argv, "argv"));
  std::vector<char*> envp;
  if (options.env) envp = TALARIA_TRY(MakeCStringArray(*options.env, "env"));

  SpawnFileActions fa;
  SpawnAttr attr;
  if (!fa.ok() || !attr.ok()) return Err(InternalError("posix_spawn setup failed"));

  int rc = 0;
  if (stdio.terminal_path != nullptr) {
    // Opened by path after setsid, so the terminal becomes the controlling terminal.
    rc = ::posix_spawn_file_actions_addopen(fa.get(), STDIN_FILENO, stdio.terminal_path, O_RDWR, 0);
  } else if (stdio.stdin_fd >= 0) {
    rc = ::posix_spawn_file_actions_adddup2(fa.get(), stdio.stdin_fd, STDIN_FILENO);
  } else {
    rc = ::posix_spawn_file_actions_addopen(fa.get(), STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  }
  if (rc == 0) rc = ::posix_spawn_file_actions_adddup2(fa.get(), stdio.stdout_fd, STDOUT_FILENO);
  if (rc == 0) rc = ::posix_spawn_file_actions_adddup2(fa.get(), stdio.stderr_fd, STDERR_FILENO);
  // After stdio (whose sources may sit at kInheritedFd), so the order cannot clobber them.
  if (rc == 0 && inherit_fd >= 0)
    rc = ::posix_spawn_file_actions_adddup2(fa.get(), inherit_fd, kInheritedFd);
  // Keeps descriptors other code opened without O_CLOEXEC out of the child.
  const int first_closed = inherit_fd >= 0 ? kInheritedFd + 1 : STDERR_FILENO + 1;
  if (rc == 0) rc = ::posix_spawn_file_actions_addclosefrom_np(fa.get(), first_closed);
  if (rc == 0 && !options.cwd.empty())
    rc = ::posix_spawn_file_actions_addchdir_np(fa.get(), options.cwd.c_str());
  if (rc != 0) return Err(ErrnoStatus(rc, "posix_spawn file actions"));

  sigset_t empty_mask;
  sigemptyset(&empty_mask);
  sigset_t all_default;
  sigfillset(&all_default);
  const short group_flag =
      stdio.terminal_path != nullptr ? POSIX_SPAWN_SETSID : POSIX_SPAWN_SETPGROUP;
  rc = ::posix_spawnattr_setflags(
      attr.get(), static_cast<short>(group_flag | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF));
  if (rc == 0 && stdio.terminal_path == nullptr) rc = ::posix_spawnattr_setpgroup(attr.get(), 0);
  if (rc == 0) rc = ::posix_spawnattr_setsigmask(attr.get(), &empty_mask);
  if (rc == 0) rc = ::posix_spawnattr_setsigdefault(attr.get(), &all_default);
  if (rc != 0) return Err(ErrnoStatus(rc, "posix_spawn attributes"));

  char* const* env = options.env ? envp.data() : environ;
  pid_t pid = -1;
  const std::string& program = options.argv[0];
  if (program.find('/') != std::string::npos) {
    rc = ::posix_spawn(&pid, program.c_str(), fa.get(), attr.get(), argv.data(), env);
  } else {
    rc = ::posix_spawnp(&pid, program.c_str(), fa.get(), attr.get(), argv.data(), env);
  }
  if (rc != 0) return Err(ErrnoStatus(rc, "spawning '" + program + "'"));
  return pid;
}

}  // namespace base_internal

namespace {

using base_internal::ErrnoStatus;

// A master/slave pseudo-terminal pair; the slave is opened (and kept open until the child has
// it) so the terminal stays alive across the spawn.
struct Pty {
  UniqueFd master;
  UniqueFd slave;
  std::string slave_path;
};

Result<Pty> OpenPty() {
  Pty pty;
  pty.master.reset(::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC));
  if (!pty.master) return Err(ErrnoStatus(errno, "posix_openpt"));
  if (::grantpt(pty.master.get()) != 0 || ::unlockpt(pty.master.get()) != 0) {
    return Err(ErrnoStatus(errno, "unlockpt"));
  }
  char name[128];
  if (::ptsname_r(pty.master.get(), name, sizeof name) != 0)
    return Err(ErrnoStatus(errno, "ptsname"));
  pty.slave_path = name;
  pty.slave.reset(::open(name, O_RDWR | O_NOCTTY | O_CLOEXEC));
  if (!pty.slave) return Err(ErrnoStatus(errno, "opening " + pty.slave_path));
  winsize size{};
  size.ws_row = 24;
  size.ws_col = 80;
  ::ioctl(pty.master.get(), TIOCSWINSZ, &size);
  return pty;
}

}  // namespace

Result<StartedProcess> StartProcess(const SpawnOptions& options, const StartOptions& start) {
  TALARIA_RETURN_IF_ERROR(base_internal::CheckWorkingDirectory(options.cwd));
  StartedProcess child;
  base_internal::ChildStdio stdio;
  UniqueFd in_r, out_w;
  Pty pty;
  if (start.pty) {
    pty = TALARIA_TRY(OpenPty());
    stdio.terminal_path = pty.slave_path.c_str();
    stdio.stdout_fd = STDIN_FILENO;  // after the open, fd 0 is the terminal
    stdio.stderr_fd = STDIN_FILENO;
  } else {
    TALARIA_RETURN_IF_ERROR(base_internal::MakePipe(child.output, out_w));
    if (start.stdin_pipe) TALARIA_RETURN_IF_ERROR(base_internal::MakePipe(in_r, child.input));
    stdio.stdin_fd = start.stdin_pipe ? in_r.get() : start.stdin_fd;
    stdio.stdout_fd = out_w.get();
    stdio.stderr_fd = out_w.get();
  }
  child.pid = TALARIA_TRY(base_internal::SpawnChild(options, stdio));
  child.pidfd.reset(static_cast<int>(::syscall(SYS_pidfd_open, child.pid, 0)));
  if (start.pty) {
    child.output = std::move(pty.master);
    child.input.reset(::fcntl(child.output.get(), F_DUPFD_CLOEXEC, STDERR_FILENO + 1));
  }
  // Closing our copies of the child's ends lets EOF reach us when the child is done.
  in_r.reset();
  out_w.reset();
  pty.slave.reset();
  if (Status s = base_internal::SetNonBlocking(child.output.get()); !s.ok()) {
    TerminateProcessGroup(child.pid, child.pidfd.get(), std::chrono::milliseconds(0));
    siginfo_t info{};
    ::waitid(P_PID, static_cast<id_t>(child.pid), &info, WEXITED);
    return Err(s);
  }
  return child;
}

bool TerminateProcessGroup(pid_t pid, int pidfd, std::chrono::milliseconds grace) {
  const auto exited = [&] {
    siginfo_t info{};
    return ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
           info.si_pid == pid;
  };
  if (exited()) {
    ::kill(-pid, SIGKILL);  // stragglers of a leader that is already gone
    return true;
  }
  if (grace.count() > 0) {
    ::kill(-pid, SIGTERM);
    const auto until = std::chrono::steady_clock::now() + grace;
    while (std::chrono::steady_clock::now() < until) {
      if (pidfd >= 0) {
        pollfd p{pidfd, POLLIN, 0};
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            until - std::chrono::steady_clock::now());
        ::poll(&p, 1, static_cast<int>(std::max<int64_t>(1, left.count())));
      } else {
        ::usleep(10'000);
      }
      if (exited()) break;
    }
  }
  ::kill(-pid, SIGKILL);
  for (int i = 0; i < 500 && !exited(); ++i) ::usleep(1000);
  return exited();
}

}  // namespace talaria
