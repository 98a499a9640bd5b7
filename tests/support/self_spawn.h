// Running one test of this very test binary as a child process, with environment variables
// added: how the crash and concurrency tests get a real second process running test code
// (the child test reads its orders from the environment and skips when they are absent).
// Header-only: any target that links talaria_test_support can include "support/self_spawn.h".
#pragma once

#include <fcntl.h>
#include <spawn.h>
#include <sys/types.h>
#include <unistd.h>

#include <string>
#include <utility>
#include <vector>

extern char** environ;

namespace talaria::test_support {

// Every member has a default initializer, so designated initializers may name only some.
struct SelfSpawn {
  std::string test{};                                      // "Suite.Name", run alone
  std::vector<std::pair<std::string, std::string>> env{};  // added to this process's
  bool quiet_stderr = false;                               // stdout always goes to /dev/null
  std::vector<std::pair<int, int>> dup2s{};                // {parent fd, child fd}
};

// The child's pid, or -1 when it could not be started.
inline pid_t SpawnSelf(const SelfSpawn& spec) {
  char exe[4096];
  const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n <= 0) return -1;
  exe[n] = '\0';
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) env.emplace_back(*e);
  for (const auto& [name, value] : spec.env) env.push_back(name + "=" + value);
  std::vector<char*> envp;
  for (std::string& s : env) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::string filter = "--gtest_filter=" + spec.test;
  char* argv[] = {exe, filter.data(), nullptr};
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  for (const auto& [from, to] : spec.dup2s) posix_spawn_file_actions_adddup2(&fa, from, to);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);  // gtest's own chatter
  if (spec.quiet_stderr) posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid = -1;
  if (::posix_spawn(&pid, exe, &fa, nullptr, argv, envp.data()) != 0) pid = -1;
  posix_spawn_file_actions_destroy(&fa);
  return pid;
}

}  // namespace talaria::test_support
