// One running `talaria mcp ...` for the integration tests: started through /bin/sh so its stderr
// goes to a file the test can read at any time, ended (whole process group) with the object.
#pragma once

#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "talaria/base/shell_words.h"
#include "talaria/base/spawn.h"

namespace talaria::testing_cli {

class McpProcessBase {
 public:
  // `extra_env`: NAME=value entries added to the minimal environment.
  McpProcessBase(const std::string& home, const std::string& cwd,
                 const std::vector<std::string>& args, bool stdin_pipe,
                 const std::vector<std::string>& extra_env = {})
      : stderr_path_(home + "/mcp.stderr") {
    std::vector<std::string> words = {TALARIA_CLI_PATH, "mcp"};
    words.insert(words.end(), args.begin(), args.end());
    std::string command = "exec " + ShellJoin(words) + " 2>" + ShellQuote(stderr_path_);
    SpawnOptions spawn;
    spawn.argv = {"/bin/sh", "-c", command};
    spawn.cwd = cwd;
    std::vector<std::string> env = {"TALARIA_HOME=" + home + "/.talaria", "HOME=" + home,
                                    "PATH=/usr/bin:/bin"};
    env.insert(env.end(), extra_env.begin(), extra_env.end());
    spawn.env = std::move(env);
    StartOptions start;
    start.stdin_pipe = stdin_pipe;
    auto child = StartProcess(spawn, start);
    EXPECT_TRUE(child) << child.error().message();
    if (child) child_ = std::move(*child);
  }
  ~McpProcessBase() {
    if (child_.pid > 0 && !reaped_) {
      TerminateProcessGroup(child_.pid, child_.pidfd.get(), std::chrono::milliseconds(500));
      siginfo_t info{};
      ::waitid(P_PID, static_cast<id_t>(child_.pid), &info, WEXITED);
    }
  }
  McpProcessBase(const McpProcessBase&) = delete;
  McpProcessBase& operator=(const McpProcessBase&) = delete;

  void Signal(int sig) { ::kill(child_.pid, sig); }

  // Exit status once the process ends (128 + N for signal N), or -1 after `timeout`.
  int Wait(std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
    pollfd p{child_.pidfd.get(), POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(timeout.count())) != 1) return -1;
    siginfo_t info{};
    ::waitid(P_PID, static_cast<id_t>(child_.pid), &info, WEXITED);
    reaped_ = true;
    return info.si_code == CLD_EXITED ? info.si_status : 128 + info.si_status;
  }

  std::string Stderr() const {
    std::ifstream in(stderr_path_);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }

 protected:
  bool Exited() {
    pollfd p{child_.pidfd.get(), POLLIN, 0};
    return ::poll(&p, 1, 0) == 1;
  }

  std::string stderr_path_;
  StartedProcess child_;
  bool reaped_ = false;
};

inline nlohmann::json Request(int id, const std::string& method,
                              nlohmann::json params = nlohmann::json::object()) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}};
}

}  // namespace talaria::testing_cli
