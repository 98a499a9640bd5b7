// Turns SIGINT and SIGTERM into a callback on a thread of our own, for commands that must
// cancel work (and kill its children) before they exit rather than die mid-way.
// Construct it before any other thread starts: the signals are blocked in the constructing
// thread and so in every thread started after it (children get a clean mask from spawn).
// Thread-safety: construct and destroy on one thread; the callbacks run on the watch thread.
#pragma once

#include <atomic>
#include <functional>
#include <thread>

#include <signal.h>

namespace talaria::cli {

class SignalWatch {
 public:
  // `on_signal` runs once per signal received; `on_tick` about every 100 ms (may be empty).
  SignalWatch(std::function<void(int)> on_signal, std::function<void()> on_tick);
  ~SignalWatch();
  SignalWatch(const SignalWatch&) = delete;
  SignalWatch& operator=(const SignalWatch&) = delete;

  // The first signal received, or 0.
  int received() const { return received_.load(); }

 private:
  sigset_t set_{};
  sigset_t old_{};
  std::atomic<int> received_{0};
  std::jthread thread_;
};

}  // namespace talaria::cli
