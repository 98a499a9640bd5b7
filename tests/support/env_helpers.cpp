// Helpers for environment tests: see env_helpers.h.
#include "support/env_helpers.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "talaria/base/subprocess.h"

namespace talaria::test_support {

using namespace std::chrono_literals;

bool ProcessRunning(std::string_view pattern) {
  SpawnOptions spawn;
  spawn.argv = {"pgrep", "-f", std::string(pattern)};
  spawn.timeout = 10s;
  auto r = RunProcess(spawn);
  return r && r->exit_code == 0;
}

bool NoProcessWithin(std::string_view pattern, std::chrono::milliseconds deadline) {
  const auto end = std::chrono::steady_clock::now() + deadline;
  while (ProcessRunning(pattern)) {
    if (std::chrono::steady_clock::now() >= end) return false;
    std::this_thread::sleep_for(20ms);
  }
  return true;
}

std::string ReadUntilEof(int fd) {
  std::string out;
  char buf[256];
  for (int i = 0; i < 500; ++i) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) out.append(buf, static_cast<size_t>(n));
    if (n == 0 || (n < 0 && errno == EIO)) break;
    if (n < 0) std::this_thread::sleep_for(10ms);
  }
  return out;
}

std::string HostDirOutsideTmp(std::string_view first_choice) {
  const char* home = std::getenv("HOME");
  for (std::string dir : {std::string(first_choice), std::string(home != nullptr ? home : ""),
                          std::string("/var/cache"), std::string("/opt")}) {
    if (dir.empty() || dir.rfind("/tmp", 0) == 0 || dir.rfind("/var/tmp", 0) == 0) continue;
    if (::access(dir.c_str(), W_OK | X_OK) == 0) return dir;
  }
  return "";
}

std::string MakeScratchOutsideTmp(std::string_view first_choice, std::string_view prefix) {
  const std::string parent = HostDirOutsideTmp(first_choice);
  if (parent.empty()) return "";
  std::string tmpl = parent + "/" + std::string(prefix) + "-XXXXXX";
  if (::mkdtemp(tmpl.data()) == nullptr) return "";
  std::error_code ec;
  const std::string real = std::filesystem::canonical(tmpl, ec).string();
  return ec ? "" : real;
}

}  // namespace talaria::test_support
