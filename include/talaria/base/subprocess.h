// RunProcess: run one child process to completion with a deadline, cancellation and bounded
// output capture — the one way talaria starts external programs.
//
// The child is started with posix_spawn (never fork) in its own process group, with a default
// signal mask and default dispositions, and is watched through a pidfd. Timeouts and
// cancellation terminate the whole group (SIGTERM, a grace period, then SIGKILL) and the child
// is always reaped before RunProcess returns. stdout and stderr are each kept as a bounded head
// (40%) and tail (60%), so memory stays flat however much the child prints.
// Thread-safety: RunProcess is thread-safe; concurrent calls share no state. SIGPIPE is blocked
// in the calling thread while stdin is written; the process-wide disposition is never changed.
#pragma once

#include <sys/types.h>
#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "talaria/base/status.h"

namespace talaria {

// Exit codes reported when talaria ended the child (shell conventions).
inline constexpr int kExitCodeTimedOut = 124;
inline constexpr int kExitCodeCancelled = 130;

// The descriptor number SpawnOptions::inherit_fd gets in the child (the first after stdio).
inline constexpr int kInheritedFd = 3;

struct SpawnOptions {
  // argv[0] is the program: a path when it contains '/', otherwise looked up in the caller's
  // PATH (posix_spawnp).
  std::vector<std::string> argv;
  // The child's full environment ("KEY=value" entries); nullopt inherits the caller's.
  std::optional<std::vector<std::string>> env;
  // Working directory of the child; empty keeps the caller's.
  std::string cwd;
  // Written to the child's stdin, which is then closed. Empty: stdin is /dev/null. A child that
  // never reads (or exits early) does not block the call; unread data is dropped.
  std::string stdin_data;
  // Wall-clock limit from spawn; zero or negative means none.
  std::chrono::milliseconds timeout{0};
  // Requests early termination (the call returns promptly with cancelled = true).
  std::stop_token cancel;
  // Per-stream capture cap in bytes: the first 40% and the last 60% are kept, the middle is
  // replaced by a marker naming the omitted count.
  size_t max_output_bytes = size_t{1} << 20;
  // stderr goes into stdout (one interleaved stream, as a terminal shows it); stderr_text
  // stays empty.
  bool merge_stderr = false;
  // After SIGTERM on timeout/cancel: how long the group gets before SIGKILL.
  std::chrono::milliseconds kill_grace{2000};
  // After the child exits: how long a grandchild may keep stdout/stderr open before the group
  // is killed and reading stops.
  std::chrono::milliseconds drain_grace{200};
  // A descriptor the child gets as kInheritedFd (e.g. one end of a socketpair it talks back
  // on); every other descriptor above stderr is still closed. -1: none.
  int inherit_fd = -1;
  // stderr's capture cap when it should differ from stdout's; 0: max_output_bytes.
  size_t max_stderr_bytes = 0;
  // RunProcess only: called once, right after the spawn, with the child's pid (before any output
  // is read), e.g. to tell a peer which process to expect. Must not block.
  std::function<void(pid_t)> on_spawn;
  // RunProcess only: sees every chunk of stdout as it arrives, before truncation (to spill the
  // whole stream, or time the first line). Called on RunProcess's thread; must not block.
  std::function<void(std::string_view)> on_stdout;
};

struct ProcessResult {
  // The exit status; kExitCodeTimedOut on timeout, kExitCodeCancelled on cancellation,
  // 128 + signal number when the child was killed by a signal.
  int exit_code = 0;
  bool timed_out = false;
  bool cancelled = false;
  // Captured output, possibly truncated (see SpawnOptions::max_output_bytes).
  std::string stdout_text;
  std::string stderr_text;
  // Bytes the child wrote to each stream, including the part not kept.
  size_t stdout_total_bytes = 0;
  size_t stderr_total_bytes = 0;
  // The child's pid, which is also its process-group id (already reaped on return).
  pid_t pid = -1;
};

// Runs argv to completion (or timeout/cancel) and returns its result. A child that fails,
// times out or is cancelled is still a successful Result; errors are only for failing to run:
// InvalidArgument (empty argv or an argument containing NUL), NotFound (no such program or
// cwd), PermissionDenied (not executable), ResourceExhausted (out of fds/processes), Internal.
// If cancel is already requested, nothing is spawned and the result says cancelled.
Result<ProcessResult> RunProcess(const SpawnOptions& options);

// Keeps the first 40% and the last 60% of `text` within `max_bytes`, inserting
// "\n... [OUTPUT TRUNCATED - N chars omitted out of T total] ...\n" where text was cut. Cuts
// fall on UTF-8 boundaries. Returned unchanged when it fits. Exposed for callers that truncate
// text they already hold.
std::string TruncateHeadTail(std::string_view text, size_t max_bytes);

}  // namespace talaria
