// CallGate: keeps MCP tool calls that must not overlap apart. Shared holders (read-only and
// path-scoped readers) run together; an exclusive holder (a writer, a never-parallel tool such
// as terminal) runs alone. A waiting exclusive holder blocks new shared ones, so writers are not
// starved. Every wait ends when the caller's stop token fires.
// Thread-safety: thread-safe.
#pragma once

#include <condition_variable>
#include <mutex>
#include <stop_token>

namespace talaria::mcp {

enum class GateMode : unsigned char { kShared, kExclusive };

class CallGate {
 public:
  // Returns false (holding nothing) when `stop` fired before the gate let the caller in.
  bool Enter(GateMode mode, const std::stop_token& stop) {
    std::unique_lock lock(mu_);
    if (mode == GateMode::kShared) {
      if (!cv_.wait(lock, stop, [this] { return !writer_ && writers_waiting_ == 0; })) return false;
      ++readers_;
      return true;
    }
    ++writers_waiting_;
    const bool in = cv_.wait(lock, stop, [this] { return !writer_ && readers_ == 0; });
    --writers_waiting_;
    if (in) writer_ = true;
    if (!in) cv_.notify_all();  // shared callers may have waited behind us
    return in;
  }

  void Leave(GateMode mode) {
    {
      std::lock_guard lock(mu_);
      if (mode == GateMode::kShared) {
        --readers_;
      } else {
        writer_ = false;
      }
    }
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable_any cv_;
  int readers_ = 0;          // Guarded by mu_.
  int writers_waiting_ = 0;  // Guarded by mu_.
  bool writer_ = false;      // Guarded by mu_.
};

}  // namespace talaria::mcp
