#include "talaria/base/executor.h"

#include <algorithm>
#include <exception>
#include <string>
#include <system_error>
#include <vector>

#include "talaria/base/log.h"
#include "talaria/base/status.h"

namespace talaria {
namespace {

using namespace std::chrono_literals;

// The executor whose worker the calling thread is; null off the pool.
thread_local Executor* tls_worker_of = nullptr;

// Off the pool a wait blocks on the future itself, which wakes the moment it is ready; the
// slice only bounds how late a stop request is noticed.
constexpr auto kOutsideSlice = 5ms;
// On the pool a helper sleeps on the queue's condition variable, which wakes on new work and on
// every completed task; the slice bounds how late it notices a future completed off the pool.
constexpr auto kHelperSlice = 1ms;

// The clock's epoch is always past, so this only polls.
bool ReadyNow(const std::function<bool(Executor::TimePoint)>& ready_by) {
  return ready_by(Executor::TimePoint{});
}

}  // namespace

void Executor::RunLoggingThrows(Task& task, std::string_view pool) {
  try {
    task();
  } catch (const std::exception& e) {
    LogError(std::string(pool) + ": a task threw: " + e.what());
  } catch (...) {
    LogError(std::string(pool) + ": a task threw a non-standard exception");
  }
}

size_t Executor::DefaultWorkerCount() {
  return std::max<size_t>(2, std::thread::hardware_concurrency());
}

Executor& Executor::Shared() {
  // Function-local: built on first use, destroyed (and so joined) at exit before anything that
  // was constructed earlier.
  static Executor shared;
  return shared;
}

Executor::Executor(size_t workers) : worker_count_(workers) { TALARIA_CHECK(workers >= 1); }

Executor::~Executor() { Shutdown(); }

bool Executor::Post(Task task) {
  TALARIA_CHECK(static_cast<bool>(task));
  {
    std::lock_guard lock(mu_);
    if (stopping_) return false;
    if (workers_.empty()) {
      try {
        workers_.reserve(worker_count_);
        for (size_t i = 0; i < worker_count_; ++i) {
          workers_.emplace_back([this](std::stop_token stop) { WorkerLoop(stop); });
        }
      } catch (const std::system_error& e) {
        LogError(std::string("executor: could not start a worker: ") + e.what());
        if (workers_.empty()) return false;
      }
    }
    queue_.push_back(std::move(task));
  }
  cv_.notify_one();
  return true;
}

void Executor::Shutdown() {
  TALARIA_CHECK(!IsWorkerThread());
  std::deque<Task> dropped;
  std::vector<std::jthread> workers;
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    dropped.swap(queue_);
    workers.swap(workers_);
  }
  cv_.notify_all();
  std::jthread alarm_thread;
  {
    std::lock_guard lock(alarm_mu_);
    alarms_closed_ = true;
    alarm_thread = std::move(alarm_thread_);
  }
  // Destroyed outside the lock: a task's destructor may run user code (e.g. break a promise
  // whose waiter then posts again, which is refused).
  dropped.clear();
  for (std::jthread& worker : workers) worker.request_stop();
  workers.clear();  // joins
  // Its stop-token wait wakes on request_stop; joined by the destructor.
  alarm_thread = std::jthread();
}

bool Executor::IsWorkerThread() const { return tls_worker_of == this; }

void Executor::WorkerLoop(const std::stop_token& stop) {
  tls_worker_of = this;
  std::unique_lock lock(mu_);
  for (;;) {
    // No deadline needed: Shutdown sets stopping_ and wakes every worker.
    cv_.wait(lock, stop, [this] { return stopping_ || !queue_.empty(); });
    if (stopping_ || stop.stop_requested()) return;
    Task task = std::move(queue_.front());
    queue_.pop_front();
    RunUnlocked(std::move(task), lock);
  }
}

void Executor::RunUnlocked(Task task, std::unique_lock<std::mutex>& lock) {
  lock.unlock();
  RunLoggingThrows(task, "executor");
  task = Task();  // destroyed before the lock is taken again: it may hold user state
  lock.lock();
  ++completed_;
  if (helpers_waiting_ > 0) cv_.notify_all();
}

WaitResult Executor::WaitUntilReady(const std::function<bool(TimePoint)>& ready_by,
                                    TimePoint deadline, const std::stop_token& stop,
                                    std::stop_source& on_expiry) {
  if (tls_worker_of != nullptr)
    return tls_worker_of->HelpUntilReady(ready_by, deadline, stop, on_expiry);
  for (;;) {
    if (ReadyNow(ready_by)) return WaitResult::kReady;
    if (stop.stop_requested()) return WaitResult::kStopped;
    const TimePoint now = std::chrono::steady_clock::now();
    if (now >= deadline) {
      if (on_expiry.stop_possible()) on_expiry.request_stop();
      return WaitResult::kTimedOut;
    }
    if (ready_by(std::min(deadline, now + kOutsideSlice))) return WaitResult::kReady;
  }
}

WaitResult Executor::HelpUntilReady(const std::function<bool(TimePoint)>& ready_by,
                                    TimePoint deadline, const std::stop_token& stop,
                                    std::stop_source& on_expiry) {
  uint64_t alarm = 0;
  WaitResult result = WaitResult::kReady;
  std::unique_lock lock(mu_);
  for (;;) {
    if (ReadyNow(ready_by)) break;
    if (stop.stop_requested() || stopping_) {
      result = WaitResult::kStopped;
      break;
    }
    const TimePoint now = std::chrono::steady_clock::now();
    if (now >= deadline) {
      result = WaitResult::kTimedOut;
      break;
    }
    if (!queue_.empty()) {
      // What we wait for may be queued behind this very thread: run it (or whatever is first)
      // here instead of blocking a worker the pool needs. While it runs, only the alarm can
      // tell the awaited work that the deadline passed.
      if (alarm == 0 && on_expiry.stop_possible() && deadline != TimePoint::max()) {
        lock.unlock();
        alarm = SetAlarm(deadline, on_expiry);
        lock.lock();
        if (alarm != 0) continue;  // the queue may have changed meanwhile
      }
      Task task = std::move(queue_.front());
      queue_.pop_front();
      RunUnlocked(std::move(task), lock);
      continue;
    }
    const uint64_t seen = completed_;
    ++helpers_waiting_;
    cv_.wait_until(lock, stop, std::min(deadline, now + kHelperSlice),
                   [&] { return stopping_ || !queue_.empty() || completed_ != seen; });
    --helpers_waiting_;
  }
  lock.unlock();
  // The alarm fired: the deadline passed while this thread was busy and the awaited work was
  // told to stop, so whatever it then returned is not a result in time.
  if (alarm != 0 && CancelAlarm(alarm) && result == WaitResult::kReady)
    result = WaitResult::kTimedOut;
  if (result == WaitResult::kTimedOut && on_expiry.stop_possible()) on_expiry.request_stop();
  return result;
}

uint64_t Executor::SetAlarm(TimePoint when, std::stop_source source) {
  std::lock_guard lock(alarm_mu_);
  if (alarms_closed_) return 0;
  if (!alarm_thread_.joinable()) {
    try {
      alarm_thread_ = std::jthread([this](std::stop_token stop) { AlarmLoop(stop); });
    } catch (const std::system_error& e) {
      LogError(std::string("executor: could not start the alarm thread: ") + e.what());
      return 0;
    }
  }
  const uint64_t id = next_alarm_++;
  alarms_.emplace(id, Alarm{when, std::move(source)});
  alarm_cv_.notify_all();
  return id;
}

bool Executor::CancelAlarm(uint64_t id) {
  std::lock_guard lock(alarm_mu_);
  auto it = alarms_.find(id);
  if (it == alarms_.end()) return false;
  const bool fired = it->second.fired;
  alarms_.erase(it);
  return fired;
}

void Executor::AlarmLoop(const std::stop_token& stop) {
  std::unique_lock lock(alarm_mu_);
  while (!stop.stop_requested()) {
    const TimePoint now = std::chrono::steady_clock::now();
    TimePoint next = TimePoint::max();
    std::vector<std::stop_source> due;
    for (auto& [id, alarm] : alarms_) {
      if (alarm.fired) continue;
      if (alarm.when <= now) {
        alarm.fired = true;
        due.push_back(alarm.source);
      } else {
        next = std::min(next, alarm.when);
      }
    }
    if (!due.empty()) {
      // Stop callbacks are user code (they kill child processes): never under the lock.
      lock.unlock();
      for (std::stop_source& source : due) source.request_stop();
      lock.lock();
      continue;
    }
    const uint64_t seen = next_alarm_;
    const auto changed = [&] { return next_alarm_ != seen; };
    if (next == TimePoint::max()) {
      alarm_cv_.wait(lock, stop, changed);  // woken by the next SetAlarm or by Shutdown
    } else {
      alarm_cv_.wait_until(lock, stop, next, changed);
    }
  }
}

}  // namespace talaria
