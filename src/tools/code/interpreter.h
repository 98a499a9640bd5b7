// How execute_code starts its interpreter: the argv (bubblewrap in front, or the Landlock +
// seccomp confinement at the head of the bootstrap, unless the sandbox is off; resource limits
// first of all, set by the interpreter on itself), a scrubbed environment, and which isolation
// applied.
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
  Isolation isolation = Isolation::kNone;
};

// The plan for running `script` (inside `work_dir`, which also holds the stub modules).
// Errors: FailedPrecondition when the configured sandbox cannot be had here (the message says
// how to opt out), NotFound when the interpreter is missing.
Result<InterpreterPlan> PlanInterpreter(const CodeExecutionOptions& options, const std::string& work_dir,
                                        const std::string& script);

// The program a remote interpreter runs (`python -c`): the resource limits, then the bootstrap.
// No confinement: the remote machine is the session's own, as its terminal is.
std::string RemoteInterpreterProgram(const CodeExecutionOptions& options);

}  // namespace talaria::tools::code
