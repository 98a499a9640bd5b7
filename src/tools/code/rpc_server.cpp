#include "tools/code/rpc_server.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "talaria/base/file_io.h"
#include "talaria/base/poll_timeout.h"
#include "tools/code/rpc_frame.h"

namespace talaria::tools::code {
namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kReadChunk = size_t{64} * 1024;
// Bytes a not-yet-authenticated sender may have pending: a hello frame is a few dozen.
constexpr size_t kMaxPreAuthBytes = 4096;
// Senders tracked before authentication (a script forking writers cannot grow the map forever).
constexpr size_t kMaxPreAuthSenders = 16;
// Ancestry hops from the hello's sender to our child (python <- bwrap's init <- bwrap).
constexpr int kMaxAncestryHops = 8;
// How long a hello may wait for ExpectChild (the spawn returns long before python runs).
constexpr std::chrono::seconds kExpectChildWait{2};

// The parent pid of `pid` from /proc/<pid>/stat, or nullopt when it is gone.
std::optional<pid_t> ParentOf(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string stat = ss.str();
  // "pid (comm) S ppid ...": comm may contain spaces and parentheses, so parse after the last ')'.
  const size_t close = stat.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream rest(stat.substr(close + 1));
  std::string state;
  long long ppid = 0;
  if (!(rest >> state >> ppid)) return std::nullopt;
  return static_cast<pid_t>(ppid);
}

bool IsSelfOrDescendant(pid_t pid, pid_t ancestor) {
  for (int hop = 0; hop <= kMaxAncestryHops && pid > 1; ++hop) {
    if (pid == ancestor) return true;
    auto parent = ParentOf(pid);
    if (!parent) return false;
    pid = *parent;
  }
  return false;
}

}  // namespace

Result<std::unique_ptr<RpcServer>> RpcServer::Start(UniqueFd socket, RpcHandler handler,
                                                    Clock::time_point deadline) {
  const int one = 1;
  if (::setsockopt(socket.get(), SOL_SOCKET, SO_PASSCRED, &one, sizeof one) != 0) {
    return Err(
        InternalError(std::string("execute_code RPC: SO_PASSCRED: ") + std::strerror(errno)));
  }
  const int flags = ::fcntl(socket.get(), F_GETFL);
  if (flags < 0 || ::fcntl(socket.get(), F_SETFL, flags | O_NONBLOCK) != 0) {
    return Err(InternalError(std::string("execute_code RPC: O_NONBLOCK: ") + std::strerror(errno)));
  }
  UniqueFd wake(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!wake)
    return Err(InternalError(std::string("execute_code RPC: eventfd: ") + std::strerror(errno)));
  std::unique_ptr<RpcServer> server(
      new RpcServer(std::move(socket), std::move(wake), std::move(handler), deadline));
  server->reader_ =
      std::jthread([s = server.get()](std::stop_token stop) { s->ReadLoop(std::move(stop)); });
  return server;
}

RpcServer::RpcServer(UniqueFd socket, UniqueFd wake, RpcHandler handler, Clock::time_point deadline)
    : socket_(std::move(socket)),
      wake_(std::move(wake)),
      handler_(std::move(handler)),
      deadline_(deadline) {}

RpcServer::~RpcServer() { Stop(); }

void RpcServer::ExpectChild(pid_t pid) { child_.store(pid, std::memory_order_release); }

void RpcServer::Stop() {
  std::call_once(stopped_, [this] {
    reader_.request_stop();
    const uint64_t one = 1;
    [[maybe_unused]] ssize_t n = ::write(wake_.get(), &one, sizeof one);
    if (reader_.joinable()) reader_.join();
    // The reader is gone, so nobody grows workers_ any more.
    for (auto& w : workers_) w.request_stop();
    work_cv_.notify_all();
    for (auto& w : workers_) {
      if (w.joinable()) w.join();
    }
  });
}

RpcServerStats RpcServer::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

void RpcServer::Reject(std::string why) {
  std::lock_guard lock(mu_);
  ++stats_.rejected_frames;
  if (stats_.rejection.empty()) stats_.rejection = std::move(why);
}

bool RpcServer::IsAuthorised(pid_t sender) const {
  return interpreter_ != 0 && sender == interpreter_;
}

namespace {

// The pid the kernel attests wrote the datagram (SCM_CREDENTIALS); 0 when none came. Descriptors
// a script tried to hand us (SCM_RIGHTS) are closed unseen.
pid_t SenderOf(msghdr& msg) {
  pid_t sender = 0;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET) continue;
    if (c->cmsg_type == SCM_CREDENTIALS && c->cmsg_len >= CMSG_LEN(sizeof(ucred))) {
      ucred cred{};
      std::memcpy(&cred, CMSG_DATA(c), sizeof cred);
      sender = cred.pid;
    } else if (c->cmsg_type == SCM_RIGHTS) {
      const size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      for (size_t i = 0; i < count; ++i) {
        int fd = -1;
        std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
        if (fd >= 0) ::close(fd);
      }
    }
  }
  return sender;
}

}  // namespace

void RpcServer::ReadLoop(std::stop_token stop) {
  Reading reading;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(ucred)) + CMSG_SPACE(sizeof(int) * 16)];
  std::string chunk(kReadChunk, '\0');
  while (!stop.stop_requested() && Clock::now() < deadline_) {
    pollfd pfds[2] = {{socket_.get(), POLLIN, 0}, {wake_.get(), POLLIN, 0}};
    const int rc = ::poll(pfds, 2, PollTimeoutMs(Clock::now(), deadline_));
    if (rc < 0 && errno == EINTR) continue;
    if (rc < 0 || (pfds[1].revents & POLLIN) != 0) return;
    if (pfds[0].revents == 0) continue;
    for (;;) {  // every datagram queued now
      iovec iov{chunk.data(), chunk.size()};
      msghdr msg{};
      msg.msg_iov = &iov;
      msg.msg_iovlen = 1;
      msg.msg_control = control;
      msg.msg_controllen = sizeof control;
      const ssize_t n = ::recvmsg(socket_.get(), &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
      if (n <= 0) return;  // EOF (every writer closed) or a socket error
      const pid_t sender = SenderOf(msg);
      const std::string_view bytes(chunk.data(), static_cast<size_t>(n));
      if (interpreter_ != 0) {
        if (!IsAuthorised(sender)) {
          Reject("data from process " + std::to_string(sender) +
                 ", which is not the script's interpreter");
          continue;
        }
        reading.interpreter.Feed(bytes);
      } else if (!Authenticate(sender, bytes, reading, stop)) {
        continue;
      }
      if (!ServeFrames(reading.interpreter)) return;
    }
  }
}

bool RpcServer::Authenticate(pid_t sender, std::string_view bytes, Reading& reading,
                             const std::stop_token& stop) {
  if (reading.pre_auth.size() >= kMaxPreAuthSenders && reading.pre_auth.count(sender) == 0) {
    Reject("too many processes writing to the RPC socket before the interpreter's hello");
    return false;
  }
  FrameReader& r = reading.pre_auth[sender];
  r.Feed(bytes);
  if (r.pending() > kMaxPreAuthBytes) {
    Reject("process " + std::to_string(sender) + " wrote more than a hello before authenticating");
    reading.pre_auth.erase(sender);
    return false;
  }
  auto hello = r.Next();
  if (!hello || !*hello) return false;  // not a whole frame yet
  auto parsed = ParseJson(**hello);
  const bool is_hello = parsed && parsed->is_object() && parsed->contains("hello");
  // The child's pid is set by whoever spawned it, possibly just after its hello arrived.
  pid_t child = child_.load(std::memory_order_acquire);
  const auto waited_until = Clock::now() + kExpectChildWait;
  while (child == 0 && Clock::now() < waited_until && !stop.stop_requested()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    child = child_.load(std::memory_order_acquire);
  }
  if (!is_hello || sender <= 0 || child <= 0 || !IsSelfOrDescendant(sender, child)) {
    Reject("the first frame did not come from the script's interpreter (pid " +
           std::to_string(sender) + ")");
    reading.pre_auth.erase(sender);
    return false;
  }
  interpreter_ = sender;
  {
    std::lock_guard lock(mu_);
    stats_.authenticated = true;
  }
  // Whatever the interpreter sent after its hello is its first request(s).
  reading.interpreter = std::move(r);
  reading.pre_auth.clear();
  return true;
}

bool RpcServer::ServeFrames(FrameReader& frames) {
  for (;;) {
    auto frame = frames.Next();
    if (!frame) {
      Reject(frame.error().message());
      return false;  // an oversized frame: the stream cannot be trusted any more
    }
    if (!*frame) return true;
    HandleFrame(**frame);
  }
}

void RpcServer::HandleFrame(const std::string& payload) {
  auto parsed = ParseJson(payload);
  if (!parsed || !parsed->is_object()) {
    Reject("a frame that is not a JSON object");
    return;
  }
  Json& request = *parsed;
  if (request.contains("hello")) return;  // a repeated hello is harmless
  auto id = request.find("id");
  if (id == request.end() || !(id->is_number_integer() || id->is_string())) {
    Reject("a request without an id");
    return;
  }
  auto tool = request.find("tool");
  if (tool == request.end() || !tool->is_string()) {
    Respond(*id, {}, "request has no tool name");
    return;
  }
  Json args = Json::object();
  if (auto a = request.find("args"); a != request.end() && !a->is_null()) args = std::move(*a);
  Enqueue(Request{*id, tool->get<std::string>(), std::move(args)});
}

void RpcServer::Enqueue(Request request) {
  std::lock_guard lock(mu_);
  ++stats_.requests;
  queue_.push_back(std::move(request));
  if (idle_workers_ == 0 && workers_.size() < static_cast<size_t>(kMaxConcurrentCalls)) {
    workers_.emplace_back([this](std::stop_token stop) { WorkLoop(std::move(stop)); });
  } else {
    work_cv_.notify_one();
  }
}

void RpcServer::WorkLoop(std::stop_token stop) {
  std::unique_lock lock(mu_);
  for (;;) {
    ++idle_workers_;
    const bool got = work_cv_.wait_until(lock, stop, deadline_, [this] { return !queue_.empty(); });
    --idle_workers_;
    if (!got) return;  // stopped or past the deadline, nothing queued
    Request request = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    const std::string text = handler_(request.tool, std::move(request.args));
    Respond(request.id, text);
    lock.lock();
  }
}

void RpcServer::Respond(const Json& id, std::string_view result_text, std::string_view error) {
  std::string payload = "{\"id\":";
  payload += DumpJson(id);
  if (!error.empty()) {
    payload += ",\"error\":";
    AppendJsonQuoted(payload, error);
  } else {
    payload += ",\"result\":";
    AppendJsonQuoted(payload, result_text);
  }
  payload += "}";
  if (payload.size() > kMaxFrameBytes) {
    Respond(id, {}, "tool result too large for the RPC channel");
    return;
  }
  const std::string frame = EncodeFrame(payload);
  std::lock_guard lock(send_mu_);
  // The script is not reading yet: wait for room, never past the execution's deadline. A failure
  // (EPIPE: the interpreter is gone) drops the answer; the run's own end reports why.
  WriteWait wait;
  wait.deadline = deadline_;
  wait.stop = reader_.get_stop_token();
  wait.socket = true;
  (void)WriteAllUntil(socket_.get(), frame, wait);
}

}  // namespace talaria::tools::code
