// A pool of machines for many sessions at once (`terminal.pool`): several hosts (SSH, or any
// backend that opens an Environment), each session placed on one and kept there (sticky), new
// sessions on the healthy host with the fewest running commands. A health check probes every
// host; one that fails is taken out of the pool, its sessions are told (on_host_lost, and the
// next command of each fails once with the reason) and then continue on another host with a
// fresh shell state. A host that passes its probe again takes new sessions.
//
//   HostPoolOptions options;
//   for (const auto& h : hosts) options.hosts.push_back({h.name, [h] { return OpenSsh(h); }});
//   auto pool = HostPool::Create(std::move(options));
//   auto env = (*pool)->Acquire("sess_1");   // an Environment like any other
//
// Ownership: each session's environment is its holders'; it keeps the pool's state (not the
// background check) alive. Thread-safety: thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "talaria/base/status.h"
#include "talaria/env/environment.h"

namespace talaria::env {

struct PoolHost {
  std::string name;
  // Opens a session on this host (called once per session placed here).
  std::function<Result<std::shared_ptr<Environment>>()> open;
  // The health probe; empty: open a session and run `true` in it (a fresh connection each
  // time, so a host that takes no new connections fails).
  std::function<Status()> probe;
};

struct HostPoolOptions {
  std::vector<PoolHost> hosts;
  // How often the background check probes every host; zero: no background check (call
  // CheckHealth yourself).
  std::chrono::milliseconds health_interval{10'000};
  // Called (without the pool's lock) when a host is taken out, with the ids of the sessions
  // it had.
  std::function<void(const std::string& host, const std::string& reason,
                     const std::vector<std::string>& sessions)>
      on_host_lost;
};

struct PoolHostStatus {
  std::string name;
  bool healthy = true;
  std::string last_error;     // of the last failed probe or open
  int running = 0;            // commands running now
  int sessions = 0;           // sessions placed here now
  uint64_t commands_run = 0;  // since the pool was created
};

class HostPool {
 public:
  // Errors: InvalidArgument (no hosts, a host without a name or open, two with one name).
  static Result<std::shared_ptr<HostPool>> Create(HostPoolOptions options);
  ~HostPool();
  HostPool(const HostPool&) = delete;
  HostPool& operator=(const HostPool&) = delete;

  // The environment of `session_id`: the same object while anyone holds it (the pool keeps
  // none; when the last holder lets go the session ends there); a new session is placed on the
  // healthy host with the fewest running commands (then the fewest sessions, then the order given),
  // trying the next when opening there fails. Errors: Unavailable (no healthy host could open a
  // session; every reason is given).
  Result<std::shared_ptr<Environment>> Acquire(const std::string& session_id);
  // Forgets the session: the next Acquire of its id places a new one.
  void Release(const std::string& session_id);

  // Probes every host now (in parallel, each bounded by its probe); takes out those that fail
  // and brings back those that pass.
  void CheckHealth();

  std::vector<PoolHostStatus> Hosts() const;

  struct State;  // internal; public so the pooled environments can reach it

 private:
  explicit HostPool(HostPoolOptions options);

  std::shared_ptr<State> state_;
  std::jthread checker_;  // the background health check; stopped first on destruction
};

}  // namespace talaria::env
