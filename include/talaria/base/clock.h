// Clock seam: code that caches by time (availability checks, budgets) asks a Clock, so tests can
// drive time by hand instead of sleeping.
// Thread-safety: SystemClock is thread-safe; ManualClock is thread-safe (atomic).
#pragma once

#include <atomic>
#include <chrono>

namespace talaria {

class Clock {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;
  virtual ~Clock() = default;
  virtual TimePoint Now() const = 0;
};

// The process-wide monotonic clock.
Clock& SystemClock();

class ManualClock final : public Clock {
 public:
  TimePoint Now() const override { return TimePoint(std::chrono::nanoseconds(ns_.load())); }
  void Advance(std::chrono::nanoseconds d) { ns_ += d.count(); }

 private:
  std::atomic<long long> ns_{1'000'000'000'000LL};
};

}  // namespace talaria
