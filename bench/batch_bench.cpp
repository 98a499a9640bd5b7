// talaria_batch_bench: the batch executor (issue 5).
//
// W7 of WORKLOADS.md: tools sleep_0 … sleep_7 (toolset bench_sleep) sleep `ms` milliseconds;
// one batch is the 8 calls with {"ms": "50"} (a string: coercion runs). The original creates a
// pool of 8 threads per batch (inside its wall time); talaria's Batch runs the calling thread
// plus threads lent by its persistent batch pool — no thread is created per batch, which is the
// point. The warm-up batch starts that pool. 1 warm-up + 20 batches, median; sequential: the same
// 8 calls one after another, 5 runs, median.
//
// Cancel latency: 8 calls, each running `sleep 30` in its own process group and killing the
// group when its token fires (as the terminal tool does); the batch is cancelled once all 8 run,
// and the clock stops when Run has returned — every child has then been killed and reaped.
//
//   talaria_batch_bench [--quick]
//   METRIC W7_parallel_batch_wall_ms <median> ms
//   METRIC W7_sequential_wall_ms <median> ms
//   METRIC W7_parallel_overhead_ms <parallel - 50> ms
//   METRIC batch_8_instant_calls_ms <median> ms   (the same batch with ms=0: pool, gate, plan)
//   METRIC batch_cancel_children_gone_ms <median> ms
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench_util.h"
#include "talaria/base/spawn.h"
#include "talaria/core/batch_executor.h"
#include "talaria/core/dispatcher.h"
#include "talaria/core/registry.h"

namespace {

using SteadyClock = std::chrono::steady_clock;
using talaria::Batch;
using talaria::BatchCall;
using talaria::Json;
using talaria::ToolContext;
using talaria::ToolResult;

double MsSince(SteadyClock::time_point t0) {
  return std::chrono::duration<double, std::milli>(SteadyClock::now() - t0).count();
}

void RegisterTool(talaria::Registry& registry, const std::string& name,
                  talaria::SyncHandler handler) {
  const std::string schema =
      R"({"name": ")" + name +
      R"(", "description": "sleeps", "parameters": {"type": "object",)"
      R"( "properties": {"ms": {"type": "integer", "description": "milliseconds"}}, "required": ["ms"]}})";
  talaria::ToolSpec spec;
  spec.name = name;
  spec.toolset = "bench_sleep";
  spec.schema = std::string_view(schema);
  spec.handler = std::move(handler);
  spec.parallel = talaria::ParallelClass::kSafe;
  if (!registry.Register(std::move(spec)).ok()) {
    std::fprintf(stderr, "cannot register %s\n", name.c_str());
    std::exit(1);
  }
}

ToolResult Sleep(const Json& args, ToolContext&) {
  std::this_thread::sleep_for(std::chrono::milliseconds(args["ms"].get<int64_t>()));
  return ToolResult::Text(R"({"slept_ms": 50})");
}

std::vector<BatchCall> SleepCalls() {
  std::vector<BatchCall> calls;
  for (int k = 0; k < 8; ++k)
    calls.push_back({"sleep_" + std::to_string(k), R"({"ms": "50"})", ""});
  return calls;
}

void BenchW7(int batches) {
  talaria::Registry registry;
  for (int k = 0; k < 8; ++k) RegisterTool(registry, "sleep_" + std::to_string(k), Sleep);
  talaria::Dispatcher dispatcher(registry);
  const std::vector<BatchCall> calls = SleepCalls();

  std::vector<double> parallel;
  for (int i = 0; i <= batches; ++i) {
    const auto t0 = SteadyClock::now();
    Batch batch(dispatcher, calls);
    const std::vector<ToolResult> results = batch.Run(ToolContext{});
    const double ms = MsSince(t0);
    if (results.size() != 8 || !results[7].ok()) {
      std::fprintf(stderr, "W7: a call failed: %s\n",
                   results.empty() ? "" : results[7].text.c_str());
      std::exit(1);
    }
    if (i > 0) parallel.push_back(ms);  // the first is the warm-up
  }
  std::vector<double> sequential;
  for (int i = 0; i < 5; ++i) {
    const auto t0 = SteadyClock::now();
    for (const BatchCall& c : calls) {
      ToolContext ctx;
      (void)dispatcher.Dispatch(c.name, c.arguments, ctx);
    }
    sequential.push_back(MsSince(t0));
  }
  // The executor's own cost, without the sleeps' scheduling noise: the same batch of 0 ms calls.
  std::vector<BatchCall> instant = calls;
  for (BatchCall& c : instant) c.arguments = R"({"ms": "0"})";
  std::vector<double> empty;
  for (int i = 0; i <= batches; ++i) {
    const auto t0 = SteadyClock::now();
    Batch batch(dispatcher, instant);
    (void)batch.Run(ToolContext{});
    if (i > 0) empty.push_back(MsSince(t0));
  }
  const double wall = talaria_bench::Median(parallel);
  talaria_bench::PrintMetric("W7_parallel_batch_wall_ms", wall, "ms");
  talaria_bench::PrintMetric("W7_sequential_wall_ms", talaria_bench::Median(sequential), "ms");
  talaria_bench::PrintMetric("W7_parallel_overhead_ms", wall - 50, "ms");
  talaria_bench::PrintMetric("batch_8_instant_calls_ms", talaria_bench::Median(empty), "ms");
}

// Runs `sleep 30` in its own group; kills the group when the call's token fires.
ToolResult SpawnSleeper(ToolContext& ctx, std::atomic<int>& started) {
  talaria::SpawnOptions spawn;
  spawn.argv = {"/bin/sleep", "30"};
  auto child = talaria::StartProcess(spawn, {});
  if (!child) return ToolResult::Error(child.error().message());
  std::stop_callback kill(ctx.cancel, [pid = child->pid] { ::kill(-pid, SIGKILL); });
  ++started;
  pollfd p{child->pidfd.get(), POLLIN, 0};
  ::poll(&p, 1, 60'000);
  siginfo_t info{};
  ::waitid(P_PID, static_cast<id_t>(child->pid), &info, WEXITED);
  return ToolResult::Text("ended");
}

void BenchCancel(int rounds) {
  talaria::Registry registry;
  std::atomic<int> started{0};
  RegisterTool(registry, "sleeper",
               [&started](const Json&, ToolContext& ctx) { return SpawnSleeper(ctx, started); });
  talaria::Dispatcher dispatcher(registry);
  std::vector<BatchCall> calls(8, BatchCall{"sleeper", R"({"ms": 0})", ""});

  std::vector<double> samples;
  for (int r = 0; r < rounds; ++r) {
    started = 0;
    Batch batch(dispatcher, calls);
    SteadyClock::time_point cancelled_at;
    std::jthread canceller([&] {
      while (started.load() < 8) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      std::this_thread::sleep_for(
          std::chrono::milliseconds(20));  // let every child settle into sleep
      cancelled_at = SteadyClock::now();
      batch.Cancel();
    });
    const std::vector<ToolResult> results = batch.Run(ToolContext{});
    const auto returned = SteadyClock::now();
    canceller.join();
    for (const ToolResult& res : results) {
      if (res.status != talaria::CallStatus::kCancelled) {
        std::fprintf(stderr, "cancel: a call was not cancelled: %s\n", res.text.c_str());
        std::exit(1);
      }
    }
    samples.push_back(std::chrono::duration<double, std::milli>(returned - cancelled_at).count());
  }
  talaria_bench::PrintMetric("batch_cancel_children_gone_ms", talaria_bench::Median(samples), "ms");
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  BenchW7(quick ? 5 : 20);
  BenchCancel(quick ? 3 : 10);
  return 0;
}
