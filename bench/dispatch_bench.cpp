// W0 (harness baseline), W1 (full dispatch), W1b (registry-level dispatch), W2 (coercion).
#include <nlohmann/json.hpp>

#include "bench_common.h"
#include "talaria/core/coercion.h"
#include "talaria/core/dispatcher.h"
#include "workloads.h"

namespace talaria_bench {
namespace {

constexpr std::string_view kTool = "tool_7";
constexpr std::string_view kExpectedResult = R"({"ok": true, "n": 42})";

// The no-op of W0: receives the arguments exactly as DispatchArgs does (by value).
[[gnu::noinline]] void Noop(std::string_view name, Json args) {
  DoNotOptimize(name);
  DoNotOptimize(args);
}

}  // namespace

int RunW0(const Options& opts) {
  const int64_t n = Count(opts, 1'000'000);
  const double ns = MicroBenchNs(n, [] { Noop(kTool, StringArgs()); });
  PrintMetric("W0_loop_overhead_ns", ns, "ns/iter");
  return 0;
}

int RunW1(const Options& opts) {
  talaria::Registry registry;
  RegisterBenchTools(registry);
  const talaria::Dispatcher dispatcher(registry);
  talaria::ToolContext ctx;

  talaria::ToolResult first = dispatcher.DispatchArgs(kTool, StringArgs(), ctx);
  Check(first.ok() && first.text == kExpectedResult,
        "W1 result: got '" + first.text + "', spec says '" + std::string(kExpectedResult) + "'");

  const int64_t n = Count(opts, 200'000);
  const double ns = MicroBenchNs(n, [&] {
    talaria::ToolResult r = dispatcher.DispatchArgs(kTool, StringArgs(), ctx);
    DoNotOptimize(r);
  });

  talaria::ToolResult last = dispatcher.DispatchArgs(kTool, StringArgs(), ctx);
  Check(last.ok() && last.text == kExpectedResult, "W1 result after timing: '" + last.text + "'");
  PrintMetric("W1_handle_function_call_ns", ns, "ns/call");
  CheckHash("W1_result_fnv1a64", Fnv1a64(last.text), Fnv1a64(kExpectedResult));
  return 0;
}

int RunW1b(const Options& opts) {
  talaria::Registry registry;
  RegisterBenchTools(registry);
  talaria::ToolContext ctx;

  // The registry-level dispatch of pre-typed arguments: lookup + handler (talaria's Registry
  // has no dispatch of its own; the handler returns the normalized ToolResult already).
  auto dispatch = [&](const Json& args) {
    auto entry = registry.GetEntry(kTool);
    return entry->handler()(args, ctx);
  };
  talaria::ToolResult first = dispatch(TypedArgs());
  Check(first.ok() && first.text == kExpectedResult, "W1b result: got '" + first.text + "'");

  const int64_t n = Count(opts, 200'000);
  const double ns = MicroBenchNs(n, [&] {
    talaria::ToolResult r = dispatch(TypedArgs());
    DoNotOptimize(r);
  });
  PrintMetric("W1b_registry_dispatch_ns", ns, "ns/call");
  return 0;
}

int RunW2(const Options& opts) {
  talaria::Registry registry;
  RegisterBenchTools(registry);

  const Json first = talaria::CoerceToolArgs(registry, kTool, StringArgs());
  Check(first == TypedArgs() && first["n"].is_number_integer() && first["flag"].is_boolean(),
        "W2 result: got " + first.dump() + ", spec says {\"n\":42,\"flag\":true,\"s\":\"x\"}");

  const int64_t n = Count(opts, 200'000);
  const double ns = MicroBenchNs(n, [&] {
    Json coerced = talaria::CoerceToolArgs(registry, kTool, StringArgs());
    DoNotOptimize(coerced);
  });
  PrintMetric("W2_coerce_tool_args_ns", ns, "ns/call");
  return 0;
}

}  // namespace talaria_bench
