// Waiting in a test for something another thread or process brings about: poll the condition
// with a deadline instead of sleeping a guessed amount. A test that waits this way is as fast
// as the machine allows and fails (with the caller's message) only when the condition never
// holds, not when the machine is slow. The deadline is a hang guard, never a timing claim:
// make it generous (seconds), and put speed claims in bench/.
// Header-only: any target that links talaria_test_support can include "support/wait_until.h".
// Thread-safety: free functions; `done` is called on the caller's thread only.
#pragma once

#include <sys/types.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>

namespace talaria::test_support {

// Calls `done` until it returns true or `timeout` has passed, napping `every` in between;
// returns its last answer (so a condition that comes true at the deadline still counts).
template <class Pred>
bool WaitUntil(Pred&& done, std::chrono::steady_clock::duration timeout,
               std::chrono::steady_clock::duration every = std::chrono::milliseconds(1)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(every);
  }
  return static_cast<bool>(done());
}

// Whether thread `tid` of this process is asleep (state S in /proc/self/task/<tid>/stat): blocked
// in a wait, which is where a test wants a thread before it wakes it. Wait for it with WaitUntil.
inline bool ThreadAsleep(pid_t tid) {
  std::ifstream stat("/proc/self/task/" + std::to_string(tid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  const size_t close = line.rfind(')');  // the name may hold spaces and parentheses
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'S';
}

// The ids of this process's threads (/proc/self/task), to tell threads started by the code
// under test from those that were there before. A joined thread may linger a moment.
inline std::set<std::string> ThreadIds() {
  std::set<std::string> ids;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/task"))
    ids.insert(entry.path().filename().string());
  return ids;
}

}  // namespace talaria::test_support
