// ElasticPool: every task starts at once on a thread of its own — an idle one when there is one,
// a new one otherwise — and a thread that waited idle for `idle_timeout` ends. For work that may
// block for long (a tool call running a 30 s command) where a queue behind a fixed set of workers
// would make short calls wait: concurrency is never capped here (the caller caps it), but a
// steady stream of calls reuses threads instead of paying a clone, a stack mmap/munmap (and the
// TLB shootdown that comes with it) per call. The shared Executor stays the pool for async
// handlers, whose tasks never block.
// Thread-safety: Run may be called from any thread, including from inside a task. The destructor
// runs every task already handed in, then joins every thread; it must not run on a pool thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <list>
#include <mutex>
#include <thread>
#include <vector>

#include "talaria/base/executor.h"

namespace talaria {

class ElasticPool {
 public:
  explicit ElasticPool(std::chrono::milliseconds idle_timeout = std::chrono::seconds(30));
  ~ElasticPool();
  ElasticPool(const ElasticPool&) = delete;
  ElasticPool& operator=(const ElasticPool&) = delete;

  // Starts `task` (on an idle thread, or a new one). A task that throws is logged and dropped.
  void Run(Executor::Task task);

  // Threads alive now (busy or idle).
  size_t threads() const;

 private:
  using Handle = std::list<std::thread>::iterator;
  void Loop(Handle self);

  const std::chrono::milliseconds idle_timeout_;
  mutable std::mutex mu_;
  std::condition_variable work_;
  std::deque<Executor::Task> tasks_;  // Guarded by mu_.
  size_t idle_ = 0;                   // Guarded by mu_. Threads waiting for a task.
  bool stopping_ = false;             // Guarded by mu_.
  std::list<std::thread> live_;       // Guarded by mu_.
  std::vector<std::thread> ended_;    // Guarded by mu_. Timed out; joined by the next Run.
};

}  // namespace talaria
