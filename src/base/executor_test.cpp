// Executor: the shared pool async work runs on, and WaitFor, which helps on the pool instead of
// blocking it. Tests use private executors (except where Shared() itself is the subject), and
// every wait in them is bounded.
#include "talaria/base/executor.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <numeric>
#include <set>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "support/wait_until.h"

namespace talaria {
namespace {

using namespace std::chrono_literals;
using SteadyClock = std::chrono::steady_clock;

SteadyClock::time_point In(std::chrono::milliseconds d) { return SteadyClock::now() + d; }

using test_support::ThreadIds;
using test_support::WaitUntil;

// The threads in `now` that are not in `before`.
size_t NewThreads(const std::set<std::string>& before, const std::set<std::string>& now) {
  size_t n = 0;
  for (const auto& id : now) n += before.contains(id) ? 0 : 1;
  return n;
}

TEST(Executor, RunsEverySubmittedTaskOnAWorkerAndReturnsItsResult) {
  Executor executor(3);
  std::vector<std::future<int>> futures;
  std::atomic<int> on_worker{0};
  for (int i = 0; i < 500; ++i) {
    futures.push_back(executor.Submit([i, &executor, &on_worker] {
      if (executor.IsWorkerThread()) ++on_worker;
      return i * i;
    }));
  }
  long long sum = 0;
  for (auto& f : futures) {
    ASSERT_EQ(Executor::WaitFor(f, In(2000ms)), WaitResult::kReady);
    sum += f.get();
  }
  long long expected = 0;
  for (int i = 0; i < 500; ++i) expected += static_cast<long long>(i) * i;
  EXPECT_EQ(sum, expected);
  EXPECT_EQ(on_worker, 500);
  EXPECT_FALSE(executor.IsWorkerThread());
}

TEST(Executor, StartsTasksInTheOrderTheyWerePosted) {
  Executor executor(1);
  std::mutex mu;
  std::vector<int> order;
  std::vector<std::future<void>> futures;
  for (int i = 0; i < 20; ++i) {
    futures.push_back(executor.Submit([i, &mu, &order] {
      std::lock_guard lock(mu);
      order.push_back(i);
    }));
  }
  for (auto& f : futures) ASSERT_EQ(Executor::WaitFor(f, In(2000ms)), WaitResult::kReady);
  std::vector<int> expected(20);
  std::iota(expected.begin(), expected.end(), 0);
  EXPECT_EQ(order, expected);
}

// Threads are told apart by id in /proc/self/task, so threads of earlier tests that are still
// leaving it change nothing; a joined thread can linger there a moment: hence WaitUntil.
TEST(Executor, StartsNoThreadBeforeTheFirstPostAndJoinsThemAll) {
  const std::set<std::string> before = ThreadIds();
  Executor executor(3);
  EXPECT_EQ(NewThreads(before, ThreadIds()), 0u) << "a thread started before the first post";
  auto f = executor.Submit([] { return 1; });
  ASSERT_EQ(Executor::WaitFor(f, In(2000ms)), WaitResult::kReady);
  EXPECT_TRUE(WaitUntil([&] { return NewThreads(before, ThreadIds()) == 3; }, 10s))
      << "new threads: " << NewThreads(before, ThreadIds());
  executor.Shutdown();
  EXPECT_TRUE(WaitUntil([&] { return NewThreads(before, ThreadIds()) == 0; }, 10s))
      << "Shutdown joins every worker; still there: " << NewThreads(before, ThreadIds());
}

TEST(Executor, CarriesASubmittedTasksExceptionToItsFuture) {
  Executor executor(2);
  auto f = executor.Submit([]() -> int { throw std::runtime_error("boom"); });
  ASSERT_EQ(Executor::WaitFor(f, In(2000ms)), WaitResult::kReady);
  EXPECT_THROW(f.get(), std::runtime_error);
}

TEST(Executor, KeepsAWorkerAliveWhenAPostedTaskThrows) {
  Executor executor(1);
  ASSERT_TRUE(executor.Post([] { throw std::runtime_error("bug in a task"); }));
  auto f = executor.Submit([] { return 7; });
  ASSERT_EQ(Executor::WaitFor(f, In(2000ms)), WaitResult::kReady);
  EXPECT_EQ(f.get(), 7);
}

TEST(Executor, AcceptsMoveOnlyTasks) {
  Executor executor(1);
  auto owned = std::make_unique<int>(41);
  auto f = executor.Submit([p = std::move(owned)] { return *p + 1; });
  ASSERT_EQ(Executor::WaitFor(f, In(2000ms)), WaitResult::kReady);
  EXPECT_EQ(f.get(), 42);
}

// The core promise: with every worker inside a task that waits for a nested task posted to the
// same executor (so no worker is free to take it), WaitFor runs the nested work itself.
TEST(Executor, HelpsWhileWaitingWhenEveryWorkerIsBlockedOnNestedFutures) {
  constexpr size_t kWorkers = 2;
  constexpr int kDepth = 12;  // well beyond the worker count
  Executor executor(kWorkers);
  std::atomic<size_t> outer_running{0};

  // Level `depth` posts level depth-1 and waits for it; the leaf answers 0.
  std::function<int(int)> level = [&](int depth) -> int {
    if (depth == 0) return 0;
    auto child = executor.Submit([&level, depth] { return level(depth - 1); });
    if (Executor::WaitFor(child, In(5000ms)) != WaitResult::kReady) return -1000;
    return child.get() + 1;
  };
  std::vector<std::future<int>> outers;
  for (size_t i = 0; i < kWorkers * 2; ++i) {
    outers.push_back(executor.Submit([&] {
      ++outer_running;
      // Every worker is inside an outer task before any of them posts nested work.
      WaitUntil([&] { return outer_running >= kWorkers; }, 10s);
      return level(kDepth);
    }));
  }
  for (auto& f : outers) {
    ASSERT_EQ(Executor::WaitFor(f, In(5000ms)), WaitResult::kReady) << "deadlocked";
    EXPECT_EQ(f.get(), kDepth) << "a nested wait timed out: nobody ran the nested task";
  }
}

// The worker waits without a deadline, so only seeing the completion can end its wait.
TEST(Executor, WaitForOnAWorkerSeesAFutureCompletedOffThePool) {
  Executor executor(1);
  std::promise<int> promise;
  std::future<int> value = promise.get_future();
  std::atomic<bool> waiting{false};
  auto waiter = executor.Submit([&value, &waiting] {
    waiting = true;
    return Executor::WaitFor(value, SteadyClock::time_point::max());
  });
  ASSERT_TRUE(WaitUntil([&] { return waiting.load(); }, 10s));
  promise.set_value(5);
  ASSERT_EQ(Executor::WaitFor(waiter, In(10s)), WaitResult::kReady)
      << "the worker never saw the future completed off the pool";
  EXPECT_EQ(waiter.get(), WaitResult::kReady);
  EXPECT_EQ(value.get(), 5);
}

TEST(Executor, WaitForHonoursTheDeadlineOnAndOffThePool) {
  Executor executor(2);
  std::promise<int> never;
  std::shared_future<int> future = never.get_future().share();

  auto began = SteadyClock::now();
  EXPECT_EQ(Executor::WaitFor(future, In(100ms)), WaitResult::kTimedOut);
  auto took = SteadyClock::now() - began;
  EXPECT_GE(took, 100ms);

  auto on_pool = executor.Submit([future] {
    const auto began = SteadyClock::now();
    const WaitResult r = Executor::WaitFor(future, In(100ms));
    return std::make_pair(r, SteadyClock::now() - began);
  });
  ASSERT_EQ(Executor::WaitFor(on_pool, In(10s)), WaitResult::kReady)
      << "a worker's wait outlived its deadline";
  auto [result, pool_took] = on_pool.get();
  EXPECT_EQ(result, WaitResult::kTimedOut);
  EXPECT_GE(pool_took, 100ms);

  EXPECT_EQ(Executor::WaitFor(future, In(-5ms)), WaitResult::kTimedOut) << "a past deadline";
}

// With one worker, the waiting task must run the awaited task itself; that task ends only when
// told to stop (or after 1.5 s), so the deadline reaches it through on_expiry, fired by the
// alarm thread: without the alarm, the inline work runs its 1.5 s and never sees the stop.
TEST(Executor, AHelpingWaitStopsTheWorkItRunsInlineAtTheDeadline) {
  Executor executor(1);
  auto outer = executor.Submit([&executor] {
    std::stop_source work_stop;
    auto inner = executor.Submit([token = work_stop.get_token()] {
      const auto limit = In(1500ms);
      while (!token.stop_requested() && SteadyClock::now() < limit)
        std::this_thread::sleep_for(1ms);
      return token.stop_requested();
    });
    const auto began = SteadyClock::now();
    const WaitResult r = Executor::WaitFor(inner, In(100ms), {}, work_stop);
    const auto took = SteadyClock::now() - began;
    const bool inner_saw_stop =
        inner.valid() && inner.wait_for(0s) == std::future_status::ready && inner.get();
    return std::make_tuple(r, took, inner_saw_stop);
  });
  ASSERT_EQ(Executor::WaitFor(outer, In(3000ms)), WaitResult::kReady);
  auto [result, took, inner_saw_stop] = outer.get();
  EXPECT_EQ(result, WaitResult::kTimedOut);
  EXPECT_TRUE(inner_saw_stop);
  EXPECT_GE(took, 100ms);
}

TEST(Executor, WaitForRequestsOnExpiryWhenItTimesOut) {
  std::promise<int> never;
  std::future<int> future = never.get_future();
  std::stop_source on_expiry;
  EXPECT_EQ(Executor::WaitFor(future, In(20ms), {}, on_expiry), WaitResult::kTimedOut);
  EXPECT_TRUE(on_expiry.stop_requested());
}

TEST(Executor, WaitForReturnsStoppedWhenTheStopTokenFires) {
  Executor executor(2);
  std::promise<int> never;
  std::shared_future<int> future = never.get_future().share();
  std::stop_source stop;
  std::atomic<bool> pool_waiting{false};
  // Stops once the pool's waiter is about to wait (both waits have no deadline: only the stop
  // can end them).
  std::jthread stopper([&stop, &pool_waiting] {
    WaitUntil([&] { return pool_waiting.load(); }, 10s);
    stop.request_stop();
  });
  auto on_pool = executor.Submit([future, &pool_waiting, token = stop.get_token()] {
    pool_waiting = true;
    return Executor::WaitFor(future, SteadyClock::time_point::max(), token);
  });
  EXPECT_EQ(Executor::WaitFor(future, SteadyClock::time_point::max(), stop.get_token()),
            WaitResult::kStopped);
  ASSERT_EQ(Executor::WaitFor(on_pool, In(10s)), WaitResult::kReady)
      << "the stop never reached the worker's wait";
  EXPECT_EQ(on_pool.get(), WaitResult::kStopped);
}

TEST(Executor, WaitForTreatsADeferredFutureAsReady) {
  std::future<int> deferred = std::async(std::launch::deferred, [] { return 3; });
  EXPECT_EQ(Executor::WaitFor(deferred, In(100ms)), WaitResult::kReady);
  EXPECT_EQ(deferred.get(), 3);
}

TEST(Executor, ShutdownWakesWaitingWorkersDropsQueuedTasksAndJoins) {
  auto executor = std::make_unique<Executor>(2);
  std::promise<int> never;
  std::shared_future<int> future = never.get_future().share();
  std::atomic<int> waiting{0};
  std::vector<std::future<WaitResult>> blocked;
  for (int i = 0; i < 2; ++i) {
    blocked.push_back(executor->Submit([future, &waiting] {
      ++waiting;
      return Executor::WaitFor(future, SteadyClock::time_point::max());  // no deadline at all
    }));
  }
  ASSERT_TRUE(WaitUntil([&] { return waiting == 2; }, 10s));
  std::atomic<int> ran_after{0};
  std::vector<std::future<void>> queued;
  for (int i = 0; i < 3; ++i) queued.push_back(executor->Submit([&ran_after] { ++ran_after; }));
  // The waiting workers help with the queued tasks; give them the chance, then shut down.
  ASSERT_TRUE(WaitUntil([&] { return ran_after == 3; }, 10s));
  for (int i = 0; i < 3; ++i) {
    queued.push_back(executor->Submit([] { std::this_thread::sleep_for(1ms); }));
  }

  executor->Shutdown();  // returns only once the waiters were woken and the workers joined
  for (auto& f : blocked) {
    ASSERT_EQ(Executor::WaitFor(f, In(100ms)), WaitResult::kReady);
    EXPECT_EQ(f.get(), WaitResult::kStopped);
  }
  for (auto& f : queued) {
    ASSERT_EQ(Executor::WaitFor(f, In(100ms)), WaitResult::kReady);
    try {
      f.get();  // ran before the shutdown, or was dropped with a broken promise
    } catch (const std::future_error& e) {
      EXPECT_EQ(e.code(), std::future_errc::broken_promise);
    }
  }
  EXPECT_FALSE(executor->Post([] {})) << "no task is accepted after Shutdown";
  auto refused = executor->Submit([] { return 1; });
  EXPECT_THROW(refused.get(), std::future_error);
  executor->Shutdown();  // idempotent
  executor.reset();
}

TEST(Executor, ShutdownDropsTasksThatNeverStarted) {
  Executor executor(1);
  std::atomic<bool> started{false};
  auto busy = executor.Submit([&started] {
    started = true;
    std::this_thread::sleep_for(100ms);  // a plain sleep: this worker does not help
    return 1;
  });
  ASSERT_TRUE(WaitUntil([&] { return started.load(); }, 10s));
  std::atomic<int> ran{0};
  std::vector<std::future<void>> queued;
  for (int i = 0; i < 3; ++i) queued.push_back(executor.Submit([&ran] { ++ran; }));
  executor.Shutdown();
  EXPECT_EQ(busy.get(), 1) << "the running task finished before its worker was joined";
  EXPECT_EQ(ran, 0);
  for (auto& f : queued) {
    try {
      f.get();
      ADD_FAILURE() << "a dropped task's future must not hold a value";
    } catch (const std::future_error& e) {
      EXPECT_EQ(e.code(), std::future_errc::broken_promise);
    }
  }
}

TEST(Executor, DestructorJoinsWorkersBusyWithTasks) {
  std::atomic<int> started{0};
  std::atomic<int> finished{0};
  {
    Executor executor(2);
    for (int i = 0; i < 2; ++i) {
      ASSERT_TRUE(executor.Post([&started, &finished] {
        ++started;
        std::this_thread::sleep_for(50ms);
        ++finished;
      }));
    }
    ASSERT_TRUE(WaitUntil([&] { return started == 2; }, 10s));
  }
  EXPECT_EQ(finished, 2) << "a running task completes before its worker is joined";
}

TEST(Executor, SharedIsOneProcessWideInstance) {
  Executor& shared = Executor::Shared();
  EXPECT_EQ(&shared, &Executor::Shared());
  EXPECT_EQ(shared.worker_count(), Executor::DefaultWorkerCount());
  EXPECT_GE(shared.worker_count(), 2u);
  auto f = shared.Submit([] { return Executor::Shared().IsWorkerThread(); });
  ASSERT_EQ(Executor::WaitFor(f, In(2000ms)), WaitResult::kReady);
  EXPECT_TRUE(f.get());
}

}  // namespace
}  // namespace talaria
