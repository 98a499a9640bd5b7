// Watch patterns of one background process, with the original's rate limits: at most one
// notice per interval; an interval in which matches had to be dropped is a strike, and after
// `max_strikes` strikes (or `max_hits` notices in its life) the watch turns itself off and the
// process falls back to a completion notice. A NoticeBreaker shared by the whole table stops
// every watch for a cooldown when too many notices came in a short window.
// Thread-safety: not thread-safe; the process table calls it under its lock.
#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

namespace talaria::env {

struct WatchLimits {
  std::chrono::seconds interval{15};
  int max_strikes = 3;
  int max_hits = 8;
  size_t max_line_bytes = 4096;     // longer lines are matched on their first bytes
  size_t max_excerpt_bytes = 1000;  // matched lines quoted in one notice
};

struct BreakerLimits {
  size_t max_notices = 15;
  std::chrono::seconds window{10};
  std::chrono::seconds cooldown{30};
};

class NoticeBreaker {
 public:
  using Clock = std::chrono::steady_clock;
  explicit NoticeBreaker(BreakerLimits limits = {}) : limits_(limits) {}
  // Whether a notice may go out at `now`; counts it when it may.
  bool Admit(Clock::time_point now);

 private:
  BreakerLimits limits_;
  std::deque<Clock::time_point> recent_;
  Clock::time_point cooled_until_{};
};

class OutputWatch {
 public:
  using Clock = std::chrono::steady_clock;
  enum class Event : unsigned char { kNone, kMatched, kDisabled };
  struct Outcome {
    Event event = Event::kNone;
    std::string lines;  // kMatched: the matching lines, newline-separated, bounded
  };

  OutputWatch() = default;
  OutputWatch(std::vector<std::string> patterns, WatchLimits limits);

  bool active() const { return !patterns_.empty() && !disabled_; }
  int hits() const { return hits_; }

  // Scans the complete lines of `chunk` (a partial last line waits for the next chunk).
  Outcome Feed(std::string_view chunk, Clock::time_point now, NoticeBreaker& breaker);

 private:
  bool Matches(std::string_view line) const;

  std::vector<std::string> patterns_;
  WatchLimits limits_;
  std::string carry_;  // the unfinished last line, at most max_line_bytes
  bool disabled_ = false;
  int hits_ = 0;
  int strikes_ = 0;
  bool noticed_once_ = false;
  Clock::time_point last_notice_{};
  Clock::time_point struck_window_{};  // the interval already counted as a strike
};

}  // namespace talaria::env
