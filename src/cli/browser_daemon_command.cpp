// browser_daemon.h, the daemon side: `talaria browser-daemon --task T`, started by the first
// `talaria call browser_*` of a task. It serves the browser tools of that task to clients of
// our own uid until its browser is gone (browser_close, the idle reaper), SIGTERM/SIGINT, or its
// socket path no longer names its socket.
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/browser_daemon.h"
#include "cli/cli_session.h"
#include "cli/signal_watch.h"
#include "cli/unix_socket.h"
#include "talaria/browser/browser_sessions.h"
#include "talaria/core/dispatcher.h"
#include "talaria/core/runtime.h"
#include "talaria/core/tool_entry.h"

namespace talaria::cli {
namespace {

using std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr size_t kMaxRequestBytes = 16u << 20;
constexpr auto kRequestWait = 30s;    // from the greeting to the whole request
constexpr auto kAnswerWait = 60s;     // a client that stops reading our answer
constexpr auto kFirstCallWait = 60s;  // started, but nobody came: end
constexpr size_t kMaxConnections = 32;

// One accepted connection, served on a thread of its own; the main loop watches it for the
// client's hang-up (Ctrl-C on `talaria call`) and cancels the call then.
struct Connection {
  UniqueFd fd;
  std::stop_source cancel;
  std::atomic<bool> done{false};
  std::jthread worker;
};

class Daemon {
 public:
  Daemon(const BrowserDaemonOptions& options, BrowserDaemonPaths paths, Runtime& rt,
         std::shared_ptr<tools::Session> session, UniqueFd listener, ino_t socket_inode)
      : options_(options),
        paths_(std::move(paths)),
        rt_(rt),
        session_(std::move(session)),
        listener_(std::move(listener)),
        socket_inode_(socket_inode),
        wake_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)),
        body_(rt.registry(), rt.dispatcher().options()),
        env_(BrowserEnvironmentDigest()) {}

  void Run(const SignalWatch& signals) {
    const auto started = steady_clock::now();
    for (;;) {
      if (signals.received() != 0) break;
      Prune();
      if (connections_.empty()) {
        if (served_.load() > 0 && browser::BrowserSessionCount() == 0) break;  // closed or idle
        if (served_.load() == 0 && steady_clock::now() - started > kFirstCallWait) break;
        if (!SocketStillOurs()) break;  // replaced or removed: nobody can reach us any more
      }
      std::vector<pollfd> fds;
      fds.push_back({.fd = listener_.get(), .events = POLLIN, .revents = 0});
      fds.push_back({.fd = wake_.get(), .events = POLLIN, .revents = 0});
      std::vector<Connection*> watched;  // a cancelled one is not watched again (no spin)
      for (auto& c : connections_) {
        if (c->cancel.stop_requested()) continue;
        fds.push_back({.fd = c->fd.get(), .events = POLLRDHUP, .revents = 0});
        watched.push_back(c.get());
      }
      const int n = ::poll(fds.data(), fds.size(), 200);
      if (n <= 0) continue;
      if ((fds[1].revents & POLLIN) != 0) {
        uint64_t drained = 0;
        while (::read(wake_.get(), &drained, sizeof(drained)) > 0) {
        }
      }
      for (size_t i = 2; i < fds.size(); ++i) {
        if ((fds[i].revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0) {
          watched[i - 2]->cancel.request_stop();
        }
      }
      if ((fds[0].revents & POLLIN) != 0) AcceptAll();
    }
    Shutdown();
  }

 private:
  void AcceptAll() {
    for (;;) {
      UniqueFd fd(::accept4(listener_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
      if (!fd) return;  // EAGAIN: none left; anything else: try again on the next wake
      auto peer = PeerOf(fd.get());
      if (!peer || peer->uid != ::geteuid()) {
        std::fprintf(stderr, "talaria browser-daemon: refused a peer of uid %d\n",
                     peer ? static_cast<int>(peer->uid) : -1);
        continue;
      }
      auto c = std::make_unique<Connection>();
      c->fd = std::move(fd);
      Connection* raw = c.get();
      const bool busy = connections_.size() >= kMaxConnections;
      c->worker = std::jthread([this, raw, busy] {
        Serve(*raw, busy);
        raw->done.store(true);
        const uint64_t one = 1;
        [[maybe_unused]] const ssize_t w = ::write(wake_.get(), &one, sizeof(one));
      });
      connections_.push_back(std::move(c));
    }
  }

  void Serve(Connection& c, bool busy) {
    const Json hello = {{"daemon", kBrowserDaemonGreeting},
                        {"protocol", kBrowserDaemonProtocol},
                        {"pid", ::getpid()}};
    if (!SendFrame(c.fd.get(), DumpJson(hello), steady_clock::now() + kRequestWait).ok()) return;
    auto frame = ReceiveFrame(c.fd.get(), kMaxRequestBytes, steady_clock::now() + kRequestWait);
    if (!frame) return;  // a probe (a starter checking we listen) or a client that gave up
    ToolResult result = Handle(*frame, c.cancel.get_token(), busy);
    if (Status s =
            SendFrame(c.fd.get(), EncodeDaemonResult(result), steady_clock::now() + kAnswerWait);
        !s.ok()) {
      std::fprintf(stderr, "talaria browser-daemon: answer lost: %s\n", s.message().c_str());
    }
  }

  ToolResult Handle(const std::string& frame, std::stop_token cancel, bool busy) {
    auto request = DecodeDaemonRequest(frame);
    if (!request) return ToolResult::Error(request.error().message());
    served_.fetch_add(1);
    if (busy) return ToolResult::Error("the browser daemon is serving too many calls; try again");
    if (request->config != options_.config_path) {
      return ToolResult::Error("the browser of task '" + options_.task + "' runs with config '" +
                               (options_.config_path.empty() ? "default" : options_.config_path) +
                               "'; call browser_close first, or use another --task");
    }
    if (const auto differ = EnvironmentDifferences(request->env, env_); !differ.empty()) {
      std::string names;
      for (const std::string& n : differ) names += (names.empty() ? "" : ", ") + n;
      return ToolResult::Error("the browser of task '" + options_.task +
                               "' was started with another " + names +
                               " in its environment; call browser_close first, or use another "
                               "--task");
    }
    const auto entry = rt_.registry().Resolve(request->tool);
    if (entry == nullptr || entry->toolset() != "browser") {
      return ToolResult::Error("the browser daemon runs only browser tools, not '" + request->tool +
                               "'");
    }
    ToolContext ctx = session_->NewContext(
        "daemon_" + std::to_string(::getpid()) + "_" + std::to_string(served_.load()),
        options_.task);
    ctx.cancel = std::move(cancel);
    // The caller ran the policy and the hooks (browser_daemon.h): here only validation and the
    // tool itself, through a dispatcher that has neither.
    return body_.DispatchArgs(request->tool, std::move(request->arguments), ctx);
  }

  void Prune() {
    std::erase_if(connections_, [](const std::unique_ptr<Connection>& c) {
      return c->done.load();  // its worker has returned: the jthread joins at once
    });
  }

  bool SocketStillOurs() const {
    struct stat st {};
    return ::lstat(paths_.socket.c_str(), &st) == 0 && st.st_ino == socket_inode_;
  }

  void Shutdown() {
    // First the name, so the next client starts a new daemon rather than queue on this one.
    if (SocketStillOurs()) ::unlink(paths_.socket.c_str());
    listener_.reset();
    for (auto& c : connections_) c->cancel.request_stop();
    connections_.clear();  // joins the workers; their calls end by the cancel
    browser::CloseAllBrowserSessions();
    std::ifstream pid_in(paths_.pid);
    long recorded = 0;
    if (pid_in >> recorded && recorded == ::getpid()) ::unlink(paths_.pid.c_str());
  }

  const BrowserDaemonOptions& options_;
  BrowserDaemonPaths paths_;
  Runtime& rt_;
  std::shared_ptr<tools::Session> session_;
  UniqueFd listener_;
  ino_t socket_inode_;
  UniqueFd wake_;
  Dispatcher body_;  // no policy, no hooks: the caller's dispatcher ran them
  const Json env_;   // the environment the browser is made from (its starter's)
  std::atomic<int64_t> served_{0};
  std::vector<std::unique_ptr<Connection>> connections_;
};

// Tells the starter how it went (when one waits) and closes the pipe.
void Report(UniqueFd& ready, const std::string& word) {
  if (!ready) return;
  const std::string line = word + "\n";
  [[maybe_unused]] const ssize_t w = ::write(ready.get(), line.data(), line.size());
  ready.reset();
}

int Fail(UniqueFd& ready, const std::string& why) {
  std::fprintf(stderr, "talaria browser-daemon: %s\n", why.c_str());
  Report(ready, "error: " + why);
  return 1;
}

}  // namespace

int RunBrowserDaemon(const BrowserDaemonOptions& options) {
  UniqueFd ready(options.ready_fd);
  // Before any thread: SIGINT/SIGTERM become a clean end (the browser closed, the socket gone).
  SignalWatch signals([](int) {}, {});
  auto paths = BrowserDaemonPathsFor(options.task);
  if (!paths) return Fail(ready, paths.error().message());
  if (Status s = EnsurePrivateDirectory(paths->dir); !s.ok()) return Fail(ready, s.message());

  RuntimeOptions runtime_options;
  runtime_options.config_path = options.config_path;
  auto rt = Runtime::Create(runtime_options);
  if (!rt) return Fail(ready, rt.error().message());
  std::shared_ptr<tools::Session> session = OpenCliSession(**rt, {}, "browser-daemon");
  if (!session) return Fail(ready, "cannot open a tool session");

  auto listener = ListenUnixSocket(paths->socket);
  if (!listener && listener.error().code() == StatusCode::kAlreadyExists) {
    // Started by hand over a dead daemon's socket: replace it only when nobody listens.
    auto probe = ConnectUnixSocket(paths->socket);
    if (probe) return Fail(ready, "a browser daemon already serves task " + options.task);
    ::unlink(paths->socket.c_str());
    listener = ListenUnixSocket(paths->socket);
  }
  if (!listener) return Fail(ready, listener.error().message());
  struct stat st {};
  if (::lstat(paths->socket.c_str(), &st) != 0) return Fail(ready, "the socket vanished");
  {
    const std::string tmp = paths->pid + ".tmp";
    std::ofstream(tmp) << ::getpid() << "\n";
    std::error_code ec;
    std::filesystem::rename(tmp, paths->pid, ec);
  }
  std::fprintf(stderr, "talaria browser-daemon: pid %d serving task %s at %s\n", ::getpid(),
               options.task.c_str(), paths->socket.c_str());
  Daemon daemon(options, *paths, **rt, std::move(session), std::move(*listener), st.st_ino);
  Report(ready, "ready");
  daemon.Run(signals);
  std::fprintf(stderr, "talaria browser-daemon: pid %d ended\n", ::getpid());
  return 0;
}

}  // namespace talaria::cli
