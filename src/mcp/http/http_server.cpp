// The MCP endpoint's HTTP/1.1 server: a gate thread that screens heads, a pool that answers.
#include "mcp/http/http_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <thread>

#include "talaria/base/ascii.h"
#include "talaria/base/log.h"
#include "talaria/base/strings.h"
#include "talaria/mcp/jsonrpc.h"

namespace talaria::mcp::http_internal {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

bool HttpRequest::has_header(std::string_view name) const {
  return std::any_of(headers.begin(), headers.end(),
                     [&](const HttpHeader& h) { return EqualsIgnoringAsciiCase(h.name, name); });
}

std::string HttpRequest::get_header_value(std::string_view name) const {
  for (const HttpHeader& h : headers) {
    if (EqualsIgnoringAsciiCase(h.name, name)) return h.value;
  }
  return {};
}

void HttpResponse::set_header(std::string_view name, std::string_view value) {
  for (HttpHeader& h : headers) {
    if (EqualsIgnoringAsciiCase(h.name, name)) {
      h.value = std::string(value);
      return;
    }
  }
  headers.push_back({std::string(name), std::string(value)});
}

void HttpResponse::set_content(std::string content, std::string_view content_type) {
  body = std::move(content);
  set_header("Content-Type", content_type);
}

void HttpResponse::set_chunked_content_provider(std::string_view content_type,
                                                std::function<bool(StreamSink&)> provider,
                                                std::function<void()> on_end) {
  set_header("Content-Type", content_type);
  stream = std::move(provider);
  on_stream_end = std::move(on_end);
}

bool HttpResponse::has_header(std::string_view name) const {
  return std::any_of(headers.begin(), headers.end(),
                     [&](const HttpHeader& h) { return EqualsIgnoringAsciiCase(h.name, name); });
}

std::string HttpResponse::get_header_value(std::string_view name) const {
  for (const HttpHeader& h : headers) {
    if (EqualsIgnoringAsciiCase(h.name, name)) return h.value;
  }
  return {};
}

std::string_view StatusReason(int status) {
  switch (status) {
    case 100:
      return "Continue";
    case 200:
      return "OK";
    case 202:
      return "Accepted";
    case 204:
      return "No Content";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 406:
      return "Not Acceptable";
    case 408:
      return "Request Timeout";
    case 409:
      return "Conflict";
    case 413:
      return "Payload Too Large";
    case 415:
      return "Unsupported Media Type";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 503:
      return "Service Unavailable";
    case 504:
      return "Gateway Timeout";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return "Unknown";
  }
}

namespace {

// Headers a request may carry once: a second Host or Origin is how request smuggling and
// origin confusion start, a second Content-Length how bodies get split differently by a proxy.
constexpr std::string_view kSingletonHeaders[] = {
    "host",          "origin",         "content-length",       "transfer-encoding",
    "authorization", "mcp-session-id", "mcp-protocol-version", "content-type",
    "expect",        "connection"};
// What a refused connection may still send us, read and dropped so the refusal is not lost to
// a reset, before the connection is closed.
constexpr size_t kMaxDrainBytes = size_t{1} << 20;
constexpr auto kDrainTime = 2s;
constexpr size_t kReadChunk = 16 * 1024;
// Bytes read from one connection per gate round, so one fast sender cannot hog the gate.
constexpr size_t kMaxReadPerRound = 256 * 1024;
constexpr size_t kMaxChunkLine = 1024;
constexpr auto kWriteSlice = 200ms;

struct HttpError {
  int status;
  std::string message;
};

bool IsTokenChar(char c) {
  if (std::isalnum(static_cast<unsigned char>(c)) != 0) return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

// Optional whitespace around a header value (RFC 9110 OWS).
std::string_view TrimOws(std::string_view s) { return Trim(s, kLineSpace); }

// Parses a request head (without its final blank line) strictly.
tl::expected<HttpRequest, HttpError> ParseHead(std::string_view head, const HttpServerOptions& o) {
  auto bad = [](std::string message) {
    return tl::unexpected(HttpError{400, "Bad Request: " + std::move(message)});
  };
  size_t eol = head.find("\r\n");
  const std::string_view line = head.substr(0, eol);
  head = eol == std::string_view::npos ? std::string_view() : head.substr(eol + 2);
  HttpRequest req;
  const size_t sp1 = line.find(' ');
  const size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos) {
    return bad("malformed request line");
  }
  const std::string_view method = line.substr(0, sp1);
  const std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  const std::string_view version = line.substr(sp2 + 1);
  if (method.empty() || !std::all_of(method.begin(), method.end(), IsTokenChar))
    return bad("malformed method");
  if (target.empty() || target.front() != '/' ||
      std::any_of(target.begin(), target.end(), [](char c) { return c <= 0x20 || c == 0x7f; })) {
    return bad("malformed request target");
  }
  if (version == "HTTP/1.1") {
    req.minor_version = 1;
  } else if (version == "HTTP/1.0") {
    req.minor_version = 0;
  } else {
    return tl::unexpected(HttpError{505, "HTTP Version Not Supported: HTTP/1.0 and HTTP/1.1 only"});
  }
  req.method = std::string(method);
  req.target = std::string(target);
  req.path = std::string(target.substr(0, target.find('?')));

  while (!head.empty()) {
    eol = head.find("\r\n");
    const std::string_view h = head.substr(0, eol);
    head = eol == std::string_view::npos ? std::string_view() : head.substr(eol + 2);
    if (req.headers.size() >= o.max_headers) {
      return tl::unexpected(HttpError{431, "Request Header Fields Too Large: more than " +
                                               std::to_string(o.max_headers) + " headers"});
    }
    if (h.empty() || h.front() == ' ' || h.front() == '\t')
      return bad("folded or empty header line");
    const size_t colon = h.find(':');
    if (colon == std::string_view::npos || colon == 0) return bad("header line without a name");
    const std::string_view name = h.substr(0, colon);
    if (!std::all_of(name.begin(), name.end(), IsTokenChar)) return bad("malformed header name");
    const std::string_view value = TrimOws(h.substr(colon + 1));
    if (std::any_of(value.begin(), value.end(), [](char c) {
          const auto u = static_cast<unsigned char>(c);
          return (u < 0x20 && u != '\t') || u == 0x7f;
        })) {
      return bad("control character in header " + std::string(name));
    }
    const std::string lower = AsciiLower(name);
    if (std::find(std::begin(kSingletonHeaders), std::end(kSingletonHeaders), lower) !=
            std::end(kSingletonHeaders) &&
        req.has_header(lower)) {
      return bad("duplicate " + std::string(name) + " header");
    }
    req.headers.push_back({std::string(name), std::string(value)});
  }
  if (req.minor_version == 1 && !req.has_header("Host"))
    return bad("HTTP/1.1 request without Host");
  return req;
}

// Owns a descriptor.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept {
    if (this != &o) {
      reset();
      fd_ = std::exchange(o.fd_, -1);
    }
    return *this;
  }
  ~UniqueFd() { reset(); }
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  int get() const { return fd_; }

 private:
  int fd_ = -1;
};

// Open connections per client address.
class ConnectionCounts {
 public:
  // False when the address or the whole server is at its cap.
  bool HasRoom(const std::string& peer, const HttpServerOptions& o) {
    std::lock_guard lock(mu_);
    auto it = per_address_.find(peer);
    return total_ < o.max_connections &&
           (it == per_address_.end() || it->second < o.max_connections_per_address);
  }
  void Add(const std::string& peer) {
    std::lock_guard lock(mu_);
    ++per_address_[peer];
    ++total_;
  }
  void Remove(const std::string& peer) {
    std::lock_guard lock(mu_);
    auto it = per_address_.find(peer);
    if (it != per_address_.end() && --it->second == 0) per_address_.erase(it);
    --total_;
  }

 private:
  std::mutex mu_;
  std::map<std::string, size_t> per_address_;  // Guarded by mu_.
  size_t total_ = 0;                           // Guarded by mu_.
};

enum class Phase { kHead, kBody, kDrain };
enum class ChunkPhase { kSize, kData, kDataEnd, kTrailers };

// One client connection; owned by the gate while it waits for a request, by a worker while
// the request is answered.
struct Conn {
  Conn(UniqueFd socket, std::string address, ConnectionCounts* c, uint64_t n)
      : fd(std::move(socket)), peer(std::move(address)), counts(c), serial(n) {
    counts->Add(peer);
  }
  ~Conn() { Close(); }
  Conn(const Conn&) = delete;
  Conn& operator=(const Conn&) = delete;

  void Close() {
    if (!open) return;
    open = false;
    fd.reset();
    counts->Remove(peer);
  }

  // Back to waiting for a head (a new connection, or a kept-alive one).
  void Rearm(Clock::time_point deadline_at) {
    phase = Phase::kHead;
    deadline = deadline_at;
    scan = 0;
    request = HttpRequest();
    chunked = false;
    content_length = 0;
    chunk_phase = ChunkPhase::kSize;
    chunk_left = 0;
    trailer_bytes = 0;
  }

  UniqueFd fd;
  const std::string peer;
  ConnectionCounts* const counts;
  const uint64_t serial;  // accept order: the oldest is evicted first
  bool open = true;

  Phase phase = Phase::kHead;
  Clock::time_point deadline;
  std::string in;   // received, not yet consumed
  size_t scan = 0;  // the head's end is not before here
  size_t drained = 0;
  HttpRequest request;
  bool chunked = false;
  size_t content_length = 0;
  ChunkPhase chunk_phase = ChunkPhase::kSize;
  size_t chunk_left = 0;
  size_t trailer_bytes = 0;
  bool peer_closed = false;  // the client shut down its sending side
};

std::string PeerAddress(const sockaddr_storage& ss) {
  char text[INET6_ADDRSTRLEN] = {};
  if (ss.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&ss);
    ::inet_ntop(AF_INET, &in->sin_addr, text, sizeof text);
    return text;
  }
  if (ss.ss_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&ss);
    if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) {
      ::inet_ntop(AF_INET, &in6->sin6_addr.s6_addr[12], text, sizeof text);
    } else {
      ::inet_ntop(AF_INET6, &in6->sin6_addr, text, sizeof text);
    }
    return text;
  }
  return "unknown";
}

std::string SerializeHead(const HttpResponse& res, bool keep_alive, bool chunked,
                          int minor_version) {
  std::string out = "HTTP/1.1 " + std::to_string(res.status) + " " +
                    std::string(StatusReason(res.status)) + "\r\n";
  for (const HttpHeader& h : res.headers) {
    if (EqualsIgnoringAsciiCase(h.name, "Content-Length") ||
        EqualsIgnoringAsciiCase(h.name, "Connection") ||
        EqualsIgnoringAsciiCase(h.name, "Transfer-Encoding")) {
      continue;
    }
    out += h.name + ": " + h.value + "\r\n";
  }
  if (res.stream) {
    if (chunked) out += "Transfer-Encoding: chunked\r\n";
  } else if (res.status >= 200 && res.status != 204 && res.status != 304) {
    out += "Content-Length: " + std::to_string(res.body.size()) + "\r\n";
  }
  if (!keep_alive) {
    out += "Connection: close\r\n";
  } else if (minor_version == 0) {
    out += "Connection: keep-alive\r\n";
  }
  out += "\r\n";
  return out;
}

// A JSON-RPC error body for the statuses the server sets by itself.
HttpResponse ErrorResponse(int status, std::string_view message) {
  HttpResponse res;
  res.status = status;
  res.set_content(EncodeError(nullptr, status == 413 ? kInvalidRequest : -32000, message),
                  "application/json");
  return res;
}

class ServerImpl;

// The chunked (or, for HTTP/1.0, raw) body of a streamed response.
class ConnSink final : public StreamSink {
 public:
  ConnSink(ServerImpl& server, int fd, bool chunked)
      : server_(server), fd_(fd), chunked_(chunked) {}
  bool write(const char* data, size_t size) override;
  void done() override;
  bool finished() const { return finished_; }
  bool failed() const { return failed_; }

 private:
  ServerImpl& server_;
  const int fd_;
  const bool chunked_;
  bool finished_ = false;
  bool failed_ = false;
};

class ServerImpl final : public HttpServer {
 public:
  explicit ServerImpl(HttpServerOptions options) : options_(std::move(options)) {}
  ~ServerImpl() override { Stop(); }

  Status Bind();
  void Run(HeadScreen screen, HttpHandler handler) override;
  int port() const override { return port_; }
  void Stop() override;
  // Writes everything within the write timeout (per stall); false when the client is gone or
  // stalled, or the server is stopping.
  bool WriteAll(int fd, std::string_view data);

 private:
  void GateLoop();
  void Accept(std::vector<std::unique_ptr<Conn>>& conns);
  void ReadFrom(Conn& c);
  // Moves the connection through its request as far as the bytes allow.
  void Advance(std::unique_ptr<Conn>& slot);
  // Body bytes of a chunked request; nullopt while more are needed.
  std::optional<tl::expected<void, HttpError>> DecodeChunked(Conn& c);
  // Sends a refusal from the gate (best effort, non-blocking) and starts draining.
  void Refuse(Conn& c, const HttpResponse& res);
  void Dispatch(std::unique_ptr<Conn>& slot);
  void WorkerLoop();
  void Serve(std::unique_ptr<Conn> conn);
  void ReturnToGate(std::unique_ptr<Conn> conn);
  void WakeGate();

  const HttpServerOptions options_;
  HeadScreen screen_;        // set once by Run, before any thread starts
  HttpHandler handler_;      // set once by Run
  ConnectionCounts counts_;  // before every Conn holder: they report to it as they go
  UniqueFd listen_fd_;
  UniqueFd wake_fd_;
  int port_ = 0;
  uint64_t next_serial_ = 0;  // the gate's
  std::atomic<bool> stopping_{false};

  std::mutex stop_mu_;
  bool stopped_ = false;  // Guarded by stop_mu_.

  std::mutex mu_;
  std::condition_variable work_cv_;
  std::deque<std::unique_ptr<Conn>> work_;       // Guarded by mu_. Complete requests.
  std::vector<std::unique_ptr<Conn>> returned_;  // Guarded by mu_. Kept alive, back to the gate.

  std::vector<std::jthread> workers_;
  std::jthread gate_;
};

bool ConnSink::write(const char* data, size_t size) {
  if (failed_ || finished_) return false;
  if (size == 0) return true;
  std::string frame;
  if (chunked_) {
    char hex[32];
    const auto [end, ec] = std::to_chars(hex, hex + sizeof hex, size, 16);
    (void)ec;
    frame.reserve(size + 16);
    frame.append(hex, end);
    frame.append("\r\n");
    frame.append(data, size);
    frame.append("\r\n");
  } else {
    frame.assign(data, size);
  }
  if (!server_.WriteAll(fd_, frame)) failed_ = true;
  return !failed_;
}

void ConnSink::done() {
  if (failed_ || finished_) return;
  if (chunked_ && !server_.WriteAll(fd_, "0\r\n\r\n")) {
    failed_ = true;
    return;
  }
  finished_ = true;
}

Status ServerImpl::Bind() {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(options_.port);
  if (const int rc = ::getaddrinfo(options_.host.c_str(), port.c_str(), &hints, &found); rc != 0) {
    return UnavailableError("cannot resolve " + options_.host + ": " + ::gai_strerror(rc));
  }
  std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> guard(found, &::freeaddrinfo);
  std::string last_error = "no address";
  for (addrinfo* ai = found; ai != nullptr; ai = ai->ai_next) {
    UniqueFd fd(
        ::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol));
    if (fd.get() < 0) {
      last_error = std::strerror(errno);
      continue;
    }
    const int one = 1;
    ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd.get(), ai->ai_addr, ai->ai_addrlen) != 0 || ::listen(fd.get(), 512) != 0) {
      last_error = std::strerror(errno);
      continue;
    }
    sockaddr_storage bound{};
    socklen_t len = sizeof bound;
    if (::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&bound), &len) != 0) {
      last_error = std::strerror(errno);
      continue;
    }
    port_ = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                              : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
    listen_fd_ = std::move(fd);
    wake_fd_ = UniqueFd(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
    if (wake_fd_.get() < 0)
      return UnavailableError(std::string("eventfd: ") + std::strerror(errno));
    return Status::Ok();
  }
  return UnavailableError("cannot listen on " + options_.host + ":" + port + ": " + last_error);
}

void ServerImpl::Run(HeadScreen screen, HttpHandler handler) {
  screen_ = std::move(screen);
  handler_ = std::move(handler);
  for (size_t i = 0; i < options_.worker_threads; ++i)
    workers_.emplace_back([this] { WorkerLoop(); });
  gate_ = std::jthread([this] { GateLoop(); });
}

void ServerImpl::WakeGate() {
  const uint64_t one = 1;
  [[maybe_unused]] const ssize_t n = ::write(wake_fd_.get(), &one, sizeof one);
}

void ServerImpl::GateLoop() {
  std::vector<std::unique_ptr<Conn>> conns;
  std::vector<pollfd> fds;
  while (!stopping_) {
    fds.clear();
    fds.push_back({listen_fd_.get(), POLLIN, 0});
    fds.push_back({wake_fd_.get(), POLLIN, 0});
    auto next_deadline = Clock::now() + 1s;
    for (const auto& c : conns) {
      fds.push_back({c->fd.get(), POLLIN, 0});
      next_deadline = std::min(next_deadline, c->deadline);
    }
    const auto wait =
        std::chrono::duration_cast<std::chrono::milliseconds>(next_deadline - Clock::now());
    const int timeout = static_cast<int>(std::clamp<int64_t>(wait.count() + 1, 0, 1000));
    const int ready = ::poll(fds.data(), fds.size(), timeout);
    if (ready < 0 && errno != EINTR) {
      LogError(std::string("mcp http: poll: ") + std::strerror(errno));
      std::this_thread::sleep_for(10ms);
      continue;
    }
    if (stopping_) break;
    // Readable connections first (the indices match fds), then the ones coming back, then the
    // new ones, whose admission may evict a waiting connection.
    const size_t polled = conns.size();
    for (size_t i = 0; i < polled; ++i) {
      if (conns[i] && (fds[i + 2].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
        ReadFrom(*conns[i]);
        if (conns[i]->open) Advance(conns[i]);
        // Half-closed with no complete request: nothing more can come.
        if (conns[i] && conns[i]->peer_closed && conns[i]->phase != Phase::kDrain)
          conns[i]->Close();
      }
    }
    if ((fds[1].revents & POLLIN) != 0) {
      uint64_t count;
      [[maybe_unused]] const ssize_t n = ::read(wake_fd_.get(), &count, sizeof count);
      std::vector<std::unique_ptr<Conn>> back;
      {
        std::lock_guard lock(mu_);
        back.swap(returned_);
      }
      for (auto& c : back) {
        c->Rearm(Clock::now() + options_.header_timeout);
        conns.push_back(std::move(c));
        Advance(conns.back());  // pipelined bytes may hold the next request already
      }
    }
    if ((fds[0].revents & POLLIN) != 0) Accept(conns);
    const auto now = Clock::now();
    for (auto& c : conns) {
      if (!c || !c->open || now < c->deadline) continue;
      if (c->phase == Phase::kDrain || (c->phase == Phase::kHead && c->in.empty())) {
        c->Close();  // nothing was asked: a quiet close
      } else {
        Refuse(*c, ErrorResponse(408, "Request Timeout: the request did not arrive in time"));
      }
    }
    std::erase_if(conns, [](const std::unique_ptr<Conn>& c) { return !c || !c->open; });
  }
  for (auto& c : conns) c.reset();
  listen_fd_.reset();
}

void ServerImpl::Accept(std::vector<std::unique_ptr<Conn>>& conns) {
  for (int i = 0; i < 64; ++i) {
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    UniqueFd fd(::accept4(listen_fd_.get(), reinterpret_cast<sockaddr*>(&ss), &len,
                          SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (fd.get() < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK)
        LogWarn(std::string("mcp http: accept: ") + std::strerror(errno));
      return;
    }
    const int one = 1;
    ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    std::string peer = PeerAddress(ss);
    if (!counts_.HasRoom(peer, options_)) {
      // Evict the oldest connection of this address (or, at the server's cap, of any) that is
      // still waiting for its head: a client that showed a request is never the one to go.
      Conn* victim = nullptr;
      for (int pass = 0; pass < 2 && victim == nullptr; ++pass) {
        for (auto& c : conns) {
          if (!c || !c->open || c->phase != Phase::kHead || (pass == 0 && c->peer != peer))
            continue;
          if (victim == nullptr || c->serial < victim->serial) victim = c.get();
        }
      }
      if (victim != nullptr) victim->Close();
      if (!counts_.HasRoom(peer, options_)) {
        static constexpr std::string_view kBusy =
            "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
        [[maybe_unused]] const ssize_t n =
            ::send(fd.get(), kBusy.data(), kBusy.size(), MSG_NOSIGNAL);
        continue;
      }
    }
    auto conn = std::make_unique<Conn>(std::move(fd), std::move(peer), &counts_, next_serial_++);
    conn->Rearm(Clock::now() + options_.header_timeout);
    conns.push_back(std::move(conn));
  }
}

void ServerImpl::ReadFrom(Conn& c) {
  char buf[kReadChunk];
  size_t total = 0;
  while (total < kMaxReadPerRound) {
    const ssize_t n = ::recv(c.fd.get(), buf, sizeof buf, 0);
    if (n == 0) {
      // The client is done sending: a complete request already here is still answered.
      if (c.phase == Phase::kDrain || c.in.empty()) c.Close();
      c.peer_closed = true;
      return;
    }
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) c.Close();
      return;
    }
    total += static_cast<size_t>(n);
    if (c.phase == Phase::kDrain) {
      c.drained += static_cast<size_t>(n);
      if (c.drained > kMaxDrainBytes) {
        c.Close();
        return;
      }
      continue;
    }
    c.in.append(buf, static_cast<size_t>(n));
    // A head that cannot fit is refused at once, not when its end finally comes.
    if (c.phase == Phase::kHead && c.in.size() > options_.max_head_bytes + 2) break;
  }
}

void ServerImpl::Advance(std::unique_ptr<Conn>& slot) {
  Conn& c = *slot;
  if (c.phase == Phase::kHead) {
    // Blank lines before a request line are tolerated (RFC 9112 2.2).
    size_t skip = 0;
    while (c.in.compare(skip, 2, "\r\n") == 0) skip += 2;
    if (skip > 0) c.in.erase(0, skip);
    if (c.in.empty()) return;
    const size_t end = c.in.find("\r\n\r\n", c.scan);
    if (end == std::string::npos) {
      if (c.in.size() > options_.max_head_bytes) {
        return Refuse(c,
                      ErrorResponse(431, "Request Header Fields Too Large: the head exceeds " +
                                             std::to_string(options_.max_head_bytes) + " bytes"));
      }
      size_t lines = 0;
      for (size_t at = c.in.find("\r\n"); at != std::string::npos; at = c.in.find("\r\n", at + 2))
        ++lines;
      if (lines > options_.max_headers + 1) {
        return Refuse(c, ErrorResponse(431, "Request Header Fields Too Large: more than " +
                                                std::to_string(options_.max_headers) + " headers"));
      }
      c.scan = c.in.size() >= 3 ? c.in.size() - 3 : 0;
      return;
    }
    if (end + 4 > options_.max_head_bytes) {
      return Refuse(c, ErrorResponse(431, "Request Header Fields Too Large: the head exceeds " +
                                              std::to_string(options_.max_head_bytes) + " bytes"));
    }
    auto parsed = ParseHead(std::string_view(c.in).substr(0, end), options_);
    c.in.erase(0, end + 4);
    if (!parsed) return Refuse(c, ErrorResponse(parsed.error().status, parsed.error().message));
    c.request = std::move(*parsed);
    c.request.peer = c.peer;
    // Content-Length: digits only, one value; Transfer-Encoding: chunked alone.
    const bool has_length = c.request.has_header("Content-Length");
    if (c.request.has_header("Transfer-Encoding")) {
      if (has_length || c.request.minor_version == 0) {
        return Refuse(
            c,
            ErrorResponse(400, "Bad Request: Transfer-Encoding with Content-Length or HTTP/1.0"));
      }
      if (!EqualsIgnoringAsciiCase(c.request.get_header_value("Transfer-Encoding"), "chunked")) {
        return Refuse(
            c,
            ErrorResponse(501, "Not Implemented: only the chunked transfer coding is supported"));
      }
      c.chunked = true;
    } else if (has_length) {
      const std::string v = c.request.get_header_value("Content-Length");
      size_t n = 0;
      const auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
      if (v.empty() || v.size() > 19 || ec != std::errc() || ptr != v.data() + v.size() ||
          !std::all_of(v.begin(), v.end(), [](char ch) { return ch >= '0' && ch <= '9'; })) {
        return Refuse(c, ErrorResponse(400, "Bad Request: malformed Content-Length"));
      }
      c.content_length = n;
    }
    // Authentication, Host and Origin, before a byte of the body is read.
    if (std::optional<HttpResponse> refusal = screen_(c.request)) return Refuse(c, *refusal);
    if (c.content_length > options_.max_body_bytes) {
      return Refuse(c, ErrorResponse(413, "Payload Too Large: the message exceeds the size limit"));
    }
    if ((c.chunked || c.content_length > 0) && c.request.minor_version == 1 &&
        EqualsIgnoringAsciiCase(c.request.get_header_value("Expect"), "100-continue") &&
        c.in.empty()) {
      static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
      [[maybe_unused]] const ssize_t n =
          ::send(c.fd.get(), kContinue.data(), kContinue.size(), MSG_NOSIGNAL);
    }
    c.phase = Phase::kBody;
    c.deadline = Clock::now() + options_.body_timeout;
  }
  if (c.phase != Phase::kBody) return;
  if (c.chunked) {
    auto decoded = DecodeChunked(c);
    if (!decoded) return;
    if (!*decoded)
      return Refuse(c, ErrorResponse(decoded->error().status, decoded->error().message));
    return Dispatch(slot);
  }
  if (c.in.size() < c.content_length) return;
  c.request.body = c.in.substr(0, c.content_length);
  c.in.erase(0, c.content_length);
  Dispatch(slot);
}

std::optional<tl::expected<void, HttpError>> ServerImpl::DecodeChunked(Conn& c) {
  auto bad = [](std::string m) {
    return std::optional<tl::expected<void, HttpError>>(
        tl::unexpected(HttpError{400, "Bad Request: " + std::move(m)}));
  };
  for (;;) {
    switch (c.chunk_phase) {
      case ChunkPhase::kSize: {
        const size_t eol = c.in.find("\r\n");
        if (eol == std::string::npos) {
          if (c.in.size() > kMaxChunkLine) return bad("chunk size line too long");
          return std::nullopt;
        }
        std::string_view line = std::string_view(c.in).substr(0, eol);
        line = line.substr(0, line.find(';'));
        line = TrimOws(line);
        size_t size = 0;
        const auto [ptr, ec] = std::from_chars(line.data(), line.data() + line.size(), size, 16);
        if (line.empty() || line.size() > 15 || ec != std::errc() ||
            ptr != line.data() + line.size()) {
          return bad("malformed chunk size");
        }
        c.in.erase(0, eol + 2);
        if (size == 0) {
          c.chunk_phase = ChunkPhase::kTrailers;
        } else {
          if (c.request.body.size() + size > options_.max_body_bytes) {
            return tl::unexpected(
                HttpError{413, "Payload Too Large: the message exceeds the size limit"});
          }
          c.chunk_left = size;
          c.chunk_phase = ChunkPhase::kData;
        }
        break;
      }
      case ChunkPhase::kData: {
        const size_t take = std::min(c.chunk_left, c.in.size());
        c.request.body.append(c.in, 0, take);
        c.in.erase(0, take);
        c.chunk_left -= take;
        if (c.chunk_left > 0) return std::nullopt;
        c.chunk_phase = ChunkPhase::kDataEnd;
        break;
      }
      case ChunkPhase::kDataEnd:
        if (c.in.size() < 2) return std::nullopt;
        if (c.in.compare(0, 2, "\r\n") != 0) return bad("chunk not followed by CRLF");
        c.in.erase(0, 2);
        c.chunk_phase = ChunkPhase::kSize;
        break;
      case ChunkPhase::kTrailers: {
        const size_t eol = c.in.find("\r\n");
        if (eol == std::string::npos) {
          if (c.trailer_bytes + c.in.size() > options_.max_head_bytes) {
            return tl::unexpected(HttpError{431, "Request Header Fields Too Large: trailers"});
          }
          return std::nullopt;
        }
        c.in.erase(0, eol + 2);
        c.trailer_bytes += eol + 2;
        if (eol == 0) return tl::expected<void, HttpError>();  // trailers are dropped
        if (c.trailer_bytes > options_.max_head_bytes) {
          return tl::unexpected(HttpError{431, "Request Header Fields Too Large: trailers"});
        }
        break;
      }
    }
  }
}

void ServerImpl::Refuse(Conn& c, const HttpResponse& res) {
  if (c.phase == Phase::kDrain || !c.open) return;
  const std::string out = SerializeHead(res, /*keep_alive=*/false, /*chunked=*/false, 1) + res.body;
  // The socket's buffer is empty here and a refusal is small: one non-blocking send.
  [[maybe_unused]] const ssize_t n = ::send(c.fd.get(), out.data(), out.size(), MSG_NOSIGNAL);
  ::shutdown(c.fd.get(), SHUT_WR);
  // Read what the client still sends for a while, so our answer is not lost to a reset.
  c.phase = Phase::kDrain;
  c.in.clear();
  c.in.shrink_to_fit();
  c.deadline = Clock::now() + kDrainTime;
}

void ServerImpl::Dispatch(std::unique_ptr<Conn>& slot) {
  {
    std::lock_guard lock(mu_);
    work_.push_back(std::move(slot));
  }
  work_cv_.notify_one();
}

void ServerImpl::WorkerLoop() {
  for (;;) {
    std::unique_ptr<Conn> conn;
    {
      std::unique_lock lock(mu_);
      work_cv_.wait_for(lock, 1s, [&] { return stopping_ || !work_.empty(); });
      if (stopping_) return;  // requests not started are dropped with their connections
      if (work_.empty()) continue;
      conn = std::move(work_.front());
      work_.pop_front();
    }
    Serve(std::move(conn));
  }
}

bool ServerImpl::WriteAll(int fd, std::string_view data) {
  auto stall_until = Clock::now() + options_.write_timeout;
  while (!data.empty()) {
    if (stopping_) return false;
    const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n > 0) {
      data.remove_prefix(static_cast<size_t>(n));
      stall_until = Clock::now() + options_.write_timeout;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) return false;
    if (Clock::now() >= stall_until) return false;
    pollfd p{fd, POLLOUT, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(kWriteSlice.count()));
    if (ready > 0 && (p.revents & (POLLERR | POLLHUP)) != 0 && (p.revents & POLLOUT) == 0)
      return false;
  }
  return true;
}

void ServerImpl::Serve(std::unique_ptr<Conn> conn) {
  const HttpRequest& req = conn->request;
  HttpResponse res;
  try {
    handler_(req, res);
  } catch (const std::exception& e) {
    LogError(std::string("mcp http: ") + e.what());
    res = ErrorResponse(500, "Internal error");
  } catch (...) {
    LogError("mcp http: unknown exception");
    res = ErrorResponse(500, "Internal error");
  }
  const std::string connection = AsciiLower(req.get_header_value("Connection"));
  bool keep_alive = req.minor_version == 1 ? connection.find("close") == std::string::npos
                                           : connection.find("keep-alive") != std::string::npos;
  const bool chunked = req.minor_version == 1;
  if (res.stream && !chunked) keep_alive = false;  // an HTTP/1.0 stream ends with the connection
  if (stopping_ || conn->peer_closed) keep_alive = false;
  bool ok = WriteAll(conn->fd.get(), SerializeHead(res, keep_alive, chunked, req.minor_version));
  if (ok && !res.stream && !res.body.empty()) ok = WriteAll(conn->fd.get(), res.body);
  if (ok && res.stream) {
    ConnSink sink(*this, conn->fd.get(), chunked);
    try {
      while (!sink.finished() && !sink.failed() && !stopping_) {
        if (!res.stream(sink)) break;
      }
    } catch (const std::exception& e) {
      LogError(std::string("mcp http: stream: ") + e.what());
    }
    ok = sink.finished();
  }
  if (res.on_stream_end) res.on_stream_end();
  if (ok && keep_alive && !stopping_) return ReturnToGate(std::move(conn));
  conn->Close();
}

void ServerImpl::ReturnToGate(std::unique_ptr<Conn> conn) {
  {
    std::lock_guard lock(mu_);
    returned_.push_back(std::move(conn));
  }
  WakeGate();
}

void ServerImpl::Stop() {
  {
    std::lock_guard lock(stop_mu_);
    if (stopped_) return;
    stopped_ = true;
  }
  stopping_ = true;
  if (wake_fd_.get() >= 0) WakeGate();
  if (gate_.joinable()) gate_.join();
  work_cv_.notify_all();
  for (auto& w : workers_) {
    if (w.joinable()) w.join();
  }
  std::lock_guard lock(mu_);
  work_.clear();
  returned_.clear();
}

}  // namespace

Result<std::unique_ptr<HttpServer>> HttpServer::Bind(HttpServerOptions options) {
  if (options.worker_threads == 0 || options.max_connections_per_address == 0 ||
      options.max_connections == 0 || options.max_headers == 0 || options.max_head_bytes < 64) {
    return Err(
        InvalidArgumentError("worker_threads, connection caps and head limits must be positive"));
  }
  auto server = std::make_unique<ServerImpl>(std::move(options));
  TALARIA_RETURN_IF_ERROR(server->Bind());
  return std::unique_ptr<HttpServer>(std::move(server));
}

}  // namespace talaria::mcp::http_internal
