// talaria_bench: runs one workload of WORKLOADS.md per process.
//   talaria_bench [--quick] <workload>      workload: W0 W1 W1b W2 W3 W3b W3c W4a W4b W4c W5 W8
//   talaria_bench list                      prints the workload names
// bench/run.sh runs every workload in its own process, repeats the suite and takes medians.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "alloc_counter.h"
#include "workloads.h"

namespace {

struct Workload {
  std::string_view name;
  int (*run)(const talaria_bench::Options&);
};

constexpr Workload kWorkloads[] = {
    {"W0", talaria_bench::RunW0},   {"W1", talaria_bench::RunW1},   {"W1b", talaria_bench::RunW1b},
    {"W2", talaria_bench::RunW2},   {"W3", talaria_bench::RunW3},   {"W3b", talaria_bench::RunW3b},
    {"W3c", talaria_bench::RunW3c}, {"W4a", talaria_bench::RunW4a}, {"W4b", talaria_bench::RunW4b},
    {"W4c", talaria_bench::RunW4c}, {"W5", talaria_bench::RunW5},   {"W8", talaria_bench::RunW8},
};

int Usage() {
  std::fprintf(stderr, "usage: talaria_bench [--quick] <workload>|list\nworkloads:");
  for (const auto& w : kWorkloads)
    std::fprintf(stderr, " %.*s", static_cast<int>(w.name.size()), w.name.data());
  std::fprintf(stderr, "\n");
  return 64;
}

}  // namespace

int main(int argc, char** argv) {
  talaria_bench::Options opts;
  std::string_view name;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--quick") {
      opts.quick = true;
    } else if (name.empty() && !arg.starts_with("-")) {
      name = arg;
    } else {
      return Usage();
    }
  }
  if (name == "list") {
    for (const auto& w : kWorkloads)
      std::printf("%.*s\n", static_cast<int>(w.name.size()), w.name.data());
    return 0;
  }
  for (const auto& w : kWorkloads) {
    if (w.name != name) continue;
    if (name == "W8" && !talaria_bench::AllocCountingActive()) {
      // The counting mode is fixed before the first allocation; start over with it on.
      setenv("TALARIA_BENCH_COUNT_ALLOC", "1", 1);
      execv("/proc/self/exe", argv);
      std::fprintf(stderr, "talaria_bench: re-exec for W8 failed: %s\n", std::strerror(errno));
      return 1;
    }
    talaria_bench::SelfTest();
    return w.run(opts);
  }
  return Usage();
}
