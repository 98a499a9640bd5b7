// Executor: the one persistent pool async work runs on (ARCHITECTURE.md, "Async bridge"), so an
// async tool costs a queue push, not a thread or an event loop per call.
//
// A small fixed set of std::jthread workers, started on the first Post, plus one alarm thread
// started on first need, all joined by Shutdown (the destructor; Shared() is joined at exit).
// Waiting for a result goes through WaitFor: on a worker thread it runs queued tasks while it
// waits ("help while waiting"), so a task that waits for another task never deadlocks the pool,
// however deep the nesting and however many workers are busy; elsewhere it is a plain wait
// bounded by a deadline and a stop token.
// Thread-safety: thread-safe; Post, Submit and WaitFor may be called from any thread, including
// from inside a task.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string_view>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace talaria {

// How Executor::WaitFor ended.
enum class WaitResult : unsigned char {
  kReady,     // the future holds a value or an exception (or is deferred: get() runs it here)
  kTimedOut,  // the deadline passed first
  kStopped,   // the stop token fired, or the executor the waiting worker belongs to shut down
};

class Executor {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;

  // A move-only nullary callable (std::move_only_function arrives with C++23).
  class Task {
   public:
    Task() = default;
    template <class F, class = std::enable_if_t<!std::is_same_v<std::decay_t<F>, Task>>>
    Task(F&& fn)  // NOLINT: implicit by design, so Post accepts a lambda directly
        : impl_(std::make_unique<Impl<std::decay_t<F>>>(std::forward<F>(fn))) {}

    explicit operator bool() const { return impl_ != nullptr; }
    // REQUIRES: *this holds a callable.
    void operator()() { impl_->Run(); }

   private:
    struct Base {
      virtual ~Base() = default;
      virtual void Run() = 0;
    };
    template <class F>
    struct Impl final : Base {
      explicit Impl(F f) : fn(std::move(f)) {}
      void Run() override { fn(); }
      F fn;
    };
    std::unique_ptr<Base> impl_;
  };

  // max(2, hardware_concurrency).
  static size_t DefaultWorkerCount();

  // Runs `task`; what it throws is logged as `pool`'s, never propagated (a worker thread must
  // survive any task).
  static void RunLoggingThrows(Task& task, std::string_view pool);

  // The process-wide executor (DefaultWorkerCount() workers), created on first use and shut
  // down at exit.
  static Executor& Shared();

  // REQUIRES: workers >= 1. No thread starts before the first Post.
  explicit Executor(size_t workers = DefaultWorkerCount());
  // Shutdown().
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  size_t worker_count() const { return worker_count_; }

  // Queues `task` to run on a worker (tasks start in FIFO order). Returns false, destroying the
  // task unrun, once Shutdown has begun (or if no worker thread could be started). A task that
  // throws is a bug: the exception is logged and dropped, the worker lives on.
  [[nodiscard]] bool Post(Task task);

  // Posts `fn` and returns the future of its result; an exception it throws lands in the
  // future. When the executor is shut down the task is dropped and the future's get() throws
  // std::future_error (broken_promise), like every task still queued at shutdown.
  template <class F>
  auto Submit(F&& fn) -> std::future<std::invoke_result_t<std::decay_t<F>&>> {
    using R = std::invoke_result_t<std::decay_t<F>&>;
    std::packaged_task<R()> task(std::forward<F>(fn));
    std::future<R> future = task.get_future();
    (void)Post(Task(std::move(task)));  // refused: the task is gone and the promise broken
    return future;
  }

  // Stops accepting tasks, drops the ones not yet started (their futures report
  // broken_promise), wakes every worker waiting in WaitFor (it returns kStopped), and joins the
  // workers once their current task returns. Idempotent.
  // REQUIRES: not called from one of this executor's workers.
  void Shutdown();

  // True when the calling thread is one of this executor's workers.
  bool IsWorkerThread() const;

  // Waits until `future` is ready, `deadline` passes or `stop` fires, whichever comes first.
  // On a worker thread of any Executor it runs that executor's queued tasks meanwhile, so it
  // never deadlocks on work queued behind it; it then also returns kStopped when that executor
  // shuts down. Off the pool it blocks, noticing `stop` within a few milliseconds.
  // A helping wait cannot return while the task it runs is running, and that task may be the
  // very work it waits for: so `on_expiry` (e.g. the awaited work's own stop source) is
  // requested the moment the deadline passes, by the executor's alarm thread if this thread is
  // busy, and whenever the wait ends kTimedOut. Without it, a helping wait can overrun the
  // deadline by the length of the task it helps with. A wait whose alarm fired reports
  // kTimedOut even if the work then finished (it finished because it was stopped).
  // `Future` is std::future<T> or std::shared_future<T>; REQUIRES: future.valid().
  template <class Future>
  static WaitResult WaitFor(const Future& future, TimePoint deadline, std::stop_token stop = {},
                            std::stop_source on_expiry = std::stop_source(std::nostopstate)) {
    const std::function<bool(TimePoint)> ready_by = [&future](TimePoint until) {
      return future.wait_until(until) != std::future_status::timeout;
    };
    return WaitUntilReady(ready_by, deadline, stop, on_expiry);
  }

  // Requests `source`'s stop at `when` from the executor's alarm thread (one per executor,
  // started on first use, joined by Shutdown). Returns the alarm's id, or 0 once Shutdown began
  // (then nothing will fire). Deadlines of batch calls use it: no thread per deadline.
  uint64_t SetAlarm(TimePoint when, std::stop_source source);
  // Removes an alarm; returns whether it had already fired. Unknown ids return false.
  bool CancelAlarm(uint64_t id);

 private:
  struct Alarm {
    TimePoint when;
    std::stop_source source;
    bool fired = false;
  };

  // `ready_by(t)` blocks until the awaited result is ready (true) or `t` passes (false).
  static WaitResult WaitUntilReady(const std::function<bool(TimePoint)>& ready_by,
                                   TimePoint deadline, const std::stop_token& stop,
                                   std::stop_source& on_expiry);
  WaitResult HelpUntilReady(const std::function<bool(TimePoint)>& ready_by, TimePoint deadline,
                            const std::stop_token& stop, std::stop_source& on_expiry);
  void WorkerLoop(const std::stop_token& stop);
  // Runs one dequeued task outside the lock and re-takes it; wakes helpers waiting for a
  // completion.
  void RunUnlocked(Task task, std::unique_lock<std::mutex>& lock);
  void AlarmLoop(const std::stop_token& stop);

  const size_t worker_count_;
  mutable std::mutex mu_;
  std::condition_variable_any cv_;     // queue non-empty, a task completed, or stopping
  std::deque<Task> queue_;             // Guarded by mu_.
  std::vector<std::jthread> workers_;  // Guarded by mu_.
  bool stopping_ = false;              // Guarded by mu_.
  size_t helpers_waiting_ = 0;         // Guarded by mu_.
  uint64_t completed_ = 0;             // Guarded by mu_.

  std::mutex alarm_mu_;
  std::condition_variable_any alarm_cv_;  // an alarm was set
  std::map<uint64_t, Alarm> alarms_;      // Guarded by alarm_mu_.
  uint64_t next_alarm_ = 1;               // Guarded by alarm_mu_.
  bool alarms_closed_ = false;            // Guarded by alarm_mu_.
  std::jthread alarm_thread_;             // Guarded by alarm_mu_.
};

}  // namespace talaria
