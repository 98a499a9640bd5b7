// A real Debian Chromium for the browser tests: headless, its own profile directory and process
// group, `--remote-debugging-port=0` (Chromium picks the port and writes it, with the browser's
// WebSocket path, to DevToolsActivePort in the profile). Ended by PID (its whole group) and
// reaped when the fixture goes; `ProcessesUsingProfile` lets a test check that nothing of it is
// left.
// Not thread-safe; caller synchronises.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <thread>

#include "support/temp_dir.h"
#include "talaria/base/unique_fd.h"

namespace talaria_test {

class LocalChromium {
 public:
  // The chromium program, or "" when none is installed (tests then skip, saying so).
  static std::string ProgramPath();
  // Starts Chromium and waits (at most 30 s) for its DevTools port. Null with `why` on failure.
  static std::unique_ptr<LocalChromium> Start(std::string& why);
  ~LocalChromium();
  LocalChromium(const LocalChromium&) = delete;
  LocalChromium& operator=(const LocalChromium&) = delete;

  pid_t pid() const { return pid_; }
  int port() const { return port_; }
  const std::string& profile_dir() const { return profile_.path(); }
  // ws://127.0.0.1:<port>/devtools/browser/<id>
  const std::string& browser_ws_url() const { return ws_url_; }
  // Ends the group now (SIGTERM, then SIGKILL) and reaps the leader; idempotent.
  void Stop();

 private:
  LocalChromium() = default;

  talaria::test_support::TempDir profile_;
  pid_t pid_ = -1;
  talaria::UniqueFd pidfd_;
  talaria::UniqueFd output_;
  std::jthread drain_;  // reads Chromium's output so a full pipe never blocks it
  int port_ = 0;
  std::string ws_url_;
};

// Live processes whose command line mentions `needle` (a profile directory), by /proc.
int ProcessesMentioning(const std::string& needle);

}  // namespace talaria_test
