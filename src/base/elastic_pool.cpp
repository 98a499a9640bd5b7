#include "talaria/base/elastic_pool.h"

#include <utility>

namespace talaria {

ElasticPool::ElasticPool(std::chrono::milliseconds idle_timeout) : idle_timeout_(idle_timeout) {}

ElasticPool::~ElasticPool() {
  std::list<std::thread> live;
  std::vector<std::thread> ended;
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    work_.notify_all();
  }
  // Threads leave live_ only by timing out, which cannot happen once stopping_ is set, so the
  // lists taken here are complete. Joined outside the lock: workers drain the queue first.
  for (;;) {
    {
      std::lock_guard lock(mu_);
      live.splice(live.end(), live_);
      for (auto& t : ended_) ended.push_back(std::move(t));
      ended_.clear();
    }
    if (live.empty() && ended.empty()) break;
    for (auto& t : live) t.join();
    for (auto& t : ended) t.join();
    live.clear();
    ended.clear();
  }
}

void ElasticPool::Run(Executor::Task task) {
  std::vector<std::thread> ended;
  bool wake = false;
  {
    std::lock_guard lock(mu_);
    ended.swap(ended_);
    tasks_.push_back(std::move(task));
    if (idle_ >= tasks_.size()) {
      wake = true;
    } else {
      live_.emplace_back();
      const Handle self = std::prev(live_.end());
      // Loop takes mu_ first, so it sees its handle assigned.
      *self = std::thread([this, self] { Loop(self); });
    }
  }
  // Outside the lock, so the woken thread does not go straight back to sleep on mu_.
  if (wake) work_.notify_one();
  for (auto& t : ended) t.join();  // they have left Loop: a short wait
}

size_t ElasticPool::threads() const {
  std::lock_guard lock(mu_);
  return live_.size();
}

void ElasticPool::Loop(Handle self) {
  std::unique_lock lock(mu_);
  for (;;) {
    if (!tasks_.empty()) {
      Executor::Task task = std::move(tasks_.front());
      tasks_.pop_front();
      lock.unlock();
      Executor::RunLoggingThrows(task, "elastic pool");
      task = Executor::Task();  // its captures go before the next wait
      lock.lock();
      continue;
    }
    if (stopping_) return;
    ++idle_;
    const bool woken =
        work_.wait_for(lock, idle_timeout_, [this] { return !tasks_.empty() || stopping_; });
    --idle_;
    if (!woken) {
      ended_.push_back(std::move(*self));
      live_.erase(self);
      return;
    }
  }
}

}  // namespace talaria
