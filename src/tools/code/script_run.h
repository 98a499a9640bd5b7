// How one execute_code script ran, wherever it ran: what the result is built from.
//   RunRemoteScript: over a remote environment's exec channel (remote_channel.h).
// Thread-safety: RunRemoteScript is thread-safe; runs share nothing.
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <stop_token>
#include <string>

#include "talaria/base/status.h"
#include "talaria/env/environment.h"

namespace talaria::tools::code {

struct ScriptRun {
  std::string stdout_text;        // head and tail kept within the stdout limit
  size_t stdout_total_bytes = 0;  // all it printed
  std::string stdout_spill;       // the start of stdout, up to the spill limit (for the file)
  std::string stderr_text;        // head and tail kept within the stderr limit
  int exit_code = 0;
  bool timed_out = false;
  bool cancelled = false;
  std::string isolation;       // the result's "isolation"
  std::string isolation_note;  // the result's "isolation_note": what of the sandbox is missing
};

struct RemoteScript {
  std::map<std::string, std::string> files;  // script.py and the stub modules, by file name
  std::string program;                       // the interpreter's bootstrap (limits first)
  std::string python = "python3";            // the remote interpreter
  int rpc_fd =
      -1;  // our end of the local socketpair the RpcServer serves (frames relayed both ways)
  std::chrono::steady_clock::time_point deadline;
  std::stop_token cancel;
  size_t max_stdout_bytes = 50'000;
  size_t max_stderr_bytes = 10'000;
  size_t max_spill_bytes = size_t{5} << 20;
};

// Starts the relay in `environment` (its Start: an ssh exec channel), sends the files, relays
// RPC frames between the remote interpreter and `rpc_fd`, and collects its output until it exits,
// the deadline passes or `cancel` fires (then the channel is killed, and with it, on the remote
// side, the interpreter's whole process group). A relay that never reports an exit (python3
// missing, the connection lost) ends with its channel's exit status and its diagnostics as
// stderr. Errors: those of Environment::Start, Internal for a broken local descriptor.
Result<ScriptRun> RunRemoteScript(env::Environment& environment, const RemoteScript& script);

}  // namespace talaria::tools::code
