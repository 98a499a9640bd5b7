// The session half that SSH and the exec-client backends (Docker, Apptainer) share: they run
// the scripts of remote_shell_scripts.h through a local client that cannot signal what it runs
// on the far side. This keeps the far side's state directory and the session's cwd, runs a
// command (one client call, its cwd reported behind a marker on the client's stderr; a timed
// out or cancelled one killed by a second call), starts background commands and cleans up.
// What differs between the backends is only how a script becomes a local argv (ScriptArgv)
// and what their errors say.
// Thread-safety: thread-safe; Run calls are serialized.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "talaria/base/spawn.h"
#include "talaria/base/status.h"
#include "talaria/base/subprocess.h"
#include "talaria/env/environment.h"

namespace talaria::env {

// The local argv that runs bash on `script` with `args` on the far side (with a terminal when
// `tty`).
using ScriptArgv = std::function<std::vector<std::string>(
    std::string_view script, const std::vector<std::string>& args, bool tty)>;

// What kInitScript answered: ready (state directory and cwd known), or the client's outcome for
// the backend to put into words.
struct InitAnswer {
  bool ready = false;
  ProcessResult result;
};

class RemoteScriptSession {
 public:
  // `control_timeout`: how long a kill or cleanup call may take.
  RemoteScriptSession(ScriptArgv argv, std::chrono::milliseconds control_timeout);

  // Runs kInitScript for `initial_cwd` (empty: the far side's default directory), for at most
  // `timeout`. Errors: the client could not be started (RunProcess's).
  Result<InitAnswer> Init(const std::string& initial_cwd, std::chrono::milliseconds timeout);

  std::string cwd() const;

  // Runs `command` in the session's state. When the far side sent no cwd report (the client
  // failed, or the script was killed), `no_report` decides with the client's exit code and what
  // it printed on stderr; empty: that text is appended to the output.
  Result<CommandOutcome> Run(
      std::string_view command, const CommandOptions& options,
      const std::function<Result<CommandOutcome>(int client_exit, const std::string& client_stderr,
                                                 CommandOutcome out)>& no_report = {});

  // A background command from the session's state, in its own process group on the far side.
  Result<StartedProcess> Start(std::string_view command, const CommandOptions& options,
                               const StartOptions& start);

  // Stops the session's background jobs on the far side and removes its state (best effort).
  void Cleanup();

  // The argv for a script (a backend's own calls).
  std::vector<std::string> Argv(std::string_view script, const std::vector<std::string>& args,
                                bool tty = false) const {
    return argv_(script, args, tty);
  }

 private:
  std::string StartDirectory(const CommandOptions& options) const;
  void KillRun(const std::string& id);

  const ScriptArgv argv_;
  const std::chrono::milliseconds control_timeout_;
  const std::string marker_;
  std::string state_dir_;  // set once by Init
  std::atomic<uint64_t> jobs_{0};
  std::mutex run_mu_;
  mutable std::mutex mu_;
  std::string cwd_;  // Guarded by mu_.
};

}  // namespace talaria::env
