// Where commands run: one interface over the local machine, a bubblewrap sandbox, SSH and
// Docker. An Environment is a shell session: the working directory and the exported variables a
// command leaves behind are what the next command starts with.
//
//   auto env = talaria::env::OpenLocal({.initial_cwd = "/srv/project"});
//   auto r = (*env)->Run("cd src && export MODE=fast", {});
//   r = (*env)->Run("pwd; echo $MODE", {});   // "/srv/project/src\nfast\n"
//
// Thread-safety: Run and Start may be called from any thread; Run calls of one session are
// serialized (each sees the state the previous one left).
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "talaria/base/spawn.h"
#include "talaria/base/status.h"

namespace talaria::env {

struct CommandOptions {
  // Absolute directory to run in; empty: the session's current directory.
  std::string workdir;
  // Wall-clock limit; zero: none. On expiry the command's whole process group is killed and the
  // outcome says timed_out (exit 124) with the output so far.
  std::chrono::milliseconds timeout{0};
  // Cancellation: the group is killed, exit 130.
  std::stop_token cancel;
  // The interleaved stdout+stderr is kept as 40 % head / 60 % tail of this many bytes.
  size_t max_output_bytes = 50'000;
  std::string stdin_data;
};

struct CommandOutcome {
  std::string output;
  size_t output_total_bytes = 0;
  int exit_code = 0;
  bool timed_out = false;
  bool cancelled = false;
};

class Environment {
 public:
  virtual ~Environment() = default;

  // "local", "bwrap", "ssh" or "docker".
  virtual std::string_view kind() const = 0;
  // The directory the next command starts in.
  virtual std::string cwd() const = 0;

  // Runs `command` with bash in the session; its cwd and exports carry over.
  virtual Result<CommandOutcome> Run(std::string_view command, const CommandOptions& options) = 0;
  // Starts `command` in the background from the session's current state (its own changes do
  // not carry back). The caller owns the returned process (see StartProcess).
  virtual Result<StartedProcess> Start(std::string_view command, const CommandOptions& options,
                                       const StartOptions& start) = 0;
};

struct LocalOptions {
  // Where the first command runs; empty: the process's current directory.
  std::string initial_cwd;
  // Variables kept although their names look secret (KEY, TOKEN, SECRET, PASSWORD, ...).
  std::vector<std::string> env_passthrough;
  // Private directory for the session's shell state; empty: a fresh one under $TMPDIR.
  std::string state_dir;
};

// Errors: NotFound (no bash, or initial_cwd missing), Internal (state directory).
Result<std::shared_ptr<Environment>> OpenLocal(LocalOptions options);

}  // namespace talaria::env
