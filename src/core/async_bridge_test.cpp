// Async bridge: async tools run on the shared executor and the dispatcher waits for them with
// the call's deadline — from the main thread, from pool threads, from inside the executor, and
// nested deeper than the executor has workers. Every test uses its own Registry.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <nlohmann/json.hpp>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "core/test_tools.h"
#include "support/wait_until.h"
#include "talaria/base/executor.h"
#include "talaria/core/async_tool.h"
#include "talaria/core/dispatcher.h"

namespace talaria {
namespace {

using namespace std::chrono_literals;
using SteadyClock = std::chrono::steady_clock;
using test_support::WaitUntil;

SteadyClock::time_point In(std::chrono::milliseconds d) { return SteadyClock::now() + d; }

std::string ErrorOf(const ToolResult& r) {
  auto body = ParseJson(r.text);
  if (!body || !body->is_object() || !body->contains("error") || !(*body)["error"].is_string()) {
    ADD_FAILURE() << "no \"error\" string in " << r.text;
    return {};
  }
  return (*body)["error"].get<std::string>();
}

// Never finishes on its own: polls only the call's stop token (a tool that also watched
// ctx.deadline would race the dispatcher's timeout with a result of its own). Gives up after
// 1.5 s so a broken stop path fails the test instead of hanging it.
ToolResult SpinUntilStopped(ToolContext& ctx) {
  const auto limit = In(1500ms);
  while (!ctx.cancelled() && SteadyClock::now() < limit) {
    std::this_thread::sleep_for(1ms);
  }
  return ToolResult::Text(ctx.cancelled() ? "stopped" : "gave up");
}

struct Harness {
  Registry registry;
  Dispatcher dispatcher;
  std::atomic<int> runs{0};
  std::atomic<int> spinning{0};  // "spin" handlers that have started

  explicit Harness(DispatcherOptions options = {}) : dispatcher(registry, std::move(options)) {}

  void AddAsync(const std::string& name, std::string_view params, AsyncHandler handler) {
    ToolSpec spec;
    spec.name = name;
    spec.async_handler = std::move(handler);
    ASSERT_TRUE(RegisterTestTool(registry, std::move(spec), params).ok()) << name;
  }

  // "echo": answers "echo <args>" from an executor worker, after a short nap.
  void AddEcho() {
    AddAsync(
        "echo", R"({"type":"object","properties":{"n":{"type":"integer"}}})",
        MakeAsyncHandler([this](const Json& args, ToolContext&) {
          ++runs;
          std::this_thread::sleep_for(2ms);
          const bool on_pool = Executor::Shared().IsWorkerThread();
          return ToolResult::Text(std::string(on_pool ? "pool " : "off-pool ") + DumpJson(args));
        }));
  }

  // "nest" {"depth": d}: dispatches nest {"depth": d-1} through the same dispatcher from inside
  // its executor task, wrapping the answer in brackets; depth 0 answers "leaf".
  void AddNest() {
    AddAsync("nest",
             R"({"type":"object","properties":{"depth":{"type":"integer"}},"required":["depth"]})",
             MakeAsyncHandler([this](const Json& args, ToolContext& ctx) {
               ++runs;
               const int depth = args["depth"].get<int>();
               if (depth == 0) return ToolResult::Text("leaf");
               ToolResult inner = dispatcher.Dispatch(
                   "nest", R"({"depth":)" + std::to_string(depth - 1) + "}", ctx);
               if (!inner.ok()) return inner;
               return ToolResult::Text("[" + inner.text + "]");
             }));
  }

  // "spin": never finishes on its own; ends only when its stop token fires.
  void AddSpin() {
    AddAsync("spin", R"({"type":"object"})",
             MakeAsyncHandler([this](const Json&, ToolContext& ctx) {
               ++runs;
               ++spinning;
               return SpinUntilStopped(ctx);
             }));
  }
};

std::string Nested(int depth) {
  std::string s = "leaf";
  for (int i = 0; i < depth; ++i) s = "[" + s + "]";
  return s;
}

TEST(AsyncBridge, RunsAnAsyncToolOnTheSharedExecutorFromTheMainThread) {
  Harness h;
  h.AddEcho();
  ToolContext ctx;
  ToolResult r = h.dispatcher.Dispatch("echo", R"({"n": "3"})", ctx);
  EXPECT_EQ(r.status, CallStatus::kOk) << r.text;
  EXPECT_EQ(r.text, R"(pool {"n":3})");
}

TEST(AsyncBridge, RunsAsyncToolsFromSeveralPoolThreadsAtOnce) {
  Harness h;
  h.AddEcho();
  constexpr int kThreads = 8;
  constexpr int kCallsEach = 10;
  std::atomic<int> good{0};
  {
    std::vector<std::jthread> pool;
    for (int t = 0; t < kThreads; ++t) {
      pool.emplace_back([&h, &good, t] {
        for (int i = 0; i < kCallsEach; ++i) {
          ToolContext ctx;
          ctx.deadline = In(5000ms);
          const int n = t * 100 + i;
          ToolResult r = h.dispatcher.Dispatch("echo", R"({"n":)" + std::to_string(n) + "}", ctx);
          if (r.ok() && r.text == "pool {\"n\":" + std::to_string(n) + "}") ++good;
        }
      });
    }
  }
  EXPECT_EQ(good, kThreads * kCallsEach);
  EXPECT_EQ(h.runs, kThreads * kCallsEach);
}

// Every worker of the shared executor dispatches an async tool whose task is queued on that same
// executor: with no worker free, only help-while-waiting lets them finish.
TEST(AsyncBridge, RunsAsyncToolsFromInsideEveryExecutorWorker) {
  Harness h;
  h.AddEcho();
  Executor& executor = Executor::Shared();
  const size_t workers = executor.worker_count();
  std::atomic<size_t> inside{0};
  std::vector<std::future<ToolResult>> calls;
  for (size_t i = 0; i < workers * 2; ++i) {
    calls.push_back(executor.Submit([&h, &inside, workers, i] {
      ++inside;
      const auto limit = In(1000ms);
      while (inside < workers && SteadyClock::now() < limit) std::this_thread::sleep_for(1ms);
      ToolContext ctx;
      ctx.deadline = In(3000ms);
      return h.dispatcher.Dispatch("echo", R"({"n":)" + std::to_string(i) + "}", ctx);
    }));
  }
  for (size_t i = 0; i < calls.size(); ++i) {
    ASSERT_EQ(Executor::WaitFor(calls[i], In(4000ms)), WaitResult::kReady) << "deadlocked";
    ToolResult r = calls[i].get();
    EXPECT_EQ(r.status, CallStatus::kOk) << r.text;
    EXPECT_EQ(r.text, R"(pool {"n":)" + std::to_string(i) + "}");
  }
}

TEST(AsyncBridge, AnAsyncToolDispatchingAsyncToolsNestedDeeperThanTheWorkerCountFinishes) {
  Harness h;
  h.AddNest();
  const int depth = static_cast<int>(Executor::Shared().worker_count()) * 3 + 2;
  ToolContext ctx;
  ctx.deadline = In(5000ms);  // a deadlock ends here, as a timeout
  ToolResult r = h.dispatcher.Dispatch("nest", R"({"depth":)" + std::to_string(depth) + "}", ctx);
  EXPECT_EQ(r.status, CallStatus::kOk) << r.text;
  EXPECT_EQ(r.text, Nested(depth));
  EXPECT_EQ(h.runs, depth + 1);
}

TEST(AsyncBridge, ManyNestedChainsAtOnceFromPoolThreadsAllFinish) {
  Harness h;
  h.AddNest();
  const int chains = static_cast<int>(Executor::Shared().worker_count()) + 2;
  const int depth = static_cast<int>(Executor::Shared().worker_count()) * 2 + 1;
  std::atomic<int> good{0};
  {
    std::vector<std::jthread> pool;
    for (int c = 0; c < chains; ++c) {
      pool.emplace_back([&] {
        ToolContext ctx;
        ctx.deadline = In(5000ms);
        ToolResult r =
            h.dispatcher.Dispatch("nest", R"({"depth":)" + std::to_string(depth) + "}", ctx);
        if (r.ok() && r.text == Nested(depth)) ++good;
      });
    }
  }
  EXPECT_EQ(good, chains);
  EXPECT_EQ(h.runs, chains * (depth + 1));
}

TEST(AsyncBridge, ADeadlineOnANeverFinishingAsyncToolGivesTheTimedOutResult) {
  Harness h;
  h.AddSpin();
  ToolContext ctx;
  const auto began = SteadyClock::now();
  ctx.deadline = began + 200ms;
  ToolResult r = h.dispatcher.Dispatch("spin", "{}", ctx);
  const auto took = SteadyClock::now() - began;
  EXPECT_EQ(r.status, CallStatus::kTimedOut) << r.text;
  EXPECT_EQ(ErrorOf(r), "Error executing tool 'spin': timed out after 0.2s");
  EXPECT_GE(took, 195ms);
}

TEST(AsyncBridge, TheDefaultAsyncTimeoutAppliesWhenTheCallHasNoDeadline) {
  DispatcherOptions options;
  options.async_timeout = 200ms;
  Harness h(options);
  h.AddSpin();
  ToolContext ctx;  // no deadline
  ToolResult r = h.dispatcher.Dispatch("spin", "{}", ctx);
  EXPECT_EQ(r.status, CallStatus::kTimedOut) << r.text;
  EXPECT_EQ(ErrorOf(r), "Error executing tool 'spin': timed out after 0.2s");
}

TEST(AsyncBridge, ADeadlineIsHonouredWhenTheCallerIsAnExecutorWorker) {
  Harness h;
  h.AddSpin();
  auto call = Executor::Shared().Submit([&h] {
    ToolContext ctx;
    ctx.deadline = In(200ms);
    return h.dispatcher.Dispatch("spin", "{}", ctx);
  });
  ASSERT_EQ(Executor::WaitFor(call, In(10s)), WaitResult::kReady);
  ToolResult r = call.get();
  // Spin gives up on its own after 1.5 s with a result of its own: a dispatcher that waited for
  // it instead of timing it out would return that.
  EXPECT_EQ(r.status, CallStatus::kTimedOut) << r.text;
}

// A handler that ignores its stop token entirely still ends the call at the deadline; the
// dispatcher waits only its short grace for the handler to wind down. Its late answer is not
// the call's result.
TEST(AsyncBridge, AHandlerIgnoringItsTokenStillTimesOut) {
  Harness h;
  auto promise = std::make_shared<std::promise<ToolResult>>();
  std::jthread late_setter;
  h.AddAsync("deaf", R"({"type":"object"})", [&](Json, ToolContext&) {
    std::future<ToolResult> f = promise->get_future();
    late_setter = std::jthread([promise] {
      std::this_thread::sleep_for(500ms);  // past the deadline, within the grace
      promise->set_value(ToolResult::Text("too late"));
    });
    return f;
  });
  ToolContext ctx;
  ctx.deadline = In(150ms);
  ToolResult r = h.dispatcher.Dispatch("deaf", "{}", ctx);
  EXPECT_EQ(r.status, CallStatus::kTimedOut) << r.text;
  EXPECT_EQ(r.text.find("too late"), std::string::npos) << r.text;
}

TEST(AsyncBridge, CancelGivesTheCancelledResult) {
  Harness h;
  h.AddSpin();
  std::stop_source cancel;
  ToolContext ctx;
  ctx.cancel = cancel.get_token();
  // Cancels once the handler runs; spin would give up after 1.5 s with a result of its own.
  std::jthread canceller([&cancel, &h] {
    WaitUntil([&] { return h.spinning > 0; }, 10s);
    cancel.request_stop();
  });
  ToolResult r = h.dispatcher.Dispatch("spin", "{}", ctx);
  EXPECT_EQ(r.status, CallStatus::kCancelled) << r.text;
  EXPECT_NE(ErrorOf(r).find("cancelled"), std::string::npos) << r.text;
}

TEST(AsyncBridge, CancelReachesACallMadeFromInsideTheExecutor) {
  Harness h;
  h.AddSpin();
  std::stop_source cancel;
  auto call = Executor::Shared().Submit([&h, token = cancel.get_token()] {
    ToolContext ctx;
    ctx.cancel = token;
    ctx.deadline = In(3000ms);
    return h.dispatcher.Dispatch("spin", "{}", ctx);
  });
  ASSERT_TRUE(WaitUntil([&] { return h.spinning > 0; }, 10s)) << "spin never started";
  cancel.request_stop();
  ASSERT_EQ(Executor::WaitFor(call, In(10s)), WaitResult::kReady);
  ToolResult r = call.get();
  EXPECT_EQ(r.status, CallStatus::kCancelled) << r.text;
}

TEST(AsyncBridge, AnExceptionInsideAnExecutorTaskIsAToolFailure) {
  Harness h;
  h.AddAsync("throws", R"({"type":"object"})",
             MakeAsyncHandler([](const Json&, ToolContext&) -> ToolResult {
               throw std::runtime_error("disk on fire");
             }));
  ToolContext ctx;
  ToolResult r = h.dispatcher.Dispatch("throws", "{}", ctx);
  EXPECT_EQ(r.status, CallStatus::kError) << r.text;
  EXPECT_NE(ErrorOf(r).find("disk on fire"), std::string::npos) << r.text;
}

TEST(AsyncBridge, RunAsyncPostsToTheSharedExecutor) {
  auto f = RunAsync([] {
    return ToolResult::Text(Executor::Shared().IsWorkerThread() ? "on the pool" : "elsewhere");
  });
  ASSERT_EQ(Executor::WaitFor(f, In(2000ms)), WaitResult::kReady);
  EXPECT_EQ(f.get().text, "on the pool");
}

}  // namespace
}  // namespace talaria
