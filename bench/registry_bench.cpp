// W5: concurrent registry reads while a writer churns one tool in and out.
#include <algorithm>
#include <atomic>
#include <barrier>
#include <thread>

#include <nlohmann/json.hpp>

#include "bench_common.h"
#include "workloads.h"

namespace talaria_bench {
namespace {

constexpr int kReaders = 8;

struct ChurnRun {
  double wall_s = 0;
  uint64_t writer_pairs = 0;
  uint64_t misses = 0;
};

ChurnRun RunChurnOnce(int64_t lookups_per_reader) {
  talaria::Registry registry;
  RegisterBenchTools(registry);
  const std::vector<std::string> names = BenchToolNames();
  std::vector<std::vector<std::string>> seqs(kReaders);
  for (int r = 0; r < kReaders; ++r) {
    seqs[r].resize(names.size());
    std::rotate_copy(names.begin(), names.begin() + 25 * r, names.end(), seqs[r].begin());
  }
  const Json churn_schema = BenchSchema("churn_tool", kBenchTools);

  Clock::time_point released;
  // The completion step runs once, before any participant is unblocked: the release instant.
  std::barrier start(kReaders + 1, [&released]() noexcept { released = Clock::now(); });
  std::atomic<int> readers_running{kReaders};
  std::atomic<uint64_t> misses{0};
  std::atomic<bool> writer_failed{false};
  uint64_t pairs = 0;
  Clock::time_point joined;
  {
    std::vector<std::jthread> readers;
    readers.reserve(kReaders);
    for (int r = 0; r < kReaders; ++r) {
      readers.emplace_back([&, r] {
        const std::vector<std::string>& seq = seqs[r];
        uint64_t miss = 0;
        size_t k = 0;
        start.arrive_and_wait();
        for (int64_t i = 0; i < lookups_per_reader; ++i) {
          auto entry = registry.GetEntry(seq[k]);
          if (!entry) ++miss;
          DoNotOptimize(entry);
          if (++k == seq.size()) k = 0;
        }
        misses.fetch_add(miss, std::memory_order_relaxed);
        readers_running.fetch_sub(1, std::memory_order_release);
      });
    }
    std::jthread writer([&] {
      start.arrive_and_wait();
      while (readers_running.load(std::memory_order_acquire) > 0) {
        talaria::ToolSpec spec;
        spec.name = "churn_tool";
        spec.toolset = std::string(kBenchToolset);
        spec.schema = churn_schema;
        spec.handler = BenchHandler;
        if (!registry.Register(std::move(spec)).ok() || !registry.Deregister("churn_tool")) {
          writer_failed.store(true);
          return;
        }
        ++pairs;
      }
    });
    for (auto& t : readers) t.join();
    joined = Clock::now();
  }  // joins the writer
  Check(!writer_failed.load(), "W5: the writer's register/deregister failed");
  ChurnRun run;
  run.wall_s = ElapsedNs(released, joined) / 1e9;
  run.writer_pairs = pairs;
  run.misses = misses.load();
  return run;
}

}  // namespace

int RunW5(const Options& opts) {
  const int64_t lookups = Count(opts, 200'000);
  std::vector<double> reads_per_s;
  std::vector<double> pairs_per_s;
  for (int run = 0; run < 3; ++run) {
    const ChurnRun r = RunChurnOnce(lookups);
    Check(r.misses == 0, "W5: " + std::to_string(r.misses) + " lookups did not find their entry");
    reads_per_s.push_back(static_cast<double>(kReaders * lookups) / r.wall_s);
    pairs_per_s.push_back(static_cast<double>(r.writer_pairs) / r.wall_s);
  }
  PrintMetric("W5_concurrent_reads_per_s", Median(reads_per_s), "reads/s");
  PrintMetric("W5_writer_pairs_per_s", Median(pairs_per_s), "pairs/s");

  talaria::Registry registry;
  RegisterBenchTools(registry);
  const std::vector<std::string> names = BenchToolNames();
  const int64_t n = Count(opts, 50'000);
  uint64_t misses = 0;
  auto read_block = [&](int64_t count) {
    size_t k = 0;
    for (int64_t i = 0; i < count; ++i) {
      auto entry = registry.GetEntry(names[k]);
      if (!entry) ++misses;
      DoNotOptimize(entry);
      if (++k == names.size()) k = 0;
    }
  };
  read_block(n / 10);  // warm-up
  std::vector<double> runs;
  for (int run = 0; run < 3; ++run) {
    const auto t0 = Clock::now();
    read_block(n);
    const auto t1 = Clock::now();
    runs.push_back(ElapsedNs(t0, t1) / static_cast<double>(n));
  }
  Check(misses == 0, "W5 single thread: a lookup did not find its entry");
  PrintMetric("W5_single_thread_get_entry_ns", Median(runs), "ns/read");
  return 0;
}

}  // namespace talaria_bench
