// A `talaria` process the test controls while it runs (signals, kill -9), for the agent's
// process-level tests; cli_harness.h's RunTalaria waits for the end instead.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cli_harness.h"

namespace talaria::testing_cli {

class TalariaProcess {
 public:
  // Starts talaria with `args` in `how.cwd`, HOME/TALARIA_HOME as RunTalaria sets them, stdin
  // /dev/null, stdout and stderr to files of `how.home`.
  TalariaProcess(const CliInvocation& how, const std::vector<std::string>& args)
      : out_path_(how.home + "/out.txt"), err_path_(how.home + "/err.txt") {
    std::vector<std::string> argv{TALARIA_CLI_PATH};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<std::string> env = TalariaEnvironment(how);
    std::vector<char*> cargv;
    for (auto& a : argv) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    std::vector<char*> cenv;
    for (auto& e : env) cenv.push_back(e.data());
    cenv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, out_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0600);
    posix_spawn_file_actions_addopen(&actions, 2, err_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0600);
    if (!how.cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, how.cwd.c_str());
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    // Its own process group, so kill -9 of the group takes its tool children too (as a
    // terminal's kill of a foreground job would).
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attr, 0);
    if (posix_spawn(&pid_, argv[0].c_str(), &actions, &attr, cargv.data(), cenv.data()) != 0) {
      ADD_FAILURE() << "cannot start " << argv[0];
      pid_ = -1;
    }
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
  }
  ~TalariaProcess() {
    if (pid_ > 0 && !exit_code_) {
      ::kill(-pid_, SIGKILL);
      int status = 0;
      ::waitpid(pid_, &status, 0);
    }
  }
  TalariaProcess(const TalariaProcess&) = delete;
  TalariaProcess& operator=(const TalariaProcess&) = delete;

  pid_t pid() const { return pid_; }
  void Signal(int sig) const {
    if (pid_ > 0) ::kill(pid_, sig);
  }
  // SIGKILL to the whole process group: no handler runs, nothing is flushed.
  void KillHard() const {
    if (pid_ > 0) ::kill(-pid_, SIGKILL);
  }
  // The exit code (128+N for signal N), or nullopt if it is still running after `timeout`.
  std::optional<int> Wait(std::chrono::milliseconds timeout) {
    if (exit_code_) return exit_code_;
    const auto until = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      int status = 0;
      const pid_t done = ::waitpid(pid_, &status, WNOHANG);
      if (done == pid_) {
        exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        return exit_code_;
      }
      if (std::chrono::steady_clock::now() >= until) return std::nullopt;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  std::string out() const { return ReadFile(out_path_); }
  std::string err() const { return ReadFile(err_path_); }

 private:
  static std::string ReadFile(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  std::string out_path_;
  std::string err_path_;
  pid_t pid_ = -1;
  std::optional<int> exit_code_;
};

}  // namespace talaria::testing_cli
