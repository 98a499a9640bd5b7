#include "talaria/base/elastic_pool.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>

#include <gtest/gtest.h>

namespace talaria {
namespace {

using namespace std::chrono_literals;

// Polls `done` every 5 ms for up to 10 s.
template <class F>
bool Eventually(F done) {
  const auto until = std::chrono::steady_clock::now() + 10s;
  while (!done()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(5ms);
  }
  return true;
}

TEST(ElasticPool, BlockedTasksNeverHoldUpANewOne) {
  ElasticPool pool;
  std::mutex mu;
  std::condition_variable cv;
  bool release = false;
  std::atomic<int> blocked{0};
  for (int i = 0; i < 12; ++i) {
    pool.Run([&] {
      ++blocked;
      std::unique_lock lock(mu);
      cv.wait(lock, [&] { return release; });
    });
  }
  ASSERT_TRUE(Eventually([&] { return blocked.load() == 12; })) << "all twelve run side by side";
  std::atomic<bool> ran{false};
  pool.Run([&] { ran = true; });
  EXPECT_TRUE(Eventually([&] { return ran.load(); })) << "a 13th task waited for a blocked one";
  EXPECT_EQ(pool.threads(), 13u);
  {
    std::lock_guard lock(mu);
    release = true;
  }
  cv.notify_all();
}

TEST(ElasticPool, ASteadyStreamReusesItsThreads) {
  ElasticPool pool;
  std::mutex mu;
  std::set<std::thread::id> seen;
  for (int i = 0; i < 200; ++i) {
    std::atomic<bool> done{false};
    pool.Run([&] {
      {
        std::lock_guard lock(mu);
        seen.insert(std::this_thread::get_id());
      }
      done = true;
    });
    ASSERT_TRUE(Eventually([&] { return done.load(); }));
  }
  // One call at a time: a new thread starts only when every existing one is still busy, which
  // only the last task's worker (and, preempted, the one before it) can be. Never one per call.
  EXPECT_LE(seen.size(), 4u);
}

TEST(ElasticPool, IdleThreadsEndAfterTheTimeout) {
  ElasticPool pool(50ms);
  std::atomic<int> ran{0};
  for (int i = 0; i < 4; ++i) pool.Run([&] { ++ran; });
  ASSERT_TRUE(Eventually([&] { return ran.load() == 4; }));
  EXPECT_TRUE(Eventually([&] { return pool.threads() == 0; }));
  pool.Run([&] { ++ran; });  // and a new one starts when needed
  EXPECT_TRUE(Eventually([&] { return ran.load() == 5; }));
}

TEST(ElasticPool, DestructionRunsWhatWasHandedInAndSurvivesThrowingTasks) {
  std::atomic<int> ran{0};
  {
    ElasticPool pool;
    pool.Run([] { throw std::runtime_error("boom"); });
    for (int i = 0; i < 50; ++i) {
      pool.Run([&ran, &pool] {
        std::this_thread::sleep_for(1ms);
        if (++ran == 10) pool.Run([&ran] { ++ran; });  // from inside a task
      });
    }
  }
  EXPECT_EQ(ran.load(), 51);
}

}  // namespace
}  // namespace talaria
