// StartProcess: start a child that outlives the call (background jobs, interactive programs),
// handing back its pid, a pidfd and the descriptors of its stdin and merged output.
//
// Like RunProcess the child is started with posix_spawn (never fork), in its own process group
// (or its own session when it gets a pseudo-terminal), with default signal mask and
// dispositions and no inherited descriptors besides 0/1/2. The caller owns the child: it must
// reap it (WaitProcessGroupExit / waitid on the pidfd) and end its group when done.
// Thread-safety: thread-safe; concurrent calls share no state.
#pragma once

#include <sys/types.h>

#include <chrono>

#include "talaria/base/status.h"
#include "talaria/base/subprocess.h"
#include "talaria/base/unique_fd.h"

namespace talaria {

struct StartOptions {
  // A pipe for the child's stdin (else /dev/null). With `pty` stdin is always the terminal.
  bool stdin_pipe = false;
  // Run on a new pseudo-terminal (80x24): stdin, stdout and stderr are its slave side and it is
  // the child's controlling terminal; `output` and `input` are the master side.
  bool pty = false;
  // Without stdin_pipe or pty: a descriptor (a file, say) the child gets as its stdin instead of
  // /dev/null; the caller keeps its own copy. -1: none.
  int stdin_fd = -1;
};

struct StartedProcess {
  pid_t pid = -1;   // also the id of its process group
  UniqueFd pidfd;   // invalid on kernels without pidfd_open
  UniqueFd input;   // write end of the child's stdin; invalid when stdin is /dev/null
  UniqueFd output;  // read end of stdout+stderr (merged), non-blocking
};

// Uses argv, env, cwd and inherit_fd of `options` (its capture, timeout and stdin fields are
// RunProcess's and ignored here). Errors as RunProcess's.
Result<StartedProcess> StartProcess(const SpawnOptions& options, const StartOptions& start);

// Ends the group of `pid`: SIGTERM, up to `grace` for the leader to exit, then SIGKILL to the
// group. Returns true once the leader has exited (not reaped). `pidfd` may be invalid.
bool TerminateProcessGroup(pid_t pid, int pidfd, std::chrono::milliseconds grace);

}  // namespace talaria
