#include "mcp/http/request_watch.h"

#include <algorithm>
#include <system_error>

#include <httplib.h>

namespace talaria::mcp::client_internal {
namespace {

// How often a stopped request's client is stopped again until the request ends.
constexpr std::chrono::milliseconds kRestopPeriod{20};

}  // namespace

RequestWatch::RequestWatch(std::stop_token close) : close_(std::move(close)) {
  on_close_.emplace(close_, Wake{this});
}

RequestWatch::~RequestWatch() {
  on_close_.reset();  // before the thread goes: a late close must find nothing to wake
  std::jthread thread;
  {
    std::lock_guard lock(mu_);
    thread = std::move(thread_);
  }
  // jthread's destructor requests stop and joins; the thread's wait returns on the stop.
}

RequestWatch::Watched RequestWatch::Watch(httplib::Client& client, Clock::time_point deadline,
                                          std::stop_token cancel) {
  auto entry = std::make_unique<Entry>();
  entry->client = &client;
  entry->deadline = deadline;
  entry->cancel = cancel;
  {
    std::lock_guard lock(mu_);
    entries_.push_back(entry.get());
    ++pokes_;  // its deadline may come before the one the thread sleeps towards
    if (!thread_.joinable())
      thread_ = std::jthread([this](const std::stop_token& stop) { Loop(stop); });
  }
  cv_.notify_all();
  // Registered after the entry is listed: a token that fired already runs the wake at once.
  entry->on_cancel.emplace(std::move(cancel), Wake{this});
  return Watched(*this, std::move(entry));
}

Stopped RequestWatch::Watched::Finish() {
  if (!finished_) {
    finished_ = true;
    // Outside the lock: destroying a callback waits for a run of it in progress, which takes it.
    entry_->on_cancel.reset();
    {
      std::lock_guard lock(watch_.mu_);
      std::erase(watch_.entries_, entry_.get());
    }
    if (entry_->stopper.joinable()) {  // no longer started once the entry is off the list
      entry_->stopper.request_stop();
      entry_->stopper.join();
    }
  }
  return entry_->why.load();
}

void RequestWatch::Poke() {
  {
    std::lock_guard lock(mu_);
    ++pokes_;
  }
  cv_.notify_all();
}

void RequestWatch::Loop(const std::stop_token& stop) {
  std::unique_lock lock(mu_);
  while (!stop.stop_requested()) {
    const auto now = Clock::now();
    auto wake_at = Clock::time_point::max();
    for (Entry* e : entries_) {
      if (e->why.load() != Stopped::kNo) continue;  // its stopper has it
      const Stopped why = close_.stop_requested()      ? Stopped::kClosed
                          : e->cancel.stop_requested() ? Stopped::kCancelled
                          : now >= e->deadline         ? Stopped::kDeadline
                                                       : Stopped::kNo;
      if (why == Stopped::kNo) {
        wake_at = std::min(wake_at, e->deadline);
        continue;
      }
      e->why.store(why);
      try {
        e->stopper = std::jthread([client = e->client](const std::stop_token& finished) {
          std::mutex mu;
          std::condition_variable_any cv;
          std::unique_lock hold(mu);
          while (!finished.stop_requested()) {
            client->stop();
            cv.wait_for(hold, finished, kRestopPeriod, [] { return false; });
          }
        });
      } catch (const std::system_error&) {
        // No thread to be had: one stop from here (the socket's own timeout is the backstop).
        e->client->stop();
      }
    }
    // A far deadline is slept towards in steps: the clock arithmetic must not overflow.
    if (wake_at != Clock::time_point::max())
      wake_at = std::min(wake_at, now + std::chrono::hours(1));
    const uint64_t seen = pokes_;
    const auto poked = [&] { return pokes_ != seen; };
    if (wake_at == Clock::time_point::max()) {
      cv_.wait(lock, stop, poked);
    } else {
      cv_.wait_until(lock, stop, wake_at, poked);
    }
  }
}

}  // namespace talaria::mcp::client_internal
