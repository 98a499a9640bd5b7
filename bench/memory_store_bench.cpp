// The memory tool's write path (issue 21): one `add` is the exclusive flock, the re-read under
// it, the drift check, the threat scan and the atomic replace (temp file, fsync, rename, fsync
// of the directory). The file holds ~1,500 of its 2,200 characters, as a used store would; each
// timed add is undone by an untimed remove so the size stays put. The directory is the current
// one (a real disk; /tmp may be tmpfs, where fsync costs nothing) unless given as argv[1].
//
//   METRIC memory_add_us      median of one add (goal <= 1 ms)
//   METRIC memory_add_p99_us  its 99th percentile
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench_util.h"
#include "support/temp_dir.h"
#include "talaria/memory/memory_store.h"

int main(int argc, char** argv) {
  using Clock = std::chrono::steady_clock;
  using talaria::memory::Action;
  using talaria::memory::MemoryStore;
  using talaria::memory::Target;

  char cwd[4096];
  const std::string base = argc > 1 ? argv[1] : (::getcwd(cwd, sizeof cwd) ? cwd : ".");
  talaria::test_support::TempDir dir(base);
  talaria::memory::MemorySettings settings;
  settings.dir = dir.path() + "/memories";
  const MemoryStore store(settings);

  for (int i = 0; store.Read(Target::kMemory)->size() < 15; ++i) {
    (void)store.Apply(Target::kMemory,
                      {{Action::kAdd,
                        "Fact " + std::to_string(i) +
                            ": the project builds with CMake and Ninja; tests run under ctest.",
                        {}}});
  }
  constexpr int kRounds = 2000;
  std::vector<double> us;
  us.reserve(kRounds);
  for (int i = 0; i < kRounds; ++i) {
    const std::string entry = "Bench entry " + std::to_string(i) + ": the user prefers tabs.";
    const auto t0 = Clock::now();
    auto added = store.Apply(Target::kMemory, {{Action::kAdd, entry, {}}});
    const auto t1 = Clock::now();
    if (!added.ok) {
      std::fprintf(stderr, "add failed: %s\n", added.result->dump().c_str());
      return 1;
    }
    us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    (void)store.Apply(Target::kMemory, {{Action::kRemove, {}, entry}});
  }
  std::sort(us.begin(), us.end());
  std::printf("# memory add: %d rounds in %s, file ~%zu entries\n", kRounds, dir.path().c_str(),
              store.Read(Target::kMemory)->size());
  talaria_bench::PrintMetric("memory_add_us", talaria_bench::Median(us), "us");
  talaria_bench::PrintMetric("memory_add_p99_us", us[us.size() * 99 / 100], "us");
  return 0;
}
