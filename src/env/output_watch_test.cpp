// Watch-pattern rate limits on a manual clock: one notice per interval, strikes, the lifetime
// cap, the table-wide breaker, and lines split across reads.
#include "output_watch.h"

#include <gtest/gtest.h>

namespace talaria::env {
namespace {

using namespace std::chrono_literals;
using Event = OutputWatch::Event;
const auto kT0 = std::chrono::steady_clock::time_point{} + 1h;

WatchLimits Limits(std::chrono::seconds interval, int max_hits = 8,
                   size_t max_excerpt_bytes = 1000) {
  WatchLimits limits;
  limits.interval = interval;
  limits.max_hits = max_hits;
  limits.max_excerpt_bytes = max_excerpt_bytes;
  return limits;
}

TEST(OutputWatch, MatchesWholeLinesEvenWhenSplitAcrossReads) {
  NoticeBreaker breaker;
  OutputWatch watch({"ERROR"}, {});
  EXPECT_EQ(watch.Feed("ok line\nsome ERR", kT0, breaker).event, Event::kNone);
  auto seen = watch.Feed("OR here\nnext\n", kT0, breaker);
  EXPECT_EQ(seen.event, Event::kMatched);
  EXPECT_EQ(seen.lines, "some ERROR here");
}

TEST(OutputWatch, OneNoticePerIntervalAndThreeStruckIntervalsDisableIt) {
  NoticeBreaker breaker;
  OutputWatch watch({"x"}, Limits(15s));
  auto t = kT0;
  for (int interval = 0; interval < 3; ++interval) {
    EXPECT_EQ(watch.Feed("x\n", t, breaker).event, Event::kMatched) << interval;
    EXPECT_EQ(watch.Feed("x\n", t + 1s, breaker).event,
              interval < 2 ? Event::kNone : Event::kDisabled);
    EXPECT_EQ(watch.Feed("x\n", t + 2s, breaker).event, Event::kNone) << "one strike per interval";
    t += 16s;
  }
  EXPECT_FALSE(watch.active());
  EXPECT_EQ(watch.Feed("x\n", t + 1h, breaker).event, Event::kNone);
}

TEST(OutputWatch, StopsAfterTheLifetimeCap) {
  NoticeBreaker breaker;
  OutputWatch watch({"x"}, Limits(1s));
  int notices = 0;
  for (int i = 0; i < 20; ++i)
    notices +=
        watch.Feed("x\n", kT0 + std::chrono::seconds(2 * i), breaker).event == Event::kMatched;
  EXPECT_EQ(notices, 8);
  EXPECT_FALSE(watch.active());
}

TEST(OutputWatch, TheBreakerPausesEveryWatchAfterABurst) {
  NoticeBreaker breaker({.max_notices = 15, .window = 10s, .cooldown = 30s});
  std::vector<OutputWatch> watches;
  for (int i = 0; i < 20; ++i) watches.emplace_back(std::vector<std::string>{"x"}, WatchLimits{});
  int admitted = 0;
  for (auto& w : watches) admitted += w.Feed("x\n", kT0 + 1s, breaker).event == Event::kMatched;
  EXPECT_EQ(admitted, 15);
  OutputWatch fresh({"x"}, {});
  EXPECT_EQ(fresh.Feed("x\n", kT0 + 20s, breaker).event, Event::kNone) << "still cooling down";
  EXPECT_EQ(fresh.Feed("x\n", kT0 + 32s, breaker).event, Event::kMatched);
}

TEST(OutputWatch, QuotesABoundedExcerptOfTheMatchingLines) {
  NoticeBreaker breaker;
  OutputWatch watch({"hit"}, Limits(15s, 8, 20));
  auto seen = watch.Feed("hit one\nmiss\nhit two\nhit three is long\n", kT0, breaker);
  ASSERT_EQ(seen.event, Event::kMatched);
  EXPECT_EQ(seen.lines.substr(0, 16), "hit one\nhit two\n");
  EXPECT_LE(seen.lines.size(), 20u);
}

TEST(OutputWatch, EmptyPatternsWatchNothing) {
  NoticeBreaker breaker;
  OutputWatch watch({""}, {});
  EXPECT_FALSE(watch.active());
  EXPECT_EQ(watch.Feed("anything\n", kT0, breaker).event, Event::kNone);
}

}  // namespace
}  // namespace talaria::env
