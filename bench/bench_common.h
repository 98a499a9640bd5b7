// Shared helpers of talaria_bench: the spec's generators (splitmix64, FNV-1a 64), the
// measurement rules of WORKLOADS.md §3 (warm-up N/10, 5 timed blocks, median), METRIC output,
// and the 200 bench tools of §4.
// Thread-safety: free functions; the workloads call them from their own threads only where noted.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "bench_util.h"
#include "talaria/base/json.h"
#include "talaria/core/registry.h"
#include "talaria/core/tool_context.h"
#include "talaria/core/tool_result.h"

namespace talaria_bench {

using talaria::Json;
using Clock = std::chrono::steady_clock;

struct Options {
  bool quick = false;  // smoke run: small counts, numbers not comparable
};

// N of the spec, or N/100 (at least `min_quick`) with --quick.
int64_t Count(const Options& opts, int64_t full, int64_t min_quick = 10);

// --- spec generators (§4) -----------------------------------------------------------------

uint64_t Fnv1a64(std::string_view bytes);
std::string Hex16(uint64_t v);
// FNV-1a of the names joined by "\n" (no trailing newline).
uint64_t Fnv1a64Joined(const std::vector<std::string>& names);

// Aborts (exit 3) when the generators do not reproduce the spec's test vectors.
void SelfTest();

// --- measurement --------------------------------------------------------------------------

inline double ElapsedNs(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double, std::nano>(to - from).count();
}

// The compiler must assume `value` (its address escapes) is read here.
template <typename T>
inline void DoNotOptimize(const T& value) {
  asm volatile("" : : "g"(&value) : "memory");
}

// §3 micro-benchmark: one warm-up block of n/10 iterations, then 5 timed blocks of n; the
// value of a block is elapsed/n in ns; returns the median block.
template <typename Body>
double MicroBenchNs(int64_t n, Body&& body) {
  for (int64_t i = 0; i < n / 10; ++i) body();
  std::vector<double> blocks;
  for (int run = 0; run < 5; ++run) {
    const auto t0 = Clock::now();
    for (int64_t i = 0; i < n; ++i) body();
    const auto t1 = Clock::now();
    blocks.push_back(ElapsedNs(t0, t1) / static_cast<double>(n));
  }
  return Median(std::move(blocks));
}

// --- output -------------------------------------------------------------------------------

void PrintHashMetric(std::string_view name, uint64_t hash);
// Prints the mismatch to stderr and exits with status 2 when `ok` is false.
void Check(bool ok, std::string_view what);
// Compares a checksum with the spec's value (Check on mismatch) and prints the metric.
void CheckHash(std::string_view metric, uint64_t got, uint64_t want);

// --- bench tools (§4) ---------------------------------------------------------------------

inline constexpr int kBenchTools = 200;
inline constexpr std::string_view kBenchToolset = "bench";

// {"name": name, "description": "Benchmark tool k", "parameters": {...n, flag, s...}}.
Json BenchSchema(std::string_view name, int k);
// Returns {"ok": true, "n": <n as JSON>} (Python separators); ignores the context.
talaria::ToolResult BenchHandler(const Json& args, talaria::ToolContext& ctx);
// "tool_0" ... "tool_199".
std::vector<std::string> BenchToolNames();
// Registers tool_0..tool_199 in toolset "bench", in order (Check on failure).
void RegisterBenchTools(talaria::Registry& registry);

// {"n": "42", "flag": "true", "s": "x"}: the model's stringly-typed arguments.
Json StringArgs();
// {"n": 42, "flag": true, "s": "x"}: the same, pre-typed.
Json TypedArgs();

}  // namespace talaria_bench
