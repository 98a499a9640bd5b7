// The shell state one session's commands share, kept the way the original keeps it: every
// command runs in a fresh `bash -c`, which first re-exports what the previous command exported,
// and on exit (an EXIT trap, so `exit 3` saves too) writes its exports and its working directory
// to a private state directory. A command killed by SIGKILL leaves the previous state in place.
// Unsetting a variable does not carry over (the next shell starts from the session's base
// environment).
// Thread-safety: thread-safe.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "talaria/base/status.h"
#include "talaria/env/remote_shell.h"  // StartDir

namespace talaria::env {

class ShellSession {
 public:
  // `state_dir` empty: a fresh 0700 directory in /dev/shm (else $TMPDIR), removed with the
  // session. `base_env` is the environment every command's bash starts with (NAME=value
  // entries); knowing it lets a command skip re-exporting what it inherits anyway. Empty: not
  // known, every saved export is sourced again.
  static Result<std::unique_ptr<ShellSession>> Create(std::string state_dir,
                                                      std::string initial_cwd,
                                                      std::vector<std::string> base_env = {});
  ~ShellSession();
  ShellSession(const ShellSession&) = delete;
  ShellSession& operator=(const ShellSession&) = delete;

  // bash argv running `command` in the session (`persist`: its exports and cwd are saved; with
  // kOneOff, the cwd only when the command moved away from the directory it started in).
  std::vector<std::string> Argv(std::string_view command, bool persist,
                                StartDir start_dir = StartDir::kSession) const;
  // The same for a shell state directory `state_dir` somewhere else (inside a container): it
  // sources the saved exports whole and, when persisting, writes the shell's pid to
  // `state_dir`/pid (for a client that cannot signal the command directly, like docker exec).
  static std::vector<std::string> ArgvFor(std::string bash, std::string state_dir,
                                          std::string_view command, bool persist,
                                          StartDir start_dir = StartDir::kSession);
  // After a persisted command: adopts the cwd it left, if that still is a directory, and
  // works out which of its exports the next command must source.
  void AdoptSavedState();
  std::string cwd() const;
  const std::string& state_dir() const { return state_dir_; }

 private:
  ShellSession(std::string state_dir, bool owned, std::string cwd,
               std::vector<std::string> base_env);

  std::string state_dir_;
  bool owned_ = false;
  std::string bash_;
  const std::vector<std::string> base_env_;
  mutable std::mutex mu_;
  std::string cwd_;            // Guarded by mu_.
  std::string source_file_;    // Guarded by mu_. What the next command sources; empty: nothing.
  std::mutex save_mu_;         // Held through AdoptSavedState.
  std::string written_delta_;  // Guarded by save_mu_. What env.delta holds.
};

// The statements of `saved` (what `export -p` printed) that a bash started with `base_env`
// does not already carry out: `declare -x NAME="value"` with NAME=value in `base_env` is left
// out, everything else is kept verbatim. nullopt when `saved` is not a sequence of complete
// `declare` statements as bash prints them (a file cut short, an unknown form): the caller
// then sources it whole.
std::optional<std::string> ExportsNotInherited(std::string_view saved,
                                               const std::vector<std::string>& base_env);

}  // namespace talaria::env
