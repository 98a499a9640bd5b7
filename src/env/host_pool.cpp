// The pool of hosts: see host_pool.h. Lock order: a pooled environment's mutex, then the pool
// state's (placing a session takes both); the health check never holds the state's lock while
// it takes an environment's.
#include "talaria/env/host_pool.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <future>
#include <map>
#include <mutex>
#include <set>
#include <stop_token>
#include <thread>

namespace talaria::env {
namespace {

using namespace std::chrono_literals;

constexpr auto kProbeTimeout = 10s;

Status DefaultProbe(const PoolHost& host) {
  auto env = host.open();
  if (!env) return env.error();
  CommandOptions options;
  options.timeout = kProbeTimeout;
  auto r = (*env)->Run("true", options);
  if (!r) return r.error();
  if (r->timed_out) return UnavailableError("`true` did not finish within 10 s");
  if (r->exit_code != 0) {
    return UnavailableError("`true` exited " + std::to_string(r->exit_code) + ": " + r->output);
  }
  return Status::Ok();
}

}  // namespace

class PooledEnvironment;

struct HostPool::State {
  struct Host {
    PoolHost spec;
    bool healthy = true;     // Guarded by mu.
    std::string last_error;  // Guarded by mu.
    int sessions = 0;        // Guarded by mu.
    std::atomic<int> running{0};
    std::atomic<uint64_t> commands_run{0};
  };

  HostPoolOptions options;
  std::vector<std::unique_ptr<Host>> hosts;
  mutable std::mutex mu;
  // Weak: a session's environment goes when its last holder lets go, and its place with it.
  std::map<std::string, std::weak_ptr<PooledEnvironment>> sessions;  // Guarded by mu.

  // Opens a session on the best healthy host not in `skip`, trying the others in turn. Returns
  // the host's index and the environment; Unavailable with every reason when none opens.
  Result<std::pair<size_t, std::shared_ptr<Environment>>> Place() {
    std::set<size_t> tried;
    std::string reasons;
    while (true) {
      size_t best = hosts.size();
      {
        std::lock_guard lock(mu);
        for (size_t i = 0; i < hosts.size(); ++i) {
          const Host& h = *hosts[i];
          if (!h.healthy || tried.contains(i)) continue;
          if (best == hosts.size()) {
            best = i;
            continue;
          }
          const Host& b = *hosts[best];
          const auto key = [](const Host& x) {
            return std::make_pair(x.running.load(), x.sessions);
          };
          if (key(h) < key(b)) best = i;
        }
        if (best == hosts.size()) {
          return Err(UnavailableError(
              "pool: no healthy host could take the session" +
              (reasons.empty() ? std::string(" (every host is out of the pool)") : reasons)));
        }
        ++hosts[best]->sessions;  // counted now, so concurrent placements spread
      }
      tried.insert(best);
      auto env = hosts[best]->spec.open();
      if (env) return std::make_pair(best, std::move(*env));
      std::lock_guard lock(mu);
      --hosts[best]->sessions;
      hosts[best]->last_error = env.error().message();
      reasons += "; " + hosts[best]->spec.name + ": " + env.error().message();
    }
  }

  void Unplaced(size_t host) {
    std::lock_guard lock(mu);
    --hosts[host]->sessions;
  }
};

// A session's environment: the host's environment, re-placed once its host is taken out.
class PooledEnvironment final : public Environment {
 public:
  PooledEnvironment(std::shared_ptr<HostPool::State> state, size_t host,
                    std::shared_ptr<Environment> inner)
      : state_(std::move(state)), host_(host), inner_(std::move(inner)) {}

  ~PooledEnvironment() override {
    if (inner_) state_->Unplaced(host_);
  }

  PooledEnvironment(const PooledEnvironment&) = delete;
  PooledEnvironment& operator=(const PooledEnvironment&) = delete;

  std::string_view kind() const override { return "pool"; }
  bool RunsScriptsRemotely() const override {
    std::lock_guard lock(mu_);
    return inner_ && inner_->RunsScriptsRemotely();
  }
  std::string cwd() const override {
    std::lock_guard lock(mu_);
    return inner_ ? inner_->cwd() : std::string();
  }

  Result<CommandOutcome> Run(std::string_view command, const CommandOptions& options) override {
    auto [host, inner] = TALARIA_TRY(Current());
    HostPool::State::Host& h = *state_->hosts[host];
    ++h.running;
    auto r = inner->Run(command, options);
    --h.running;
    ++h.commands_run;
    return r;
  }

  Result<StartedProcess> Start(std::string_view command, const CommandOptions& options,
                               const StartOptions& start) override {
    auto [host, inner] = TALARIA_TRY(Current());
    return inner->Start(command, options, start);
  }

  // Marks the session lost when it is on `host`; true if it was.
  bool MarkLostIfOn(size_t host, const std::string& reason) {
    std::lock_guard lock(mu_);
    if (!inner_ || host_ != host || lost_) return false;
    lost_ = true;
    told_ = false;
    lost_reason_ = reason;
    return true;
  }

  size_t host() const {
    std::lock_guard lock(mu_);
    return host_;
  }

 private:
  // The host and environment to use now. A lost session's first call fails with the reason
  // (the model is told its shell state is gone); the next one is placed anew.
  Result<std::pair<size_t, std::shared_ptr<Environment>>> Current() {
    std::lock_guard lock(mu_);
    if (lost_ && !told_) {
      told_ = true;
      return Err(UnavailableError("pool: host '" + state_->hosts[host_]->spec.name +
                                  "' was taken out of the pool (" + lost_reason_ +
                                  "); this session's shell state there is gone. The next "
                                  "command runs on another host, in a fresh shell."));
    }
    if (lost_) {
      auto placed = TALARIA_TRY(state_->Place());
      state_->Unplaced(host_);
      host_ = placed.first;
      inner_ = std::move(placed.second);
      lost_ = false;
    }
    return std::make_pair(host_, inner_);
  }

  const std::shared_ptr<HostPool::State> state_;
  mutable std::mutex mu_;
  size_t host_;                         // Guarded by mu_.
  std::shared_ptr<Environment> inner_;  // Guarded by mu_.
  bool lost_ = false;                   // Guarded by mu_.
  bool told_ = false;                   // Guarded by mu_.
  std::string lost_reason_;             // Guarded by mu_.
};

HostPool::HostPool(HostPoolOptions options) : state_(std::make_shared<State>()) {
  for (PoolHost& h : options.hosts) {
    auto host = std::make_unique<State::Host>();
    host->spec = std::move(h);
    state_->hosts.push_back(std::move(host));
  }
  options.hosts.clear();
  state_->options = std::move(options);
}

HostPool::~HostPool() {
  checker_ = {};  // stops and joins the background check before the state can go
}

Result<std::shared_ptr<HostPool>> HostPool::Create(HostPoolOptions options) {
  if (options.hosts.empty()) return Err(InvalidArgumentError("pool: no hosts"));
  std::set<std::string> names;
  for (const PoolHost& h : options.hosts) {
    if (h.name.empty() || !h.open) {
      return Err(InvalidArgumentError("pool: every host needs a name and a way to open it"));
    }
    if (!names.insert(h.name).second) {
      return Err(InvalidArgumentError("pool: two hosts are named '" + h.name + "'"));
    }
  }
  const auto interval = options.health_interval;
  std::shared_ptr<HostPool> pool(new HostPool(std::move(options)));
  if (interval.count() > 0) {
    std::weak_ptr<HostPool> weak = pool;
    pool->checker_ = std::jthread([weak, interval](std::stop_token stop) {
      std::mutex mu;
      std::condition_variable_any cv;
      while (!stop.stop_requested()) {
        {
          std::unique_lock lock(mu);
          cv.wait_for(lock, stop, interval, [] { return false; });
        }
        if (stop.stop_requested()) return;
        if (auto p = weak.lock()) p->CheckHealth();
      }
    });
  }
  return pool;
}

Result<std::shared_ptr<Environment>> HostPool::Acquire(const std::string& session_id) {
  {
    std::lock_guard lock(state_->mu);
    if (auto it = state_->sessions.find(session_id); it != state_->sessions.end()) {
      if (auto env = it->second.lock()) return std::shared_ptr<Environment>(std::move(env));
    }
  }
  auto placed = TALARIA_TRY(state_->Place());
  auto env = std::make_shared<PooledEnvironment>(state_, placed.first, std::move(placed.second));
  std::shared_ptr<PooledEnvironment> winner;
  {
    std::lock_guard lock(state_->mu);
    // Two first calls for one session at once: the first to get here wins, the other's goes
    // (after the lock: its destructor takes it).
    std::weak_ptr<PooledEnvironment>& slot = state_->sessions[session_id];
    winner = slot.lock();
    if (!winner) {
      slot = env;
      winner = env;
    }
  }
  return std::shared_ptr<Environment>(std::move(winner));
}

void HostPool::Release(const std::string& session_id) {
  std::lock_guard lock(state_->mu);
  state_->sessions.erase(session_id);
}

void HostPool::CheckHealth() {
  const size_t n = state_->hosts.size();
  std::vector<std::future<Status>> probes;
  probes.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const PoolHost& spec = state_->hosts[i]->spec;
    probes.push_back(std::async(
        std::launch::async, [&spec] { return spec.probe ? spec.probe() : DefaultProbe(spec); }));
  }
  std::vector<std::pair<size_t, std::string>> lost;
  std::vector<std::pair<std::string, std::shared_ptr<PooledEnvironment>>> sessions;
  {
    std::vector<Status> results;
    for (auto& p : probes) results.push_back(p.get());
    std::lock_guard lock(state_->mu);
    for (size_t i = 0; i < n; ++i) {
      State::Host& h = *state_->hosts[i];
      if (results[i].ok()) {
        h.healthy = true;
        continue;
      }
      h.last_error = results[i].message();
      if (h.healthy) lost.emplace_back(i, h.last_error);
      h.healthy = false;
    }
    for (auto it = state_->sessions.begin(); it != state_->sessions.end();) {
      if (auto env = it->second.lock()) {
        if (!lost.empty()) sessions.emplace_back(it->first, std::move(env));
        ++it;
      } else {
        it = state_->sessions.erase(it);  // its holders are gone
      }
    }
  }
  for (const auto& [host, reason] : lost) {
    std::vector<std::string> told;
    for (const auto& [id, env] : sessions) {
      if (env->MarkLostIfOn(host, reason)) told.push_back(id);
    }
    if (state_->options.on_host_lost) {
      state_->options.on_host_lost(state_->hosts[host]->spec.name, reason, told);
    }
  }
}

std::vector<PoolHostStatus> HostPool::Hosts() const {
  std::vector<PoolHostStatus> out;
  std::lock_guard lock(state_->mu);
  for (const auto& h : state_->hosts) {
    PoolHostStatus s;
    s.name = h->spec.name;
    s.healthy = h->healthy;
    s.last_error = h->last_error;
    s.running = h->running.load();
    s.sessions = h->sessions;
    s.commands_run = h->commands_run.load();
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace talaria::env
