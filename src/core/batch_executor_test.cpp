// Batch executor: call order, real concurrency and the worker bound, the start-order gate,
// deadlines, cancellation that kills real child processes, the one-post-hook rule and the turn
// budget. Every test uses its own Registry and Dispatcher.
#include "talaria/core/batch_executor.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>

#include <map>
#include <thread>

#include <nlohmann/json.hpp>

#include "core/test_tools.h"
#include "talaria/base/spawn.h"
#include "talaria/core/async_tool.h"

namespace talaria {
namespace {

using namespace std::chrono_literals;

class BatchTest : public ::testing::Test {
 protected:
  Registry registry;
  Dispatcher dispatcher{registry};

  void Add(const std::string& name, ParallelClass parallel, SyncHandler handler) {
    ToolSpec spec;
    spec.name = name;
    spec.handler = std::move(handler);
    spec.parallel = parallel;
    ASSERT_TRUE(
        RegisterTestTool(
            registry, std::move(spec),
            R"({"type":"object","properties":{"ms":{"type":"integer"},"n":{"type":"integer"}}})")
            .ok())
        << name;
  }

  static std::vector<BatchCall> Calls(const std::string& name, int count,
                                      const std::string& args = "{}") {
    std::vector<BatchCall> calls;
    for (int i = 0; i < count; ++i) calls.push_back({name, args, "id_" + std::to_string(i)});
    return calls;
  }
};

// Waits on the call's cancel token until `limit`; what a cooperative slow handler does.
bool SleepUnlessStopped(const ToolContext& ctx, std::chrono::milliseconds limit) {
  std::mutex mu;
  std::condition_variable_any cv;
  std::unique_lock lock(mu);
  std::stop_token token = ctx.cancel;
  return !cv.wait_for(lock, token, limit, [] { return false; }) && !token.stop_requested();
}

TEST_F(BatchTest, ResultsComeBackInCallOrder) {
  Add("echo_n", ParallelClass::kSafe, [](const Json& args, ToolContext&) {
    const int n = args.value("n", 0);
    std::this_thread::sleep_for(
        std::chrono::milliseconds((8 - n) * 3));  // later calls finish first
    return ToolResult::Text("n=" + std::to_string(n));
  });
  std::vector<BatchCall> calls;
  for (int i = 0; i < 8; ++i)
    calls.push_back({"echo_n", R"({"n": ")" + std::to_string(i) + R"("})", ""});
  Batch batch(dispatcher, calls);
  auto results = batch.Run(ToolContext{});
  ASSERT_EQ(results.size(), 8u);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(results[i].text, "n=" + std::to_string(i));
}

TEST_F(BatchTest, SafeCallsRunConcurrentlyUpToTheWorkerBound) {
  std::mutex mu;
  std::condition_variable cv;
  int running = 0, peak = 0;
  Add("meet", ParallelClass::kSafe, [&](const Json&, ToolContext&) {
    std::unique_lock lock(mu);
    peak = std::max(peak, ++running);
    cv.notify_all();
    // Waits (bounded) until three calls run at once: only possible when they really overlap.
    cv.wait_for(lock, 5s, [&] { return peak >= 3; });
    --running;
    return ToolResult::Text("ok");
  });
  Batch batch(dispatcher, Calls("meet", 9),
              {.max_workers = 3, .batch_timeout = 60s, .call_timeout = {}, .on_event = {}});
  auto results = batch.Run(ToolContext{});
  for (const auto& r : results) EXPECT_TRUE(r.ok()) << r.text;
  EXPECT_EQ(peak, 3) << "three workers overlap, never more";
}

TEST_F(BatchTest, BatchesInsideBatchCallsFinishEvenWithThePoolSaturated) {
  std::atomic<int> inner_runs{0};
  Add("inner", ParallelClass::kSafe, [&](const Json&, ToolContext&) {
    std::this_thread::sleep_for(2ms);
    ++inner_runs;
    return ToolResult::Text("inner");
  });
  Add("outer", ParallelClass::kSafe, [&](const Json&, ToolContext& ctx) {
    Batch nested(dispatcher, Calls("inner", 8),
                 {.max_workers = 8, .batch_timeout = 60s, .call_timeout = {}, .on_event = {}});
    auto results = nested.Run(ctx);
    for (const auto& r : results) {
      if (r.text != "inner") return ToolResult::Error("nested call failed: " + r.text);
    }
    return ToolResult::Text("outer");
  });
  // More outer calls than the pool has threads: every pool thread ends up running a nested batch.
  Batch batch(
      dispatcher, Calls("outer", 2 * static_cast<int>(kMaxBatchWorkers)),
      {.max_workers = kMaxBatchWorkers, .batch_timeout = 60s, .call_timeout = {}, .on_event = {}});
  auto results = batch.Run(ToolContext{});
  for (const auto& r : results) EXPECT_EQ(r.text, "outer");
  EXPECT_EQ(inner_runs.load(), 2 * static_cast<int>(kMaxBatchWorkers) * 8);
}

TEST_F(BatchTest, CallsStartInCallOrder) {
  Add("quick", ParallelClass::kSafe,
      [](const Json&, ToolContext&) { return ToolResult::Text("ok"); });
  std::mutex mu;
  std::vector<size_t> started;
  BatchOptions options;
  options.on_event = [&](const BatchEvent& e) {
    if (e.kind != BatchEvent::Kind::kStarted) return;
    std::lock_guard lock(mu);
    started.push_back(e.index);
  };
  for (int round = 0; round < 20; ++round) {
    started.clear();
    Batch batch(dispatcher, Calls("quick", 8), options);
    batch.Run(ToolContext{});
    ASSERT_EQ(started, (std::vector<size_t>{0, 1, 2, 3, 4, 5, 6, 7})) << "round " << round;
  }
}

TEST_F(BatchTest, BarriersKeepTheirPlaceInTheOrder) {
  std::mutex mu;
  std::vector<std::string> log;
  auto logger = [&](std::string tag) {
    return [&, tag](const Json&, ToolContext&) {
      std::lock_guard lock(mu);
      log.push_back(tag);
      return ToolResult::Text(tag);
    };
  };
  Add("reader", ParallelClass::kSafe, logger("r"));
  Add("barrier", ParallelClass::kNever, logger("B"));
  std::vector<BatchCall> calls = {{"reader", "{}", ""},
                                  {"reader", "{}", ""},
                                  {"barrier", "{}", ""},
                                  {"reader", "{}", ""},
                                  {"reader", "{}", ""}};
  Batch batch(dispatcher, calls);
  auto results = batch.Run(ToolContext{});
  ASSERT_EQ(log.size(), 5u);
  EXPECT_EQ(log[2], "B")
      << "the two readers before it finished first, the two after it started later";
  EXPECT_EQ(results[2].text, "B");
}

TEST_F(BatchTest, ACallPastItsDeadlineIsStoppedAndTimesOut) {
  Add("slow", ParallelClass::kSafe, [](const Json&, ToolContext& ctx) {
    SleepUnlessStopped(ctx, 30s);  // ignores the deadline, honours the token
    return ToolResult::Text("woke");
  });
  Add("fast", ParallelClass::kSafe,
      [](const Json&, ToolContext&) { return ToolResult::Text("fast"); });
  std::vector<BatchCall> calls = {{"slow", "{}", ""}, {"fast", "{}", ""}};
  Batch batch(dispatcher, calls,
              {.max_workers = 8, .batch_timeout = 60s, .call_timeout = 200ms, .on_event = {}});
  auto results = batch.Run(ToolContext{});
  // Not stopped, "slow" would sleep its 30 s and answer "woke".
  EXPECT_EQ(results[0].status, CallStatus::kTimedOut) << results[0].text;
  EXPECT_NE(results[0].text.find("timed out"), std::string::npos) << results[0].text;
  EXPECT_EQ(results[1].text, "fast");
}

TEST_F(BatchTest, AnAsyncCallPastItsDeadlineTimesOutToo) {
  ToolSpec spec;
  spec.name = "slow_async";
  spec.parallel = ParallelClass::kSafe;
  spec.async_handler = MakeAsyncHandler([](const Json&, ToolContext& ctx) {
    SleepUnlessStopped(ctx, 30s);
    return ToolResult::Text("woke");
  });
  ASSERT_TRUE(RegisterTestTool(registry, std::move(spec), R"({"type":"object"})").ok());
  for (int round = 0; round < 5; ++round) {
    Batch batch(dispatcher, Calls("slow_async", 2),
                {.max_workers = 8, .batch_timeout = 60s, .call_timeout = 100ms, .on_event = {}});
    auto results = batch.Run(ToolContext{});
    for (const auto& r : results)
      EXPECT_EQ(r.status, CallStatus::kTimedOut) << "round " << round << ": " << r.text;
  }
}

// A tool that runs `sleep 30` in its own process group and kills the group when cancelled —
// how a shell tool behaves, without the shell session.
ToolResult RunSleeper(ToolContext& ctx, std::mutex& mu, std::vector<pid_t>& pids) {
  SpawnOptions spawn;
  spawn.argv = {"/bin/sleep", "30"};
  auto child = StartProcess(spawn, {});
  if (!child) return ToolResult::Error(child.error().message());
  {
    std::lock_guard lock(mu);
    pids.push_back(child->pid);
  }
  std::stop_callback kill(ctx.cancel, [pid = child->pid] { ::kill(-pid, SIGKILL); });
  pollfd p{child->pidfd.get(), POLLIN, 0};
  ::poll(&p, 1, 60'000);
  siginfo_t info{};
  ::waitid(P_PID, static_cast<id_t>(child->pid), &info, WEXITED);
  return ToolResult::Text("exited");
}

TEST_F(BatchTest, CancellingABatchKillsEveryChildAndEndsEveryCall) {
  std::mutex mu;
  std::vector<pid_t> pids;
  Add("sleeper", ParallelClass::kSafe,
      [&](const Json&, ToolContext& ctx) { return RunSleeper(ctx, mu, pids); });
  Batch batch(dispatcher, Calls("sleeper", 8));
  std::jthread canceller([&] {
    for (int i = 0; i < 500; ++i) {
      {
        std::lock_guard lock(mu);
        if (pids.size() == 8) break;
      }
      std::this_thread::sleep_for(10ms);
    }
    batch.Cancel();
  });
  auto results = batch.Run(ToolContext{});
  canceller.join();
  ASSERT_EQ(pids.size(), 8u);
  for (const auto& r : results) EXPECT_EQ(r.status, CallStatus::kCancelled) << r.text;
  for (pid_t pid : pids) EXPECT_NE(::kill(pid, 0), 0) << "child " << pid << " survived";
}

TEST_F(BatchTest, CancellingOneCallLeavesTheOthersRunning) {
  Add("nap", ParallelClass::kSafe, [](const Json&, ToolContext& ctx) {
    return SleepUnlessStopped(ctx, 300ms) ? ToolResult::Text("rested")
                                          : ToolResult::Text("stopped");
  });
  Batch batch(dispatcher, Calls("nap", 3));
  batch.CancelCall(1);
  batch.CancelCall(99);  // out of range: ignored
  auto results = batch.Run(ToolContext{});
  EXPECT_EQ(results[0].text, "rested");
  EXPECT_EQ(results[1].status, CallStatus::kCancelled);
  EXPECT_EQ(results[2].text, "rested");
}

TEST_F(BatchTest, EveryCallGetsExactlyOnePostHookEvenWhenItNeverStarted) {
  std::atomic<int> ran{0};
  Add("work", ParallelClass::kNever, [&](const Json&, ToolContext&) {
    ++ran;
    return ToolResult::Text("ran");
  });
  std::mutex mu;
  std::map<std::string, std::vector<CallStatus>> posts;
  dispatcher.hooks().AddPostHook([&](const PostToolEvent& e) {
    std::lock_guard lock(mu);
    posts[e.ctx.call_id].push_back(e.result.status);
  });
  std::stop_source stop;
  stop.request_stop();
  ToolContext base;
  base.cancel = stop.get_token();
  Batch batch(dispatcher, Calls("work", 4));
  auto results = batch.Run(base);
  EXPECT_EQ(ran.load(), 0);
  ASSERT_EQ(posts.size(), 4u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(results[i].status, CallStatus::kCancelled);
    EXPECT_NE(results[i].text.find("cancelled before work started"), std::string::npos)
        << results[i].text;
    EXPECT_EQ(posts["id_" + std::to_string(i)], std::vector<CallStatus>{CallStatus::kCancelled});
  }
}

TEST_F(BatchTest, CancellingMidwayEndsRunningCallsAndSkipsTheRest) {
  std::atomic<int> ran{0};
  Batch* current = nullptr;
  Add("step", ParallelClass::kNever, [&](const Json&, ToolContext& ctx) {
    if (++ran == 2) current->Cancel();
    return ctx.cancelled() ? ToolResult::Text("interrupted") : ToolResult::Text("done");
  });
  std::atomic<int> posts{0};
  dispatcher.hooks().AddPostHook([&](const PostToolEvent&) { ++posts; });
  Batch batch(dispatcher, Calls("step", 5));
  current = &batch;
  auto results = batch.Run(ToolContext{});
  EXPECT_EQ(ran.load(), 2);
  EXPECT_EQ(posts.load(), 5);
  EXPECT_TRUE(results[0].ok());
  for (int i = 1; i < 5; ++i) EXPECT_EQ(results[i].status, CallStatus::kCancelled) << i;
}

TEST_F(BatchTest, TheTurnBudgetIsAppliedToTheWholeBatch) {
  Add("big", ParallelClass::kSafe,
      [](const Json&, ToolContext&) { return ToolResult::Text(std::string(30'000, 'x')); });
  DispatcherOptions options;
  options.budget.turn_budget_chars = 50'000;
  Dispatcher budgeted(registry, options);
  Batch batch(budgeted, Calls("big", 3));
  auto results = batch.Run(ToolContext{});
  size_t total = 0;
  for (const auto& r : results) total += r.text.size();
  EXPECT_LE(total, 50'000u) << "the largest results were spilled to fit the turn budget";
}

TEST_F(BatchTest, UnknownToolsAndBadArgumentsStillGetOneResultEach) {
  Add("quick", ParallelClass::kSafe,
      [](const Json&, ToolContext&) { return ToolResult::Text("ok"); });
  std::vector<BatchCall> calls = {
      {"quick", "{}", ""}, {"nope", "{}", ""}, {"quick", "{not json", ""}, {"quick", "", ""}};
  Batch batch(dispatcher, calls);
  auto results = batch.Run(ToolContext{});
  ASSERT_EQ(results.size(), 4u);
  EXPECT_TRUE(results[0].ok());
  EXPECT_EQ(results[1].error_type, "unknown_tool");
  EXPECT_EQ(results[2].error_type, "invalid_arguments");
  EXPECT_TRUE(results[3].ok());
}

}  // namespace
}  // namespace talaria
