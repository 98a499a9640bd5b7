// For the tests that run `talaria call browser_*`: finding the task's browser daemon (its pid
// file under $TALARIA_HOME/run), the Chromium processes it owns (their TALARIA_BROWSER_OWNER
// marker), and ending both by PID when a test is over, so none outlives its test.
#pragma once

#include <signal.h>
#include <sys/types.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

namespace talaria::testing_cli {

// Debian's Chromium, which the browser tests drive (they skip without it, saying so).
inline bool ChromiumInstalled() {
  for (const char* p : {"/usr/lib/chromium/chromium", "/usr/bin/chromium"}) {
    if (::access(p, X_OK) == 0) return true;
  }
  return false;
}

// The daemon pid recorded for `task`, or -1 when there is no pid file.
inline pid_t DaemonPid(const std::string& talaria_home, const std::string& task = "cli") {
  std::ifstream in(talaria_home + "/run/browser-" + task + ".pid");
  long pid = -1;
  if (!(in >> pid)) return -1;
  return static_cast<pid_t>(pid);
}

// Alive and not a zombie.
inline bool ProcessRuns(pid_t pid) {
  if (pid <= 0) return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  const size_t close = line.rfind(')');
  return close == std::string::npos || close + 2 >= line.size() || line[close + 2] != 'Z';
}

inline std::string ReadProcFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Running processes whose environment holds `needle`.
inline std::vector<pid_t> ProcessesWithEnv(const std::string& needle) {
  std::vector<pid_t> found;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    if (ReadProcFile(e.path() / "environ").find(needle) == std::string::npos) continue;
    const pid_t pid = std::stoi(name);
    if (ProcessRuns(pid)) found.push_back(pid);
  }
  return found;
}

// The Chromium processes (browser and renderers) a daemon started.
inline std::vector<pid_t> BrowsersOwnedBy(pid_t owner) {
  return ProcessesWithEnv("TALARIA_BROWSER_OWNER=" + std::to_string(owner) + ":");
}

// `talaria browser-daemon` processes serving this TALARIA_HOME: found by their own environment
// where we may read it (a daemon is not dumpable, so only root may), and always through the
// Chromium processes they own, whose environment carries both the home and the owner's pid.
inline std::vector<pid_t> DaemonsOf(const std::string& talaria_home) {
  const std::string home_entry = "TALARIA_HOME=" + talaria_home + std::string(1, '\0');
  const std::string owner_key = "TALARIA_BROWSER_OWNER=";
  std::vector<pid_t> found;
  auto add = [&found](pid_t pid) {
    for (pid_t p : found) {
      if (p == pid) return;
    }
    if (ProcessRuns(pid)) found.push_back(pid);
  };
  for (pid_t pid : ProcessesWithEnv(home_entry)) {
    const std::string proc = "/proc/" + std::to_string(pid);
    if (ReadProcFile(proc + "/cmdline").find(std::string("browser-daemon") + '\0') !=
        std::string::npos) {
      add(pid);
    }
    const std::string env = ReadProcFile(proc + "/environ");
    const size_t at = env.find(owner_key);
    if (at != std::string::npos) add(std::atoi(env.c_str() + at + owner_key.size()));
  }
  return found;
}

inline bool WaitFor(const auto& done, std::chrono::milliseconds limit) {
  const auto give_up = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= give_up) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

// Ends every daemon of this home and whatever Chromium they own: SIGTERM, a bounded wait, then
// SIGKILL. For TearDown, so a failed test leaves nothing running.
inline void EndBrowserDaemons(const std::string& talaria_home) {
  std::vector<pid_t> daemons = DaemonsOf(talaria_home);
  // The pid file of a SIGKILLed daemon may name a reused pid: only a browser-daemon is ended.
  if (const pid_t recorded = DaemonPid(talaria_home);
      ProcessRuns(recorded) &&
      ReadProcFile("/proc/" + std::to_string(recorded) + "/cmdline")
              .find(std::string("browser-daemon") + '\0') != std::string::npos) {
    daemons.push_back(recorded);
  }
  for (pid_t daemon : daemons) {
    ::kill(daemon, SIGTERM);
    if (!WaitFor([&] { return !ProcessRuns(daemon); }, std::chrono::seconds(15))) {
      ::kill(daemon, SIGKILL);
    }
    WaitFor([&] { return BrowsersOwnedBy(daemon).empty(); }, std::chrono::seconds(15));
    for (pid_t browser : BrowsersOwnedBy(daemon)) ::kill(browser, SIGKILL);
  }
}

}  // namespace talaria::testing_cli
