// poll()'s timeout argument for a wait until an instant of the monotonic clock.
// Thread-safety: a pure function.
#pragma once

#include <algorithm>
#include <chrono>
#include <climits>

namespace talaria {

// -1 (forever) for time_point::max(), 0 once `wake` has passed, else the milliseconds from `now`
// rounded up, so a wait never ends just before `wake` and spins.
inline int PollTimeoutMs(std::chrono::steady_clock::time_point now,
                         std::chrono::steady_clock::time_point wake) {
  if (wake == std::chrono::steady_clock::time_point::max()) return -1;
  if (wake <= now) return 0;
  const auto ms = std::chrono::ceil<std::chrono::milliseconds>(wake - now).count();
  return static_cast<int>(std::min<long long>(ms, INT_MAX));
}

}  // namespace talaria
