// Outlet delivery: one thread at a time in the sink, every message exactly once and in the
// order its sender handed it in, Send back only once the sink took its message, Post free to
// leave earlier, Close delivering what was handed in before it.
#include "mcp/outlet.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "support/wait_until.h"

namespace talaria::mcp {
namespace {

using namespace std::chrono_literals;

// A sink that records what it took, fails the test if entered twice at once, and can be held
// shut to make other senders queue.
struct RecordingSink {
  std::atomic<int> inside{0};
  std::atomic<bool> overlapped{false};
  std::mutex mu;
  std::vector<std::pair<std::string, std::string>> taken;  // line, routing request
  std::atomic<bool> hold{false};
  std::atomic<bool> entered{false};

  RoutedSink Sink() {
    return [this](std::string_view line, const Routing& routing) {
      if (inside.fetch_add(1) != 0) overlapped = true;
      entered = true;
      while (hold) std::this_thread::sleep_for(1ms);
      std::this_thread::yield();  // widen the window for an overlap
      {
        std::lock_guard lock(mu);
        taken.emplace_back(std::string(line), std::string(routing.request));
      }
      inside.fetch_sub(1);
    };
  }
  size_t Count() {
    std::lock_guard lock(mu);
    return taken.size();
  }
};

TEST(Outlet, ConcurrentSendersAreDeliveredOnceEachInTheirOrderAndNeverOverlap) {
  RecordingSink sink;
  auto outlet = std::make_shared<Outlet>(sink.Sink());
  constexpr int kThreads = 8;
  constexpr int kEach = 300;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        const std::string line = std::to_string(t) + ":" + std::to_string(i);
        const std::string key = "k" + std::to_string(t);
        if (i % 2 == 0) {
          outlet->Post(line, Routing{key, true});
        } else {
          outlet->Send(line, Routing{key, false});
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  outlet->Close();
  EXPECT_FALSE(sink.overlapped);
  ASSERT_EQ(sink.Count(), size_t{kThreads * kEach});
  std::map<int, int> next;  // per sender, the next index expected
  for (const auto& [line, request] : sink.taken) {
    const int t = std::stoi(line.substr(0, line.find(':')));
    const int i = std::stoi(line.substr(line.find(':') + 1));
    EXPECT_EQ(i, next[t]) << line;
    next[t] = i + 1;
    EXPECT_EQ(request, "k" + std::to_string(t)) << "the routing travels with its own message";
  }
}

TEST(Outlet, SendReturnsOnlyOnceTheSinkTookItPostMayReturnBefore) {
  RecordingSink sink;
  auto outlet = std::make_shared<Outlet>(sink.Sink());
  sink.hold = true;
  std::thread first([&] { outlet->Send("first", Routing{}); });  // delivering, held in the sink
  while (!sink.entered) std::this_thread::sleep_for(1ms);

  outlet->Post("posted", Routing{"p", true});  // queued behind "first": returns at once
  std::atomic<bool> send_returned{false};
  std::atomic<pid_t> second_tid{0};
  std::thread second([&] {
    second_tid = ::gettid();
    outlet->Send("sent", Routing{});
    send_returned = true;
  });
  // Until Send either came back (wrongly) or sleeps waiting for the delivery.
  test_support::WaitUntil(
      [&] { return send_returned || (second_tid != 0 && test_support::ThreadAsleep(second_tid)); },
      10s);
  EXPECT_FALSE(send_returned) << "Send came back before its message was delivered";
  EXPECT_EQ(sink.Count(), 0u);

  sink.hold = false;
  first.join();
  second.join();
  EXPECT_TRUE(send_returned);
  ASSERT_EQ(sink.Count(), 3u);
  EXPECT_EQ(sink.taken[0].first, "first");
  EXPECT_EQ(sink.taken[1].first, "posted");
  EXPECT_EQ(sink.taken[2].first, "sent");
}

// A line posted by move while another is being delivered is queued as it is, not copied: it
// still arrives whole, in its place, with its routing.
TEST(Outlet, ALinePostedByMoveArrivesWholeInItsPlace) {
  RecordingSink sink;
  auto outlet = std::make_shared<Outlet>(sink.Sink());
  sink.hold = true;
  std::thread first([&] { outlet->Send("first", Routing{}); });
  while (!sink.entered) std::this_thread::sleep_for(1ms);
  std::string answer(100'000, 'a');
  outlet->Post(std::move(answer), Routing{"r1", true});
  outlet->Post(std::string("second"), Routing{"r2", true});
  sink.hold = false;
  first.join();
  ASSERT_EQ(sink.Count(), 3u);
  EXPECT_EQ(sink.taken[1].first, std::string(100'000, 'a'));
  EXPECT_EQ(sink.taken[1].second, "r1");
  EXPECT_EQ(sink.taken[2].first, "second");
  EXPECT_EQ(sink.taken[2].second, "r2");
}

TEST(Outlet, CloseDeliversWhatWasQueuedThenDropsTheRest) {
  RecordingSink sink;
  auto outlet = std::make_shared<Outlet>(sink.Sink());
  sink.hold = true;
  std::thread first([&] { outlet->Post("first", Routing{}); });
  while (!sink.entered) std::this_thread::sleep_for(1ms);
  outlet->Post("queued", Routing{});
  std::atomic<pid_t> closer_tid{0};
  std::atomic<bool> closed{false};
  std::thread closer([&] {
    closer_tid = ::gettid();
    outlet->Close();
    closed = true;
  });
  // Close is under way (returned, or asleep waiting for the held delivery) before the sink
  // lets go.
  test_support::WaitUntil(
      [&] { return closed || (closer_tid != 0 && test_support::ThreadAsleep(closer_tid)); }, 10s);
  sink.hold = false;
  closer.join();
  first.join();
  outlet->Post("after close", Routing{});
  outlet->Send("after close too", Routing{});
  ASSERT_EQ(sink.Count(), 2u);
  EXPECT_EQ(sink.taken[1].first, "queued");
}

TEST(Outlet, ASinkThatThrowsLosesOnlyThatMessage) {
  std::vector<std::string> taken;
  auto outlet = std::make_shared<Outlet>([&](std::string_view line, const Routing&) {
    if (line == "bad") throw std::runtime_error("sink failed");
    taken.emplace_back(line);
  });
  outlet->Send("bad", Routing{});
  outlet->Send("good", Routing{});
  outlet->Post("also good", Routing{});
  outlet->Close();
  EXPECT_EQ(taken, (std::vector<std::string>{"good", "also good"}));
}

}  // namespace
}  // namespace talaria::mcp
