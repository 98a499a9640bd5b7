// A training run's supervisor (training_run.h).
#include "rl/training_run.h"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ranges>
#include <string>
#include <utility>

#include "talaria/base/file_io.h"
#include "talaria/base/spawn.h"
#include "talaria/base/unique_fd.h"

namespace talaria::rl {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

constexpr milliseconds kPollInterval{100};

std::string RoleTitle(std::string_view role) {
  if (role == "api") return "API server";
  if (role == "trainer") return "Trainer";
  if (role == "env") return "Environment";
  return std::string(role);
}

// Exit status as a shell shows it (128 + signal when killed).
int ExitCodeOf(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return -1;
}

}  // namespace

struct TrainingRun::Child {
  ProcessPlan plan;
  StartedProcess proc;
  UniqueFd log;
  bool exited = false;
  int exit_code = 0;
};

std::string_view RunStatusName(RunStatus s) {
  switch (s) {
    case RunStatus::kStarting:
      return "starting";
    case RunStatus::kRunning:
      return "running";
    case RunStatus::kStopped:
      return "stopped";
    case RunStatus::kCompleted:
      return "completed";
    case RunStatus::kFailed:
      return "failed";
  }
  return "unknown";
}

std::pair<std::string, int> HostPortOf(std::string_view url) {
  const size_t scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos) return {"", 0};
  const std::string_view scheme = url.substr(0, scheme_end);
  std::string_view rest = url.substr(scheme_end + 3);
  rest = rest.substr(0, rest.find_first_of("/?#"));
  int port = scheme == "https" ? 443 : 80;
  std::string host(rest);
  if (!rest.empty() && rest[0] == '[') {  // [::1]:8000
    const size_t close = rest.find(']');
    if (close == std::string_view::npos) return {"", 0};
    host = std::string(rest.substr(1, close - 1));
    rest = rest.substr(close + 1);
    if (!rest.empty() && rest[0] != ':') return {"", 0};
    if (!rest.empty())
      rest = rest.substr(1);
    else
      rest = {};
    if (!rest.empty()) port = 0;
  } else if (const size_t colon = rest.rfind(':'); colon != std::string_view::npos) {
    host = std::string(rest.substr(0, colon));
    rest = rest.substr(colon + 1);
    port = 0;
  } else {
    rest = {};
  }
  if (!rest.empty()) {
    if (rest.size() > 5) return {"", 0};
    for (char c : rest) {
      if (c < '0' || c > '9') return {"", 0};
      port = port * 10 + (c - '0');
    }
  }
  if (host.empty() || port <= 0 || port > 65535) return {"", 0};
  return {host, port};
}

bool PortAccepts(const std::string& host, int port, milliseconds wait) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0) return false;
  bool accepted = false;
  for (addrinfo* a = found; a != nullptr && !accepted; a = a->ai_next) {
    UniqueFd fd(::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!fd.valid()) continue;
    if (::connect(fd.get(), a->ai_addr, a->ai_addrlen) == 0) {
      accepted = true;
      break;
    }
    if (errno != EINPROGRESS) continue;
    pollfd p{fd.get(), POLLOUT, 0};
    if (::poll(&p, 1, static_cast<int>(wait.count())) != 1) continue;
    int err = 0;
    socklen_t len = sizeof err;
    accepted = ::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0;
  }
  ::freeaddrinfo(found);
  return accepted;
}

TrainingRun::TrainingRun(RunPlan plan) : plan_(std::move(plan)) {
  thread_ = std::jthread([this](const std::stop_token& stop) { Supervise(stop); });
}

TrainingRun::~TrainingRun() { Stop(); }

RunSnapshot TrainingRun::Snapshot() const {
  std::lock_guard lock(mu_);
  RunSnapshot s;
  s.status = status_;
  s.error = error_;
  if (running_since_ != Clock::time_point{}) {
    s.running_minutes = std::chrono::duration<double>(Clock::now() - running_since_).count() / 60.0;
  }
  for (const ProcessPlan& p : plan_.processes) {
    ProcessState ps{p.role, "not started", -1};
    for (const auto& c : children_) {
      if (c->plan.role != p.role) continue;
      ps.pid = c->proc.pid;
      ps.state = c->exited ? "exited (" + std::to_string(c->exit_code) + ")" : "running";
    }
    s.processes.push_back(std::move(ps));
  }
  return s;
}

void TrainingRun::Stop() {
  std::lock_guard stop_lock(stop_mu_);
  if (thread_.joinable()) {
    thread_.request_stop();
    thread_.join();
  }
}

bool TrainingRun::SpawnNext() {
  const size_t index = children_.size();
  const ProcessPlan& p = plan_.processes[index];
  auto child = std::make_unique<Child>();
  child->plan = p;
  child->log = UniqueFd(::open(p.log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  SpawnOptions options;
  options.argv = p.argv;
  options.cwd = plan_.cwd;
  auto started = StartProcess(options, StartOptions{});
  if (!started) {
    Fail(RoleTitle(p.role) + " could not start: " + started.error().message());
    return false;
  }
  child->proc = std::move(*started);
  std::lock_guard lock(mu_);
  children_.push_back(std::move(child));
  return true;
}

void TrainingRun::Fail(std::string message) {
  std::lock_guard lock(mu_);
  if (status_ == RunStatus::kStarting || status_ == RunStatus::kRunning) {
    status_ = RunStatus::kFailed;
    error_ = std::move(message);
  }
}

void TrainingRun::DrainOutputs() {
  std::string chunk;
  for (const auto& c : children_) {
    if (!c->proc.output.valid()) continue;
    chunk.clear();
    const bool open = ReadAvailable(c->proc.output.get(), chunk);
    if (!chunk.empty() && c->log.valid()) (void)WriteAll(c->log.get(), chunk);
    if (!open) c->proc.output.reset();
  }
}

bool TrainingRun::ReapExited() {
  bool any = false;
  for (const auto& c : children_) {
    if (c->exited) continue;
    int status = 0;
    const pid_t r = ::waitpid(c->proc.pid, &status, WNOHANG);
    if (r != c->proc.pid) continue;
    std::lock_guard lock(mu_);
    c->exited = true;
    c->exit_code = ExitCodeOf(status);
    any = true;
  }
  return any;
}

void TrainingRun::EndAll() {
  // Reverse order: the environment feeds the API, the trainer reads it.
  for (auto& child : std::ranges::reverse_view(children_)) {
    Child& c = *child;
    if (c.exited) {
      // The leader is gone; what it started may not be. Its group id stays taken while any
      // member lives, so this reaches only them.
      ::kill(-c.proc.pid, SIGKILL);
      continue;
    }
    TerminateProcessGroup(c.proc.pid, c.proc.pidfd.get(),
                          std::chrono::duration_cast<milliseconds>(plan_.stop_grace));
    int status = 0;
    while (::waitpid(c.proc.pid, &status, 0) < 0 && errno == EINTR) {
    }
    std::lock_guard lock(mu_);
    c.exited = true;
    c.exit_code = ExitCodeOf(status);
  }
  DrainOutputs();
}

void TrainingRun::FinishAfterExit() {
  const bool was_running = Snapshot().status == RunStatus::kRunning;
  // The environment first, as the original looked: its clean exit is a finished run.
  const Child* first = nullptr;
  for (auto it = children_.rbegin(); it != children_.rend() && first == nullptr; ++it) {
    if ((*it)->exited) first = it->get();
  }
  RunStatus final_status = RunStatus::kFailed;
  std::string message;
  const std::string title = RoleTitle(first->plan.role);
  const std::string code = std::to_string(first->exit_code);
  if (!was_running) {
    message = title + " exited with code " + code + ". Check " + first->plan.log_path;
  } else if (first->plan.role == "api") {
    message = "API server exited unexpectedly";
  } else if (first->exit_code == 0) {
    final_status = RunStatus::kCompleted;
  } else {
    message = title + " process exited with code " + code;
  }
  EndAll();
  std::lock_guard lock(mu_);
  if (status_ == RunStatus::kStarting || status_ == RunStatus::kRunning) {
    status_ = final_status;
    error_ = std::move(message);
  }
}

void TrainingRun::Supervise(const std::stop_token& stop) {
  if (!SpawnNext()) return;
  Clock::time_point phase_deadline = Clock::now() + plan_.startup_timeout;
  while (!stop.stop_requested()) {
    std::vector<pollfd> fds;
    for (const auto& c : children_) {
      if (c->proc.output.valid()) fds.push_back({c->proc.output.get(), POLLIN, 0});
    }
    (void)::poll(fds.data(), fds.size(), static_cast<int>(kPollInterval.count()));
    DrainOutputs();
    if (ReapExited()) {
      FinishAfterExit();
      return;
    }
    Child& last = *children_.back();
    const bool ready = last.plan.ready_port == 0 ||
                       PortAccepts(last.plan.ready_host, last.plan.ready_port, kPollInterval);
    if (ready) {
      if (children_.size() == plan_.processes.size()) {
        std::lock_guard lock(mu_);
        if (status_ == RunStatus::kStarting) {
          status_ = RunStatus::kRunning;
          running_since_ = Clock::now();
        }
        continue;
      }
      if (!SpawnNext()) {
        EndAll();
        return;
      }
      phase_deadline = Clock::now() + plan_.startup_timeout;
    } else if (Clock::now() > phase_deadline) {
      Fail(RoleTitle(last.plan.role) + " did not accept connections on " + last.plan.ready_host +
           ":" + std::to_string(last.plan.ready_port) + " within " +
           std::to_string(plan_.startup_timeout.count()) + " s. Check " + last.plan.log_path);
      EndAll();
      return;
    }
  }
  EndAll();
  std::lock_guard lock(mu_);
  if (status_ == RunStatus::kStarting || status_ == RunStatus::kRunning) {
    status_ = RunStatus::kStopped;
  }
}

}  // namespace talaria::rl
