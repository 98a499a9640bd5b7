// The low-level spawn RunProcess and StartProcess share, and MCP's stdio client uses to start a
// server with its own pipes: pipes kept off the standard descriptors, errno mapping, and the
// posix_spawn call itself. Prefer RunProcess/StartProcess (subprocess.h) elsewhere.
#pragma once

#include <sys/types.h>

#include <string_view>

#include "talaria/base/status.h"
#include "talaria/base/subprocess.h"
#include "talaria/base/unique_fd.h"

namespace talaria::base_internal {

// An errno as a Status of the matching code (NotFound, PermissionDenied, ResourceExhausted,
// Internal), with `what` in front of the message.
Status ErrnoStatus(int err, std::string_view what);

// A close-on-exec pipe whose ends are both above fd 2.
Status MakePipe(UniqueFd& read_end, UniqueFd& write_end);
Status SetNonBlocking(int fd);

// The descriptors the child gets as 0, 1 and 2; stdin -1 means /dev/null.
struct ChildStdio {
  int stdin_fd = -1;
  int stdout_fd = -1;
  int stderr_fd = -1;
  // Start a new session (setsid) instead of only a new process group; with a terminal device
  // as stdin_fd it becomes the controlling terminal (the device is opened by path for that).
  const char* terminal_path = nullptr;
};

// Spawns options.argv with options.env and options.cwd. The caller closes its copies of the
// child's descriptors afterwards.
Result<pid_t> SpawnChild(const SpawnOptions& options, const ChildStdio& stdio);

// A working directory posix_spawn could not distinguish from a missing program: checked first.
Status CheckWorkingDirectory(const std::string& cwd);

}  // namespace talaria::base_internal
