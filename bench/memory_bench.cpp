// W8: heap bytes per registered tool, from the counting allocator (alloc_counter.h).
//
// What the numbers mean:
// * They are requested bytes (the sizes passed to operator new): malloc's own chunk headers
//   (8 bytes per block with glibc) and size-class rounding are not included.
// * A ToolEntry keeps its schema as compact JSON text only; the coercion plan and validator are
//   compiled lazily, on the first dispatch of the tool. The two registration figures therefore
//   leave them out; W8_bytes_per_tool_after_first_call (same registry after one dispatch of
//   every tool) shows what a tool costs once it has been called.
// * Growth is the difference of live bytes, so transient allocations (the schema compiled and
//   dropped during Register, replaced registry snapshots) do not count.
#include <cstdio>

#include <nlohmann/json.hpp>

#include "alloc_counter.h"
#include "bench_common.h"
#include "talaria/core/coercion.h"
#include "talaria/core/dispatcher.h"
#include "talaria/core/schema_validator.h"
#include "workloads.h"

namespace talaria_bench {
namespace {

// Informational breakdown (comment lines; run.sh keeps only METRIC lines).
void PrintBreakdown(const talaria::Registry& registry) {
  auto entry = registry.GetEntry("mem_0");
  if (!entry) return;
  std::printf("# W8 detail: schema_text size %zu capacity %zu\n", entry->schema_text().size(),
              entry->schema_text().capacity());
  const Json schema = BenchSchema("mem_0", 0);
  const Json& parameters = schema["parameters"];
  int64_t before = LiveHeapBytes();
  {
    const talaria::CoercionPlan plan = talaria::CoercionPlan::Compile(parameters);
    std::printf("# W8 detail: CoercionPlan %lld bytes\n",
                static_cast<long long>(LiveHeapBytes() - before));
  }
  before = LiveHeapBytes();
  const uint64_t calls = AllocCalls();
  {
    auto validator = talaria::SchemaValidator::Compile(parameters);
    std::printf("# W8 detail: SchemaValidator %lld bytes in %llu allocations\n",
                static_cast<long long>(LiveHeapBytes() - before),
                static_cast<unsigned long long>(AllocCalls() - calls));
  }
}

}  // namespace

int RunW8(const Options& opts) {
  Check(AllocCountingActive(), "W8 needs TALARIA_BENCH_COUNT_ALLOC=1 (main re-executes itself)");
  const int tools = static_cast<int>(Count(opts, 10'000));
  const talaria::SyncHandler handler = BenchHandler;  // one shared handler
  auto spec_for = [&](std::string name, const Json& schema) {
    talaria::ToolSpec spec;
    spec.name = std::move(name);
    spec.toolset = "mem";
    spec.schema = schema;
    spec.handler = handler;
    return spec;
  };

  // 1. Registry only: names and schema DOMs exist before the measurement.
  double registry_only = 0;
  {
    std::vector<Json> schemas;
    std::vector<talaria::ToolSpec> specs;
    schemas.reserve(tools);
    specs.reserve(tools);
    for (int i = 0; i < tools; ++i) schemas.push_back(BenchSchema("mem_" + std::to_string(i), i));
    for (int i = 0; i < tools; ++i)
      specs.push_back(spec_for("mem_" + std::to_string(i), schemas[i]));
    talaria::Registry registry;
    const int64_t before = LiveHeapBytes();
    const uint64_t calls = AllocCalls();
    for (auto& spec : specs) Check(registry.Register(std::move(spec)).ok(), "W8: Register failed");
    registry_only = static_cast<double>(LiveHeapBytes() - before) / tools;
    std::printf("# W8 detail: %.1f allocation calls per Register\n",
                static_cast<double>(AllocCalls() - calls) / tools);
  }

  // 2. Including the schema: name and DOM are built inside the loop and dropped after Register
  //    (the registry keeps its own copy).
  double incl_schema = 0;
  double after_call = 0;
  {
    talaria::Registry registry;
    const talaria::Dispatcher dispatcher(registry);
    talaria::ToolContext ctx;
    const int64_t before = LiveHeapBytes();
    for (int i = 0; i < tools; ++i) {
      std::string name = "mem_" + std::to_string(i);
      const Json schema = BenchSchema(name, i);
      Check(registry.Register(spec_for(std::move(name), schema)).ok(), "W8: Register failed");
    }
    incl_schema = static_cast<double>(LiveHeapBytes() - before) / tools;

    // 3. The same registry after one dispatch of every tool (schemas compiled).
    for (int i = 0; i < tools; ++i) {
      talaria::ToolResult r =
          dispatcher.DispatchArgs("mem_" + std::to_string(i), StringArgs(), ctx);
      Check(r.ok() && r.text == R"({"ok": true, "n": 42})", "W8: dispatch failed: " + r.text);
    }
    after_call = static_cast<double>(LiveHeapBytes() - before) / tools;
    PrintBreakdown(registry);
  }

  PrintMetric("W8_bytes_per_entry_registry_only", registry_only, "bytes");
  PrintMetric("W8_bytes_per_tool_incl_schema", incl_schema, "bytes");
  PrintMetric("W8_bytes_per_tool_after_first_call", after_call, "bytes");
  PrintMetric("W8_sizeof_ToolEntry", static_cast<double>(sizeof(talaria::ToolEntry)), "bytes");
  return 0;
}

}  // namespace talaria_bench
