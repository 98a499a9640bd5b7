// What the environment benchmarks (ssh, docker) share: the cost of Environment::Run("true")
// against a bare call of `true` through the backend's own client (`ssh host true`,
// `docker exec <container> true`), i.e. what the environment adds on top of its transport.
// Thread-safety: free functions.
#pragma once

#include <chrono>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "bench_util.h"
#include "talaria/base/subprocess.h"
#include "talaria/env/environment.h"

namespace talaria_bench {

inline double MsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

struct TrueCosts {
  double run_ms = 0;   // median of Environment::Run("true")
  double bare_ms = 0;  // median of the bare client's `true`
};

// `warmup` rounds, then `n` measured; the two interleaved, so drift of the far side (or of the
// machine's load) hits both alike. nullopt (the failure printed to stderr): a call failed.
inline std::optional<TrueCosts> MeasureRunTrue(talaria::env::Environment& env,
                                               const talaria::SpawnOptions& bare, int warmup,
                                               int n) {
  std::vector<double> run_ms;
  std::vector<double> bare_ms;
  for (int i = -warmup; i < n; ++i) {
    auto start = std::chrono::steady_clock::now();
    auto r = env.Run("true", {});
    const double run_elapsed = MsSince(start);
    if (!r || r->exit_code != 0) {
      std::fprintf(stderr, "Run(\"true\") failed: %s\n",
                   r ? ("exit " + std::to_string(r->exit_code) + ": " + r->output).c_str()
                     : r.error().ToString().c_str());
      return std::nullopt;
    }
    start = std::chrono::steady_clock::now();
    auto b = talaria::RunProcess(bare);
    const double bare_elapsed = MsSince(start);
    if (!b || b->exit_code != 0) {
      std::fprintf(stderr, "%s true failed: %s\n", bare.argv.front().c_str(),
                   b ? b->stderr_text.c_str() : b.error().ToString().c_str());
      return std::nullopt;
    }
    if (i >= 0) {
      run_ms.push_back(run_elapsed);
      bare_ms.push_back(bare_elapsed);
    }
  }
  return TrueCosts{Median(std::move(run_ms)), Median(std::move(bare_ms))};
}

}  // namespace talaria_bench
