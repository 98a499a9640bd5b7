// W3 (toolset resolution over 300 generated toolsets) and W4 (definitions export).
#include <cstdio>

#include <nlohmann/json.hpp>

#include "bench_common.h"
#include "talaria/core/toolsets.h"
#include "workloads.h"

namespace talaria_bench {
namespace {

std::string Pad(const char* prefix, int width, uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%s%0*llu", prefix, width, static_cast<unsigned long long>(v));
  return buf;
}

// §5 W3 generator: one splitmix64 stream, per toolset 10 tool draws then 3 include draws.
std::vector<talaria::ToolsetDef> GeneratedToolsets() {
  SplitMix64 rng(0x5EED0003);
  std::vector<talaria::ToolsetDef> table;
  table.reserve(300);
  for (int i = 0; i < 300; ++i) {
    talaria::ToolsetDef def;
    def.name = Pad("ts_", 3, static_cast<uint64_t>(i));
    for (int d = 0; d < 10; ++d) def.tools.push_back(Pad("t_", 4, rng.Below(2000)));
    if (i > 0) {
      for (int d = 0; d < 3; ++d) {
        def.includes.push_back(Pad("ts_", 3, rng.Below(static_cast<uint64_t>(i))));
      }
    }
    def.description = "Generated toolset " + std::to_string(i);
    table.push_back(std::move(def));
  }
  // The spec's vectors.
  const auto& t0 = table[0];
  const auto& t299 = table[299];
  Check(t0.tools[0] == "t_0580" && t0.tools[1] == "t_0996" && t0.tools[2] == "t_0408",
        "W3 generator: ts_000 tools differ from the spec's vector");
  Check(table[1].includes == std::vector<std::string>{"ts_000", "ts_000", "ts_000"},
        "W3 generator: ts_001 includes differ from the spec's vector");
  Check(t299.tools[0] == "t_1832" && t299.tools[1] == "t_1283" &&
            t299.includes == std::vector<std::string>{"ts_027", "ts_253", "ts_258"},
        "W3 generator: ts_299 differs from the spec's vector");
  return table;
}

struct W3Setup {
  talaria::Registry registry;  // empty: 0 tools, 0 aliases
  talaria::Toolsets toolsets{registry, {}};
  W3Setup() { toolsets.ResetTable(GeneratedToolsets()); }
};

talaria::ToolList ResolveOrDie(const talaria::Toolsets& toolsets, std::string_view name) {
  auto r = toolsets.Resolve(name);
  Check(r.has_value(),
        "Resolve(" + std::string(name) + ") failed: " + (r ? std::string() : r.error().message()));
  return *r;
}

void CheckResolved(std::string_view prefix, const talaria::ToolList& list, size_t want_count,
                   uint64_t want_hash) {
  PrintMetric(std::string(prefix) + "_result_tools", static_cast<double>(list->size()), "tools");
  Check(list->size() == want_count, std::string(prefix) + "_result_tools: got " +
                                        std::to_string(list->size()) + ", spec says " +
                                        std::to_string(want_count));
  CheckHash(std::string(prefix) + "_result_fnv1a64", Fnv1a64Joined(*list), want_hash);
}

// Canonical JSON (sorted keys, "," and ":") of a definitions array: nlohmann::json keeps
// object keys in a std::map, so parse + dump() is canonical.
void CheckDefinitions(const std::string& text, bool print) {
  const nlohmann::json parsed = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  Check(parsed.is_array(), "W4 definitions: not a JSON array");
  const uint64_t hash = Fnv1a64(parsed.dump());
  if (print) {
    PrintMetric("W4_definitions_count", static_cast<double>(parsed.size()), "defs");
    CheckHash("W4_definitions_fnv1a64", hash, 0x529c487afcf0f023ULL);
  }
  Check(parsed.size() == 200, "W4_definitions_count: got " + std::to_string(parsed.size()));
  Check(hash == 0x529c487afcf0f023ULL, "W4_definitions_fnv1a64: got " + Hex16(hash));
}

}  // namespace

int RunW3(const Options& /*opts*/) {
  W3Setup s;
  std::vector<double> ms;
  talaria::ToolList last;
  for (int call = 0; call < 6; ++call) {  // 1 warm-up + 5
    s.toolsets.ClearMemo();
    const auto t0 = Clock::now();
    last = ResolveOrDie(s.toolsets, "all");
    const auto t1 = Clock::now();
    if (call > 0) ms.push_back(ElapsedNs(t0, t1) / 1e6);
  }
  PrintMetric("W3_resolve_all_ms", Median(ms), "ms");
  CheckResolved("W3", last, 1546, 0x784dea692738b684ULL);
  return 0;
}

int RunW3b(const Options& /*opts*/) {
  W3Setup s;
  talaria::ToolList last = ResolveOrDie(s.toolsets, "ts_299");  // warm-up
  std::vector<double> runs;
  for (int run = 0; run < 5; ++run) {
    std::vector<double> calls;
    for (int call = 0; call < 20; ++call) {
      s.toolsets.ClearMemo();
      const auto t0 = Clock::now();
      last = ResolveOrDie(s.toolsets, "ts_299");
      const auto t1 = Clock::now();
      calls.push_back(ElapsedNs(t0, t1) / 1e6);
    }
    runs.push_back(Median(std::move(calls)));
  }
  PrintMetric("W3b_resolve_deepest_cold_ms", Median(runs), "ms");
  CheckResolved("W3b", last, 739, 0x61506c4a16e21b39ULL);
  return 0;
}

int RunW3c(const Options& opts) {
  W3Setup s;
  const talaria::ToolList first = ResolveOrDie(s.toolsets, "ts_299");
  Check(first->size() == 739 && Fnv1a64Joined(*first) == 0x61506c4a16e21b39ULL,
        "W3c: ts_299 resolves differently from the spec");
  const int64_t n = Count(opts, 20'000);
  const double ns = MicroBenchNs(n, [&] {
    auto r = s.toolsets.Resolve("ts_299");
    DoNotOptimize(r);
  });
  PrintMetric("W3c_resolve_deepest_memo_us", ns / 1e3, "us");
  return 0;
}

int RunW4a(const Options& opts) {
  talaria::Registry registry;
  RegisterBenchTools(registry);
  const std::vector<std::string> names = BenchToolNames();
  const std::shared_ptr<const std::string> first = registry.GetDefinitions(names);
  std::shared_ptr<const std::string> defs;
  const int64_t n = Count(opts, 2'000);
  const double ns = MicroBenchNs(n, [&] {
    defs = registry.GetDefinitions(names);
    DoNotOptimize(defs);
  });
  PrintMetric("W4a_registry_get_definitions_us", ns / 1e3, "us/call");
  CheckDefinitions(*first, /*print=*/true);
  CheckDefinitions(*defs, /*print=*/false);  // the text the timed calls returned
  return 0;
}

int RunW4b(const Options& opts) {
  talaria::Registry registry;
  RegisterBenchTools(registry);
  talaria::Toolsets toolsets(registry);  // the builtin table; "bench" is registry-only
  const std::vector<std::string> enabled = {"bench"};
  auto call = [&] {
    auto defs = toolsets.Definitions(enabled, {});
    Check(defs.has_value(), "W4b: Definitions failed");
    return *defs;
  };
  CheckDefinitions(*call(), /*print=*/false);
  const int64_t n = Count(opts, 1'000);
  const double ns = MicroBenchNs(n, [&] {
    toolsets.ClearMemo();
    auto defs = call();
    DoNotOptimize(defs);
  });
  PrintMetric("W4b_get_tool_definitions_uncached_us", ns / 1e3, "us/call");
  return 0;
}

int RunW4c(const Options& opts) {
  talaria::Registry registry;
  RegisterBenchTools(registry);
  const talaria::Toolsets toolsets(registry);
  const std::vector<std::string> enabled = {"bench"};
  auto call = [&] {
    auto defs = toolsets.Definitions(enabled, {});
    Check(defs.has_value(), "W4c: Definitions failed");
    return *defs;
  };
  CheckDefinitions(*call(), /*print=*/false);  // also warms the memo
  const int64_t n = Count(opts, 20'000);
  const double ns = MicroBenchNs(n, [&] {
    auto defs = call();
    DoNotOptimize(defs);
  });
  PrintMetric("W4c_get_tool_definitions_cached_us", ns / 1e3, "us/call");
  return 0;
}

}  // namespace talaria_bench
