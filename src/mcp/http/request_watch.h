// RequestWatch: stops a connection's HTTP requests once they outlive their deadline, their
// cancel token or the connection, with one thread for all of them (a thread per request cost a
// clone on every call).
//
// A request is watched while its Watched guard lives. Once it is due, its client is stopped
// (httplib shuts the socket down, which fails the blocked read or write), and again every 20 ms
// until the request ends: a stop() that lands before the socket exists does nothing. Those stops
// run on a thread of the request's own, started when it is due (rarely: most requests end in
// time), so a stop() that waits out a connect in progress holds up no other request. The request
// reads fired() in its callbacks and Finish() after the send, which says what stopped it.
// Thread-safety: thread-safe. No Watched may outlive its RequestWatch.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <thread>
#include <vector>

namespace httplib {
class Client;
}

namespace talaria::mcp::client_internal {

enum class Stopped : unsigned char { kNo, kDeadline, kCancelled, kClosed };

class RequestWatch {
 public:
  using Clock = std::chrono::steady_clock;

  // `close` stops every request watched, now and later.
  explicit RequestWatch(std::stop_token close);
  ~RequestWatch();  // joins the thread
  RequestWatch(const RequestWatch&) = delete;
  RequestWatch& operator=(const RequestWatch&) = delete;

 private:
  // The callback a token runs when it fires: wakes the thread.
  struct Wake {
    RequestWatch* watch;
    void operator()() const { watch->Poke(); }
  };
  struct Entry {
    httplib::Client* client = nullptr;
    Clock::time_point deadline;
    std::stop_token cancel;
    std::atomic<Stopped> why{Stopped::kNo};
    std::optional<std::stop_callback<Wake>> on_cancel;
    // Started once the request is due: stops the client until the request ends. A thread of
    // its own, because stop() can wait out a connect in progress, and that must hold up nobody
    // else. Set under mu_; joined by Finish.
    std::jthread stopper;
  };

 public:
  // One request's registration; Finish (or the destructor) ends it.
  class Watched {
   public:
    Watched(Watched&&) = delete;
    ~Watched() { (void)Finish(); }
    bool fired() const { return entry_->why.load() != Stopped::kNo; }
    // Ends the watch; what stopped the request, if anything did.
    Stopped Finish();

   private:
    friend class RequestWatch;
    Watched(RequestWatch& watch, std::unique_ptr<Entry> entry)
        : watch_(watch), entry_(std::move(entry)) {}
    RequestWatch& watch_;
    std::unique_ptr<Entry> entry_;
    bool finished_ = false;
  };

  // Watches `client`'s request until the guard is finished. `deadline` may be time_point::max().
  Watched Watch(httplib::Client& client, Clock::time_point deadline, std::stop_token cancel);

 private:
  void Poke();
  void Loop(const std::stop_token& stop);

  std::stop_token close_;
  std::mutex mu_;
  std::condition_variable_any cv_;
  std::vector<Entry*> entries_;  // Guarded by mu_.
  uint64_t pokes_ = 0;           // Guarded by mu_. Bumped by every wake, so none is lost.
  std::jthread thread_;          // Guarded by mu_. Started by the first Watch.
  std::optional<std::stop_callback<Wake>> on_close_;
};

}  // namespace talaria::mcp::client_internal
