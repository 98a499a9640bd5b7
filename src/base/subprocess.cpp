#include "talaria/base/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <optional>
#include <system_error>
#include <utility>

#include "talaria/base/child_exit.h"
#include "talaria/base/head_tail_buffer.h"
#include "talaria/base/poll_timeout.h"
#include "talaria/base/scoped_sigpipe_block.h"
#include "talaria/base/spawn_child.h"
#include "talaria/base/unique_fd.h"

namespace talaria {
namespace {

using base_internal::ErrnoStatus;

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr size_t kReadChunk = size_t{64} * 1024;
// Reads per stream per poll round, so one chatty stream cannot starve the others or the clock.
constexpr int kMaxReadsPerRound = 16;
// How long to wait for a SIGKILLed child to become reapable before giving up on it.
constexpr milliseconds kReapDeadline{5000};
// Poll period when the kernel offers no pidfd (exit is then detected by polling waitid).
constexpr milliseconds kFallbackPollPeriod{10};
// Poll period when no eventfd could be made for cancellation.
constexpr milliseconds kCancelPollPeriod{50};

struct StopWaker {
  int fd;
  void operator()() const noexcept {
    const uint64_t one = 1;
    [[maybe_unused]] ssize_t n = ::write(fd, &one, sizeof one);
  }
};

// t + d, saturating at time_point::max() (a caller may pass milliseconds::max() as "forever").
Clock::time_point AddClamped(Clock::time_point t, milliseconds d) {
  if (d.count() <= 0) return t;
  const auto room = std::chrono::duration_cast<milliseconds>(Clock::time_point::max() - t);
  return d >= room ? Clock::time_point::max() : t + d;
}

}  // namespace

std::string TruncateHeadTail(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  HeadTailBuffer buffer(max_bytes);
  buffer.Append(text);
  return std::move(buffer).Finish();
}

Result<ProcessResult> RunProcess(const SpawnOptions& options) {
  if (options.argv.empty() || options.argv[0].empty()) {
    return Err(InvalidArgumentError("RunProcess: empty argv"));
  }
  ProcessResult result;
  if (options.cancel.stop_requested()) {
    result.cancelled = true;
    result.exit_code = kExitCodeCancelled;
    return result;
  }
  // posix_spawn reports a bad cwd as ENOENT, indistinguishable from a missing program.
  TALARIA_RETURN_IF_ERROR(base_internal::CheckWorkingDirectory(options.cwd));

  const bool feed_stdin = !options.stdin_data.empty();
  UniqueFd in_r, in_w, out_r, out_w, err_r, err_w;
  if (feed_stdin) TALARIA_RETURN_IF_ERROR(base_internal::MakePipe(in_r, in_w));
  TALARIA_RETURN_IF_ERROR(base_internal::MakePipe(out_r, out_w));
  if (!options.merge_stderr) TALARIA_RETURN_IF_ERROR(base_internal::MakePipe(err_r, err_w));

  base_internal::ChildStdio stdio;
  stdio.stdin_fd = feed_stdin ? in_r.get() : -1;
  stdio.stdout_fd = out_w.get();
  stdio.stderr_fd = options.merge_stderr ? out_w.get() : err_w.get();
  const pid_t pid = TALARIA_TRY(base_internal::SpawnChild(options, stdio));
  result.pid = pid;
  if (options.on_spawn) options.on_spawn(pid);
  in_r.reset();
  out_w.reset();
  err_w.reset();

  // From here on the child exists: every path below must kill (if needed) and reap it.
  UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  const auto kill_group = [pid](int sig) { ::kill(-pid, sig); };  // pid unreaped: no reuse

  Status io_status;
  for (const UniqueFd* fd : {&in_w, &out_r, &err_r}) {
    if (fd->valid() && io_status.ok()) io_status = base_internal::SetNonBlocking(fd->get());
  }

  UniqueFd wake_fd;
  std::optional<std::stop_callback<StopWaker>> stop_callback;
  if (options.cancel.stop_possible()) {
    wake_fd.reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    if (wake_fd.valid()) stop_callback.emplace(options.cancel, StopWaker{wake_fd.get()});
  }
  std::optional<ScopedSigpipeBlock> sigpipe_block;
  if (feed_stdin) sigpipe_block.emplace();

  HeadTailBuffer out_buf(options.max_output_bytes);
  HeadTailBuffer err_buf(options.max_stderr_bytes > 0 ? options.max_stderr_bytes
                                                      : options.max_output_bytes);
  size_t stdin_offset = 0;

  enum class Ending : unsigned char { kNone, kTimedOut, kCancelled };
  Ending ending = Ending::kNone;
  const auto start = Clock::now();
  const auto deadline =
      options.timeout.count() > 0 ? AddClamped(start, options.timeout) : Clock::time_point::max();
  Clock::time_point term_sent_at{};  // valid once ending != kNone
  bool kill_sent = false;
  bool exited = false;
  Clock::time_point exited_at{};  // valid once exited

  const auto child_exited = [&]() {
    siginfo_t info{};
    return ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
           info.si_pid == pid;
  };
  const auto drain = [&](UniqueFd& fd, HeadTailBuffer& buf) {
    char chunk[kReadChunk];
    const bool observed = &buf == &out_buf && options.on_stdout;
    for (int i = 0; i < kMaxReadsPerRound; ++i) {
      const ssize_t n = ::read(fd.get(), chunk, sizeof chunk);
      if (n > 0) {
        buf.Append(std::string_view(chunk, static_cast<size_t>(n)));
        if (observed) options.on_stdout(std::string_view(chunk, static_cast<size_t>(n)));
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
      fd.reset();  // EOF or a read error: this stream is finished
      return;
    }
  };
  const auto feed = [&]() {
    const std::string& data = options.stdin_data;
    while (stdin_offset < data.size()) {
      const ssize_t n = ::write(in_w.get(), data.data() + stdin_offset, data.size() - stdin_offset);
      if (n > 0) {
        stdin_offset += static_cast<size_t>(n);
      } else if (n < 0 && errno == EINTR) {
        continue;
      } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        return;
      } else {
        break;  // EPIPE: the child closed stdin; the rest is dropped
      }
    }
    in_w.reset();  // all written (or undeliverable): the child sees EOF
  };

  while (io_status.ok()) {
    const auto now = Clock::now();
    if (!exited) {
      if (ending == Ending::kNone) {
        if (options.cancel.stop_requested()) {
          ending = Ending::kCancelled;
        } else if (now >= deadline) {
          ending = Ending::kTimedOut;
        }
        if (ending != Ending::kNone) {
          term_sent_at = now;
          if (options.kill_grace.count() > 0) {
            kill_group(SIGTERM);
          } else {
            kill_group(SIGKILL);
            kill_sent = true;
          }
        }
      } else if (!kill_sent && now >= AddClamped(term_sent_at, options.kill_grace)) {
        kill_group(SIGKILL);
        kill_sent = true;
      }
    } else {
      if (!out_r.valid() && !err_r.valid()) break;
      if (now >= AddClamped(exited_at, options.drain_grace)) {
        // A grandchild holds the output open: end it and stop reading.
        kill_group(SIGKILL);
        kill_sent = true;
        break;
      }
    }

    auto wake = Clock::time_point::max();
    if (!exited) {
      if (ending == Ending::kNone) wake = std::min(wake, deadline);
      if (ending != Ending::kNone && !kill_sent) {
        wake = std::min(wake, AddClamped(term_sent_at, options.kill_grace));
      }
      if (!pidfd.valid()) wake = std::min(wake, now + kFallbackPollPeriod);
      if (ending == Ending::kNone && options.cancel.stop_possible() && !wake_fd.valid()) {
        wake = std::min(wake, now + kCancelPollPeriod);
      }
    } else {
      wake = std::min(wake, AddClamped(exited_at, options.drain_grace));
    }

    enum Slot { kStdin, kStdout, kStderr, kPidfd, kWake, kSlots };
    pollfd pfds[kSlots];
    const auto set = [&](Slot slot, const UniqueFd& fd, short events, bool wanted) {
      pfds[slot] = pollfd{wanted && fd.valid() ? fd.get() : -1, events, 0};
    };
    set(kStdin, in_w, POLLOUT, true);
    set(kStdout, out_r, POLLIN, true);
    set(kStderr, err_r, POLLIN, true);
    set(kPidfd, pidfd, POLLIN, !exited);
    set(kWake, wake_fd, POLLIN, !exited && ending == Ending::kNone);

    const int rc = ::poll(pfds, kSlots, PollTimeoutMs(now, wake));
    if (rc < 0) {
      if (errno == EINTR) continue;
      io_status = ErrnoStatus(errno, "poll");
      break;
    }
    if (pfds[kStdin].revents != 0) feed();
    if (pfds[kStdout].revents != 0) drain(out_r, out_buf);
    if (pfds[kStderr].revents != 0) drain(err_r, err_buf);
    if (pfds[kWake].revents != 0) {
      uint64_t count;
      [[maybe_unused]] ssize_t n = ::read(wake_fd.get(), &count, sizeof count);
    }
    if (!exited && (pidfd.valid() ? pfds[kPidfd].revents != 0 : child_exited())) {
      exited = true;
      exited_at = Clock::now();
      in_w.reset();  // nobody left we promised to feed
    }
  }

  // Timeouts and cancellations take the whole group down, stragglers included; so does an
  // internal error, since nobody is left to watch the child.
  if (ending != Ending::kNone || !io_status.ok()) kill_group(SIGKILL);
  stop_callback.reset();
  in_w.reset();
  out_r.reset();
  err_r.reset();

  if (!exited) {
    // Only reached on an internal error, after SIGKILL: wait for death with a deadline.
    const auto reap_deadline = Clock::now() + kReapDeadline;
    while (!(exited = child_exited()) && Clock::now() < reap_deadline) {
      if (pidfd.valid()) {
        pollfd p{pidfd.get(), POLLIN, 0};
        ::poll(&p, 1, PollTimeoutMs(Clock::now(), reap_deadline));
      } else {
        ::usleep(static_cast<useconds_t>(kFallbackPollPeriod.count() * 1000));
      }
    }
  }
  siginfo_t info{};
  const int wait_flags = WEXITED | (exited ? 0 : WNOHANG);
  int wait_rc;
  do {
    wait_rc = pidfd.valid() ? ::waitid(P_PIDFD, static_cast<id_t>(pidfd.get()), &info, wait_flags)
                            : ::waitid(P_PID, static_cast<id_t>(pid), &info, wait_flags);
  } while (wait_rc < 0 && errno == EINTR);
  if (wait_rc < 0) {
    return Err(ErrnoStatus(errno, "reaping child " + std::to_string(pid)));
  }
  if (info.si_pid != pid) {
    return Err(InternalError("child " + std::to_string(pid) + " did not die after SIGKILL"));
  }
  if (!io_status.ok()) return Err(io_status.WithContext("RunProcess"));

  if (ending == Ending::kTimedOut) {
    result.timed_out = true;
    result.exit_code = kExitCodeTimedOut;
  } else if (ending == Ending::kCancelled) {
    result.cancelled = true;
    result.exit_code = kExitCodeCancelled;
  } else {
    result.exit_code = ShellExitCode(info);
  }
  result.stdout_total_bytes = out_buf.total();
  result.stderr_total_bytes = err_buf.total();
  result.stdout_text = std::move(out_buf).Finish();
  result.stderr_text = std::move(err_buf).Finish();
  return result;
}

}  // namespace talaria
