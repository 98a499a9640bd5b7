// The workloads of WORKLOADS.md, one function each; main.cpp picks one per process.
// Each returns the process exit status (0; checksum mismatches exit 2 through Check).
#pragma once

#include "bench_common.h"

namespace talaria_bench {

int RunW0(const Options& opts);  // dispatch_bench.cpp
int RunW1(const Options& opts);
int RunW1b(const Options& opts);
int RunW2(const Options& opts);
int RunW3(const Options& opts);  // toolsets_bench.cpp
int RunW3b(const Options& opts);
int RunW3c(const Options& opts);
int RunW4a(const Options& opts);
int RunW4b(const Options& opts);
int RunW4c(const Options& opts);
int RunW5(const Options& opts);  // registry_bench.cpp
int RunW8(const Options& opts);  // memory_bench.cpp

}  // namespace talaria_bench
