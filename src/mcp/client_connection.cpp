#include "mcp/client_connection.h"

#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <nlohmann/json.hpp>
#include <utility>

#include "talaria/base/child_exit.h"
#include "talaria/base/executor.h"
#include "talaria/base/file_io.h"
#include "talaria/base/log.h"
#include "talaria/base/scoped_sigpipe_block.h"
#include "talaria/base/spawn.h"
#include "talaria/base/spawn_child.h"

namespace talaria::mcp::client_internal {
namespace {

constexpr size_t kStderrTailBytes = 4096;
constexpr size_t kReadChunk = 64 * 1024;

}  // namespace

Result<Json> ResultOfResponse(const Json& doc) {
  if (auto err = doc.find("error"); err != doc.end()) {
    std::string message = "JSON-RPC error";
    int64_t code = 0;
    if (err->is_object()) {
      if (auto m = err->find("message"); m != err->end() && m->is_string()) {
        message = m->get<std::string>();
      }
      if (auto c = err->find("code"); c != err->end() && c->is_number_integer()) {
        code = c->get<int64_t>();
      }
    }
    message += " (code ";
    message += std::to_string(code);
    message += ")";
    return Err(FailedPreconditionError(message));
  }
  auto res = doc.find("result");
  if (res == doc.end()) return Json::object();
  return *res;
}

Result<std::unique_ptr<StdioConnection>> StdioConnection::Start(
    const std::vector<std::string>& argv, const std::vector<std::string>& env,
    ConnectionCallbacks callbacks) {
  SpawnOptions options;
  options.argv = argv;
  options.env = env;
  UniqueFd in_r, in_w, out_r, out_w, err_r, err_w;
  TALARIA_RETURN_IF_ERROR(base_internal::MakePipe(in_r, in_w));
  TALARIA_RETURN_IF_ERROR(base_internal::MakePipe(out_r, out_w));
  TALARIA_RETURN_IF_ERROR(base_internal::MakePipe(err_r, err_w));
  base_internal::ChildStdio stdio;
  stdio.stdin_fd = in_r.get();
  stdio.stdout_fd = out_w.get();
  stdio.stderr_fd = err_w.get();
  const pid_t pid = TALARIA_TRY(base_internal::SpawnChild(options, stdio));

  std::unique_ptr<StdioConnection> conn(new StdioConnection());
  conn->pid_ = pid;
  conn->pidfd_.reset(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  conn->callbacks_ = std::move(callbacks);
  conn->in_fd_ = std::move(in_w);
  conn->out_fd_ = std::move(out_r);
  conn->err_fd_ = std::move(err_r);
  in_r.reset();
  out_w.reset();
  err_w.reset();
  conn->wake_.reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  Status s = base_internal::SetNonBlocking(conn->out_fd_.get());
  if (s.ok()) s = base_internal::SetNonBlocking(conn->err_fd_.get());
  if (s.ok() && !conn->wake_) s = base_internal::ErrnoStatus(errno, "eventfd");
  if (!s.ok()) {
    conn->Close(std::chrono::milliseconds(0));
    return Err(s);
  }
  StdioConnection* raw = conn.get();
  conn->reader_ = std::jthread([raw](const std::stop_token& stop) { raw->ReaderLoop(stop); });
  return conn;
}

StdioConnection::~StdioConnection() { Close(std::chrono::milliseconds(500)); }

bool StdioConnection::closed() const {
  std::lock_guard lock(mu_);
  return closed_;
}

std::string StdioConnection::StderrTail() const {
  std::lock_guard lock(mu_);
  return stderr_tail_;
}

std::string StdioConnection::ExitDescription() const {
  std::lock_guard lock(mu_);
  return exit_description_;
}

bool StdioConnection::WriteLine(std::string_view line) {
  std::string framed;
  framed.reserve(line.size() + 1);
  framed.append(line);
  framed.push_back('\n');
  std::lock_guard lock(write_mu_);
  if (!in_fd_) return false;
  // FIXME: a server that stops reading its stdin blocks this write once the pipe is full.
  // SIGPIPE blocked meanwhile: a dead server must not kill talaria.
  ScopedSigpipeBlock no_sigpipe;
  if (!WriteAll(in_fd_.get(), framed).ok()) {
    in_fd_.reset();
    return false;
  }
  return true;
}

Result<Json> StdioConnection::Call(std::string_view method, Json params, TimePoint deadline,
                                   std::stop_token cancel) {
  std::future<Result<Json>> future;
  int64_t id = 0;
  {
    std::lock_guard lock(mu_);
    if (closed_) return Err(UnavailableError("the server connection is closed"));
    id = next_id_++;
    future = pending_[id].get_future();
  }
  Json request = {{"jsonrpc", "2.0"}, {"id", id}, {"method", std::string(method)}};
  if (!params.is_null()) request["params"] = std::move(params);
  if (!WriteLine(DumpJson(request))) {
    std::lock_guard lock(mu_);
    pending_.erase(id);
    return Err(UnavailableError("writing to the server failed (its stdin is closed)"));
  }
  const WaitResult waited = Executor::WaitFor(future, deadline, std::move(cancel));
  if (waited == WaitResult::kReady) return future.get();
  {
    std::lock_guard lock(mu_);
    pending_.erase(id);
  }
  const bool timed_out = waited == WaitResult::kTimedOut;
  (void)Notify("notifications/cancelled",
               Json{{"requestId", id}, {"reason", timed_out ? "timed out" : "cancelled"}});
  if (timed_out) {
    return Err(DeadlineExceededError(std::string(method) + " timed out"));
  }
  return Err(CancelledError(std::string(method) + " was cancelled"));
}

Status StdioConnection::Notify(std::string_view method, const Json& params) {
  if (closed()) return UnavailableError("the server connection is closed");
  const std::string line = params.is_null()
                               ? DumpJson(Json{{"jsonrpc", "2.0"}, {"method", std::string(method)}})
                               : EncodeNotification(method, params);
  if (!WriteLine(line)) return UnavailableError("writing to the server failed");
  return {};
}

void StdioConnection::FailPending(const Status& status) {
  std::map<int64_t, std::promise<Result<Json>>> pending;
  {
    std::lock_guard lock(mu_);
    pending.swap(pending_);
  }
  for (auto& [id, promise] : pending) promise.set_value(Err(status));
}

void StdioConnection::HandleLine(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.find_first_not_of(" \t") == std::string_view::npos) return;
  Decoded decoded = DecodeMessage(line);
  if (!decoded.ok()) {
    LogWarn("mcp client: ignoring a malformed message from the server: " + decoded.error.message);
    return;
  }
  const Message& msg = *decoded.message;
  switch (msg.kind) {
    case MessageKind::kResponse: {
      const Json& id = msg.id();
      if (!id.is_number_integer()) return;
      std::promise<Result<Json>> promise;
      {
        std::lock_guard lock(mu_);
        auto it = pending_.find(id.get<int64_t>());
        if (it == pending_.end()) return;  // cancelled or timed out meanwhile
        promise = std::move(it->second);
        pending_.erase(it);
      }
      promise.set_value(ResultOfResponse(*msg.doc));
      return;
    }
    case MessageKind::kRequest:
      // The client offers no capabilities, so only ping is served.
      if (msg.method == "ping") {
        (void)WriteLine(EncodeResult(msg.id(), Json::object()));
      } else {
        (void)WriteLine(EncodeError(&msg.id(), kMethodNotFound, "Method not found: " + msg.method));
      }
      return;
    case MessageKind::kNotification:
      if (callbacks_.on_notification) callbacks_.on_notification(msg.method, msg.params());
      return;
  }
}

void StdioConnection::ReaderLoop(const std::stop_token& stop) {
  std::string buffer;
  bool discarding = false;  // inside a line over the size cap
  bool out_open = true;
  bool err_open = true;
  std::vector<char> chunk(kReadChunk);
  while (out_open && !stop.stop_requested()) {
    pollfd fds[3] = {{out_fd_.get(), POLLIN, 0},
                     {err_open ? err_fd_.get() : -1, POLLIN, 0},
                     {wake_.get(), POLLIN, 0}};
    const int ready = ::poll(fds, 3, 1000);
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
    if (fds[2].revents != 0) break;  // Close
    if (fds[1].revents != 0) {
      const ssize_t n = ::read(err_fd_.get(), chunk.data(), chunk.size());
      if (n > 0) {
        std::lock_guard lock(mu_);
        stderr_tail_.append(chunk.data(), static_cast<size_t>(n));
        if (stderr_tail_.size() > kStderrTailBytes) {
          stderr_tail_.erase(0, stderr_tail_.size() - kStderrTailBytes);
        }
      } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
        err_open = false;
      }
    }
    if (fds[0].revents == 0) continue;
    for (;;) {
      const ssize_t n = ::read(out_fd_.get(), chunk.data(), chunk.size());
      if (n == 0) {
        out_open = false;
        break;
      }
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno != EAGAIN) out_open = false;
        break;
      }
      std::string_view data(chunk.data(), static_cast<size_t>(n));
      while (!data.empty()) {
        const size_t nl = data.find('\n');
        const std::string_view piece = data.substr(0, nl);
        if (!discarding) buffer.append(piece);
        if (buffer.size() > kDefaultMaxMessageBytes) {
          LogWarn("mcp client: dropping a message over the size cap");
          buffer.clear();
          discarding = true;
        }
        if (nl == std::string_view::npos) break;
        if (!discarding) HandleLine(buffer);
        buffer.clear();
        discarding = false;
        data.remove_prefix(nl + 1);
      }
    }
  }
  if (!out_open) {
    // The server is gone (or closed stdout): peek at how it ended without reaping it.
    if (pidfd_) {
      pollfd p{pidfd_.get(), POLLIN, 0};
      ::poll(&p, 1, 200);
    }
    siginfo_t info{};
    if (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
        info.si_pid == pid_) {
      std::lock_guard lock(mu_);
      exit_description_ = DescribeChildExit(info);
    }
    // Whatever is left on stderr explains the exit.
    for (;;) {
      const ssize_t n = ::read(err_fd_.get(), chunk.data(), chunk.size());
      if (n <= 0) break;
      std::lock_guard lock(mu_);
      stderr_tail_.append(chunk.data(), static_cast<size_t>(n));
      if (stderr_tail_.size() > kStderrTailBytes) {
        stderr_tail_.erase(0, stderr_tail_.size() - kStderrTailBytes);
      }
    }
  }
  {
    std::lock_guard lock(mu_);
    closed_ = true;
  }
  std::string why = ExitDescription();
  FailPending(
      UnavailableError(why.empty() ? "the server connection closed" : "the server process " + why));
  if (!out_open && callbacks_.on_closed) callbacks_.on_closed();
}

void StdioConnection::Reap(bool block) {
  {
    std::lock_guard lock(mu_);
    if (reaped_ || pid_ <= 0) return;
  }
  siginfo_t info{};
  int rc;
  do {
    rc = ::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | (block ? 0 : WNOHANG));
  } while (rc < 0 && errno == EINTR);
  std::lock_guard lock(mu_);
  if (rc == 0 && info.si_pid == pid_) {
    reaped_ = true;
    if (exit_description_.empty()) exit_description_ = DescribeChildExit(info);
  } else if (rc < 0) {
    reaped_ = true;  // ECHILD: nothing to reap
  }
}

void StdioConnection::Close(std::chrono::milliseconds grace) {
  std::lock_guard close_lock(close_mu_);
  {
    std::lock_guard lock(write_mu_);
    in_fd_.reset();  // EOF on the server's stdin: the polite way to ask it to exit
  }
  if (pid_ > 0) {
    bool reaped;
    {
      std::lock_guard lock(mu_);
      reaped = reaped_;
    }
    if (!reaped) {
      if (pidfd_ && grace.count() > 0) {
        pollfd p{pidfd_.get(), POLLIN, 0};
        ::poll(&p, 1, static_cast<int>(grace.count()));
      }
      TerminateProcessGroup(pid_, pidfd_.get(), std::chrono::milliseconds(1000));
    }
  }
  if (wake_) {
    const uint64_t one = 1;
    (void)!::write(wake_.get(), &one, sizeof(one));
  }
  if (reader_.joinable()) {
    reader_.request_stop();
    if (reader_.get_id() != std::this_thread::get_id()) reader_.join();
  }
  Reap(/*block=*/true);
  {
    std::lock_guard lock(mu_);
    closed_ = true;
  }
  FailPending(UnavailableError("the server connection is closed"));
}

}  // namespace talaria::mcp::client_internal
