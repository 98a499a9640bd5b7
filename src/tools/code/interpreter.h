// How execute_code starts its interpreter: the argv (bubblewrap in front, or the Landlock +
// seccomp confinement at the head of the bootstrap, unless the sandbox is off; resource limits
// first of all, set by the interpreter on itself), a scrubbed environment, and which isolation
// applied. A small /bin/sh wrapper goes first when the script gets a pids cgroup (it enters the
// cgroup, then executes the rest, so nothing the script starts is outside) or a seccomp program
// (it moves the program from stdin to descriptor 4 for bwrap's --seccomp).
//
// Under bwrap the interpreter sees /usr, the loader's /etc files, fresh /dev, /proc and /tmp, and
// its private working directory, nothing else: no home directories (so no ~/.ssh), no
// $TALARIA_HOME, no talaria build or library, and no network unless configured. The environment
// is built from nothing, never copied from ours, so no credential can be inherited.
// Thread-safety: PlanInterpreter is thread-safe (the bwrap probe is cached under a mutex).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "talaria/base/status.h"
#include "talaria/tools/code_execution.h"

namespace talaria::tools::code {

enum class Isolation : unsigned char { kNone, kBwrap, kLandlock };

// "none", "bwrap" or "landlock+seccomp", as the result's "isolation" field says.
std::string_view IsolationName(Isolation isolation);

struct InterpreterPlan {
  std::vector<std::string> argv;
  std::vector<std::string> env;
  // The child's stdin: under bwrap, the compiled seccomp program (the wrapper hands it to bwrap
  // as descriptor 4 and gives the interpreter /dev/null instead).
  std::string stdin_data;
  Isolation isolation = Isolation::kNone;
  // What of the sandbox this machine could not provide, and why ("" when all of it holds): the
  // result's "isolation_note".
  std::string note;
};

// How the script's task count is bounded: the pids cgroup it enters (pids_cgroup.h) or, when
// there is none, RLIMIT_NPROC.
struct ProcessLimit {
  std::string cgroup_procs;      // the cgroup's cgroup.procs; empty: none
  std::string no_cgroup_reason;  // why there is none (for the note)
};

// The plan for running `script` (inside `work_dir`, which also holds the stub modules).
// Errors: FailedPrecondition when the configured sandbox cannot be had here (the message says
// how to opt out), NotFound when the interpreter is missing.
Result<InterpreterPlan> PlanInterpreter(const CodeExecutionOptions& options,
                                        const std::string& work_dir, const std::string& script,
                                        const ProcessLimit& limit);

// The program a remote interpreter runs (`python -c`): the resource limits, then the bootstrap.
// No confinement: the remote machine is the session's own, as its terminal is.
std::string RemoteInterpreterProgram(const CodeExecutionOptions& options);

}  // namespace talaria::tools::code
