// The shell state one session's commands share, kept the way the original keeps it: every
// command runs in a fresh `bash -c`, which first re-exports what the previous command exported,
// and on exit (an EXIT trap, so `exit 3` saves too) writes its exports and its working directory
// to a private state directory. A command killed by SIGKILL leaves the previous state in place.
// Unsetting a variable does not carry over (the next shell starts from the session's base
// environment).
// Thread-safety: thread-safe.
#pragma once

#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "talaria/base/status.h"

namespace talaria::env {

class ShellSession {
 public:
  // `state_dir` empty: a fresh 0700 directory in /dev/shm (else $TMPDIR), removed with the
  // session.
  static Result<std::unique_ptr<ShellSession>> Create(std::string state_dir, std::string initial_cwd);
  ~ShellSession();
  ShellSession(const ShellSession&) = delete;
  ShellSession& operator=(const ShellSession&) = delete;

  // bash argv running `command` in the session (`persist`: its exports and cwd are saved).
  std::vector<std::string> Argv(std::string_view command, bool persist) const;
  // The same for a shell state directory `state_dir` somewhere else (inside a container).
  static std::vector<std::string> ArgvFor(std::string bash, std::string state_dir, std::string_view command,
                                          bool persist);
  // After a persisted command: adopts the cwd it left, if that still is a directory.
  void AdoptSavedCwd();
  std::string cwd() const;
  const std::string& state_dir() const { return state_dir_; }

 private:
  ShellSession(std::string state_dir, bool owned, std::string cwd);

  std::string state_dir_;
  bool owned_ = false;
  std::string bash_;
  mutable std::mutex mu_;
  std::string cwd_;  // Guarded by mu_.
};

}  // namespace talaria::env
