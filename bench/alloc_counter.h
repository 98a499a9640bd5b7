// A counting replacement of the global allocation functions, for W8.
//
// alloc_counter.cpp replaces every global operator new/delete of the talaria_bench binary
// (which also serves libtalaria and libstdc++, by symbol interposition). Counting needs the
// requested size at delete time, so it stores it in a 16-byte prefix; that prefix would change
// the heap behaviour of the timing workloads, so counting is chosen once per process, before
// the first allocation, from the environment: TALARIA_BENCH_COUNT_ALLOC=1. Without it the
// functions are plain malloc/free forwarders. W8 re-executes itself with the variable set.
//
// The counters are requested bytes: no malloc chunk headers, no rounding to malloc's size
// classes, no prefix. Relaxed atomics; the figures are exact for a single-threaded workload.
// Thread-safety: thread-safe.
#pragma once

#include <cstdint>

namespace talaria_bench {

// True when this process counts (TALARIA_BENCH_COUNT_ALLOC=1 at start-up).
bool AllocCountingActive();
// Bytes requested and not yet freed, since process start.
int64_t LiveHeapBytes();
// Number of allocation calls since process start.
uint64_t AllocCalls();

}  // namespace talaria_bench
