// execute_code (Programmatic Tool Calling): the model writes a Python script; the script imports
// generated stubs (`from hermes_tools import read_file, terminal` — also importable as
// `talaria_tools`) and calls tools as functions; each call travels back over a socket the
// interpreter inherited as descriptor 3 and goes through the same Dispatcher as a direct call;
// only what the script prints returns to the model.
//
// The interpreter is Debian's python3 by absolute path, run with -I -S, a scrubbed environment
// and a private temporary working directory, inside bubblewrap without network by default (the
// RPC socket is its only way out), else Landlock + seccomp. The wire protocol (length-prefixed
// JSON frames with ids, sender checked by SCM_CREDENTIALS) is described in
// src/tools/code/rpc_frame.h and rpc_server.h.
//
//   talaria::tools::CodeExecutionOptions options;          // or CodeExecutionOptionsFromConfig
//   talaria::tools::EnableCodeExecution(dispatcher, options);
//   dispatcher.Dispatch("execute_code", R"({"code": "from hermes_tools import terminal\n..."})",
//   ctx);
//
// execute_code is not self-registering like the other tools: its scripts call back into one
// particular dispatcher, so the front end that owns the dispatcher enables it.
// Thread-safety: EnableCodeExecution is not thread-safe (configure before dispatching); the
// registered tool is thread-safe.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include "talaria/base/status.h"
#include "talaria/core/config.h"
#include "talaria/core/dispatcher.h"

namespace talaria::tools {

inline constexpr int kDefaultMaxToolCalls = 50;
inline constexpr std::chrono::seconds kDefaultCodeTimeout{300};

enum class CodeSandbox : unsigned char {
  kAuto,      // bubblewrap when it works here, else Landlock + seccomp, else refuse (never
              // silently unisolated)
  kBwrap,     // bubblewrap, or refuse
  kLandlock,  // Landlock + seccomp applied by the interpreter to itself before the script runs
  kNone,      // no isolation beyond the scrubbed environment (explicit opt-out)
};

// How a script's terminal() calls are approved.
enum class ScriptApprovals : unsigned char {
  kInherit,  // like any call: the dispatcher's policy (the command guard and approvals.mode)
  kDeny,     // anything the guard does not plainly allow is refused without asking
};

struct CodeExecutionOptions {
  std::string python = "/usr/bin/python3";
  // On a session whose terminal is an SSH machine the script runs there, with this interpreter
  // (looked up in the remote PATH unless absolute).
  std::string remote_python = "python3";
  CodeSandbox sandbox = CodeSandbox::kAuto;
  std::string bwrap = "bwrap";
  bool network = false;  // bwrap: keep the host network (off: the RPC socket is the only way out)
  std::chrono::seconds timeout = kDefaultCodeTimeout;
  int max_tool_calls = kDefaultMaxToolCalls;
  size_t max_stdout_bytes = 50'000;  // kept as 40 % head / 60 % tail
  size_t max_stderr_bytes = 10'000;
  size_t max_spill_bytes = size_t{5} << 20;  // the full stdout's spill file is cut here
  ScriptApprovals approvals = ScriptApprovals::kInherit;
  // Resource limits the interpreter puts on itself before the script's first line runs, soft and
  // hard alike (the sandbox holds no capability to raise them), inherited by whatever it starts.
  // 0: no limit. CPU time is capped at the timeout and core dumps are off, always.
  uint64_t max_memory_bytes = uint64_t{1} << 30;  // address space (RLIMIT_AS)
  uint64_t max_file_bytes = uint64_t{256} << 20;  // any one file written (RLIMIT_FSIZE)
  uint64_t max_open_files = 256;                  // descriptors (RLIMIT_NOFILE)
  // Tasks (processes and threads) the script may have at once: a pids cgroup where this machine
  // lets talaria make one, else RLIMIT_NPROC counted from the user's current tasks (which the
  // kernel does not enforce for root; the result's isolation_note then says so). Must be > 0.
  uint64_t max_processes = 128;
  // The cgroup whose children hold that limit: "auto" (talaria's own, when it may make children
  // with the pids controller there), "off", or the absolute path of a delegated cgroup.
  std::string pids_cgroup = "auto";
  // Size of the script's private /tmp (a tmpfs; bwrap only). Must be > 0.
  uint64_t tmp_size_bytes = uint64_t{64} << 20;
  // Tools the session has enabled; the stubs cover the original's sandbox set intersected with
  // these (and with what is registered). Empty: every registered tool of that set.
  std::vector<std::string> enabled_tools;
  // Where private working directories are made; empty: $TMPDIR, else /tmp.
  std::string temp_dir;
};

// The original's sandbox tool set (sorted).
const std::vector<std::string>& SandboxToolNames();

// Registers execute_code (toolset code_execution) in dispatcher.registry(), bound to
// `dispatcher`; its schema lists the tools scripts can call. Errors: FailedPrecondition when no
// allowed tool is registered, InvalidArgument for a relative python path, the registry's errors.
// REQUIRES: `dispatcher` outlives the registration (DisableCodeExecution removes it).
Status EnableCodeExecution(Dispatcher& dispatcher, CodeExecutionOptions options = {});
void DisableCodeExecution(Dispatcher& dispatcher);

// config.yaml's `code_execution` section:
//   code_execution:
//     python: /usr/bin/python3
//     remote_python: python3   # on an SSH session's machine
//     sandbox: auto            # auto | bwrap | landlock | none
//     network: false
//     timeout: 300             # seconds
//     max_tool_calls: 50
//     max_stdout_bytes: 50000
//     max_stderr_bytes: 10000
//     approvals: inherit       # inherit | deny
//     max_memory_mb: 1024      # 0: unlimited; also max_file_mb: 256, max_open_files: 256
//     max_processes: 128       # tasks at once (a pids cgroup, else RLIMIT_NPROC)
//     pids_cgroup: auto        # auto | off | /sys/fs/cgroup/<a delegated cgroup>
//     tmp_size_mb: 64          # the script's private /tmp (bwrap)
// Errors: InvalidArgument naming the bad key.
Result<CodeExecutionOptions> CodeExecutionOptionsFromConfig(const Config& config,
                                                            CodeExecutionOptions base = {});

}  // namespace talaria::tools
