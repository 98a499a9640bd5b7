// EgressProxy (egress_proxy.h): SOCKS5 (RFC 1928, CONNECT with no authentication only), one
// thread per tunnel, the network guard deciding where each may go.
#include "browser/egress_proxy.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "talaria/base/poll_timeout.h"

namespace talaria::browser {
namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kMaxRefusals = 64;
// A client that has not finished asking by then is not Chromium.
constexpr auto kHandshakeTimeout = std::chrono::seconds(10);

// SOCKS5 reply codes.
constexpr uint8_t kSucceeded = 0x00;
constexpr uint8_t kGeneralFailure = 0x01;
constexpr uint8_t kNotAllowed = 0x02;
constexpr uint8_t kHostUnreachable = 0x04;
constexpr uint8_t kConnectionRefused = 0x05;
constexpr uint8_t kCommandNotSupported = 0x07;
constexpr uint8_t kAddressNotSupported = 0x08;

// Waits for `events` on `fd` or the stop eventfd; false on stop, timeout or error.
bool WaitFd(int fd, short events, int stop_fd, Clock::time_point deadline) {
  for (;;) {
    std::array<pollfd, 2> p{{{fd, events, 0}, {stop_fd, POLLIN, 0}}};
    const int rc = ::poll(p.data(), p.size(), PollTimeoutMs(Clock::now(), deadline));
    if (rc < 0 && errno == EINTR) continue;
    if (rc <= 0 || p[1].revents != 0) return false;
    return true;
  }
}

// Reads exactly `n` bytes (the handshake is tiny; the socket is non-blocking).
bool ReadExactly(int fd, uint8_t* out, size_t n, int stop_fd, Clock::time_point deadline) {
  size_t got = 0;
  while (got < n) {
    const ssize_t r = ::recv(fd, out + got, n - got, 0);
    if (r > 0) {
      got += static_cast<size_t>(r);
      continue;
    }
    if (r == 0) return false;
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) return false;
    if (!WaitFd(fd, POLLIN, stop_fd, deadline)) return false;
  }
  return true;
}

bool WriteAll(int fd, const uint8_t* data, size_t n, int stop_fd) {
  size_t sent = 0;
  while (sent < n) {
    const ssize_t w = ::send(fd, data + sent, n - sent, MSG_NOSIGNAL);
    if (w > 0) {
      sent += static_cast<size_t>(w);
      continue;
    }
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (!WaitFd(fd, POLLOUT, stop_fd, Clock::time_point::max())) return false;
      continue;
    }
    return false;
  }
  return true;
}

void Reply(int fd, uint8_t code, int stop_fd) {
  // The bound address is not something Chromium uses: 0.0.0.0:0.
  const std::array<uint8_t, 10> r{5, code, 0, 1, 0, 0, 0, 0, 0, 0};
  (void)WriteAll(fd, r.data(), r.size(), stop_fd);
}

// The uid owning the TCP socket at `peer` connected to `local`, from /proc/net/tcp (IPv4: the
// proxy listens on 127.0.0.1 only). -1 when the socket is not listed.
long SocketUid(const sockaddr_in& peer, const sockaddr_in& local) {
  char want_local[32], want_remote[32];
  std::snprintf(want_local, sizeof want_local, "%08X:%04X", peer.sin_addr.s_addr,
                ntohs(peer.sin_port));
  std::snprintf(want_remote, sizeof want_remote, "%08X:%04X", local.sin_addr.s_addr,
                ntohs(local.sin_port));
  std::ifstream table("/proc/net/tcp");
  std::string line;
  std::getline(table, line);  // the header
  while (std::getline(table, line)) {
    char sl[16], l[64], r[64], st[8], queues[40], timer[40], retr[16];
    long uid = -1;
    if (std::sscanf(line.c_str(), "%15s %63s %63s %7s %39s %39s %15s %ld", sl, l, r, st, queues,
                    timer, retr, &uid) != 8) {
      continue;
    }
    if (std::strcmp(l, want_local) == 0 && std::strcmp(r, want_remote) == 0) return uid;
  }
  return -1;
}

// A host name as SOCKS5 carries it, made into a URL authority the guard parses. Only what a
// DNS name or an IP literal can hold passes: the guard must not see a host Chromium would not
// have sent ("a/b@c", spaces).
Result<std::string> AuthorityHost(std::string_view name) {
  if (name.empty() || name.size() > 253) return Err(InvalidArgumentError("bad host name"));
  if (name.find(':') != std::string_view::npos) {
    auto ip = web::ParseIpLiteral(name);
    if (!ip || !ip->v6) return Err(InvalidArgumentError("bad host name"));
    return "[" + ip->ToString() + "]";
  }
  for (const char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '-' || c == '_';
    if (!ok) return Err(InvalidArgumentError("bad host name"));
  }
  return std::string(name);
}

// A non-blocking connect to one judged address, bounded by `deadline`.
UniqueFd ConnectTo(const web::IpAddress& address, int port, int stop_fd, Clock::time_point deadline,
                   int& error) {
  sockaddr_storage storage{};
  socklen_t len = 0;
  if (address.v6) {
    auto* a = reinterpret_cast<sockaddr_in6*>(&storage);
    a->sin6_family = AF_INET6;
    a->sin6_port = htons(static_cast<uint16_t>(port));
    std::memcpy(&a->sin6_addr, address.bytes.data(), 16);
    len = sizeof(sockaddr_in6);
  } else {
    auto* a = reinterpret_cast<sockaddr_in*>(&storage);
    a->sin_family = AF_INET;
    a->sin_port = htons(static_cast<uint16_t>(port));
    a->sin_addr.s_addr = htonl(address.v4());
    len = sizeof(sockaddr_in);
  }
  UniqueFd fd(::socket(storage.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd) {
    error = errno;
    return {};
  }
  const int one = 1;
  (void)::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&storage), len) == 0) return fd;
  if (errno != EINPROGRESS) {
    error = errno;
    return {};
  }
  if (!WaitFd(fd.get(), POLLOUT, stop_fd, deadline)) {
    error = ETIMEDOUT;
    return {};
  }
  int so_error = 0;
  socklen_t so_len = sizeof so_error;
  if (::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &so_error, &so_len) != 0 || so_error != 0) {
    error = so_error != 0 ? so_error : errno;
    return {};
  }
  return fd;
}

// Copies bytes both ways until both sides have ended (or stop). Half-closes are passed on.
void Splice(int a, int b, int stop_fd) {
  std::array<uint8_t, 64 * 1024> buf{};
  bool a_open = true, b_open = true;
  while (a_open || b_open) {
    std::array<pollfd, 3> p{{{a, static_cast<short>(a_open ? POLLIN : 0), 0},
                             {b, static_cast<short>(b_open ? POLLIN : 0), 0},
                             {stop_fd, POLLIN, 0}}};
    const int rc = ::poll(p.data(), p.size(), -1);
    if (rc < 0 && errno == EINTR) continue;
    if (rc < 0 || p[2].revents != 0) return;
    for (int side = 0; side < 2; ++side) {
      const int from = side == 0 ? a : b, to = side == 0 ? b : a;
      bool& open = side == 0 ? a_open : b_open;
      if (!open || p[static_cast<size_t>(side)].revents == 0) continue;
      const ssize_t r = ::recv(from, buf.data(), buf.size(), 0);
      if (r < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
      if (r <= 0) {
        open = false;
        (void)::shutdown(to, SHUT_WR);
        if (r < 0) return;  // a reset: end both
        continue;
      }
      if (!WriteAll(to, buf.data(), static_cast<size_t>(r), stop_fd)) return;
    }
  }
}

}  // namespace

struct EgressProxy::Tunnel {
  UniqueFd client;
  std::atomic<bool> done{false};
  std::jthread thread;  // last: joined before the fds above go
};

EgressProxy::EgressProxy(EgressProxyOptions options) : options_(std::move(options)) {}

Result<std::unique_ptr<EgressProxy>> EgressProxy::Start(EgressProxyOptions options) {
  if (options.guard == nullptr) return Err(InvalidArgumentError("egress proxy: no network guard"));
  std::unique_ptr<EgressProxy> proxy(new EgressProxy(std::move(options)));
  proxy->stop_ = UniqueFd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd || !proxy->stop_) {
    return Err(UnavailableError(std::string("egress proxy: socket: ") + std::strerror(errno)));
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(fd.get(), 64) != 0 ||
      ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    return Err(UnavailableError(std::string("egress proxy: listen: ") + std::strerror(errno)));
  }
  proxy->port_ = ntohs(addr.sin_port);
  proxy->listener_ = std::move(fd);
  proxy->acceptor_ = std::jthread([p = proxy.get()] { p->AcceptLoop(); });
  return proxy;
}

EgressProxy::~EgressProxy() {
  const uint64_t one = 1;
  (void)!::write(stop_.get(), &one, sizeof one);
  if (acceptor_.joinable()) acceptor_.join();
  std::list<std::unique_ptr<Tunnel>> tunnels;
  {
    std::lock_guard lock(mu_);
    tunnels.swap(tunnels_);
  }
  for (auto& t : tunnels) t->thread.request_stop();
  tunnels.clear();  // joins each
}

std::vector<std::string> EgressProxy::ChromiumArgs() const {
  return {"--proxy-server=socks5://127.0.0.1:" + std::to_string(port_),
          // Chromium exempts loopback from any proxy unless told; `<-loopback>` takes that away.
          "--proxy-bypass-list=<-loopback>",
          // WebRTC would otherwise send UDP (and find local addresses) around the proxy.
          "--force-webrtc-ip-handling-policy=disable_non_proxied_udp"};
}

std::vector<std::string> EgressProxy::TakeRefusals() {
  std::lock_guard lock(mu_);
  std::vector<std::string> out(refusals_.begin(), refusals_.end());
  refusals_.clear();
  return out;
}

int EgressProxy::foreign_peers() const {
  std::lock_guard lock(mu_);
  return foreign_peers_;
}

void EgressProxy::NoteRefusal(std::string message) {
  std::lock_guard lock(mu_);
  if (refusals_.size() >= kMaxRefusals) refusals_.pop_front();
  refusals_.push_back(std::move(message));
}

void EgressProxy::ReapFinished() {
  for (auto it = tunnels_.begin(); it != tunnels_.end();) {
    if ((*it)->done.load()) {
      it = tunnels_.erase(it);  // the thread has returned: the join is immediate
    } else {
      ++it;
    }
  }
}

void EgressProxy::AcceptLoop() {
  sockaddr_in local{};
  socklen_t local_len = sizeof local;
  (void)::getsockname(listener_.get(), reinterpret_cast<sockaddr*>(&local), &local_len);
  const uid_t me = ::geteuid();
  for (;;) {
    if (!WaitFd(listener_.get(), POLLIN, stop_.get(), Clock::time_point::max())) return;
    sockaddr_in peer{};
    socklen_t peer_len = sizeof peer;
    UniqueFd client(::accept4(listener_.get(), reinterpret_cast<sockaddr*>(&peer), &peer_len,
                              SOCK_CLOEXEC | SOCK_NONBLOCK));
    if (!client) continue;
    if (SocketUid(peer, local) != static_cast<long>(me)) {
      std::lock_guard lock(mu_);
      ++foreign_peers_;
      continue;  // closed unanswered
    }
    const int one = 1;
    (void)::setsockopt(client.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    std::lock_guard lock(mu_);
    ReapFinished();
    if (tunnels_.size() >= options_.max_connections) continue;
    auto tunnel = std::make_unique<Tunnel>();
    tunnel->client = std::move(client);
    Tunnel* t = tunnel.get();
    tunnels_.push_back(std::move(tunnel));
    t->thread = std::jthread([this, t](const std::stop_token& stop) {
      Serve(*t, stop);
      t->done.store(true);
    });
  }
}

void EgressProxy::Serve(Tunnel& tunnel, const std::stop_token& stop) {
  const int fd = tunnel.client.get();
  const int stop_fd = stop_.get();
  const auto deadline = Clock::now() + kHandshakeTimeout;
  // Greeting: VER NMETHODS METHODS...; only "no authentication" (0) is offered back.
  std::array<uint8_t, 257> buf{};
  if (!ReadExactly(fd, buf.data(), 2, stop_fd, deadline) || buf[0] != 5) return;
  const size_t methods = buf[1];
  if (!ReadExactly(fd, buf.data(), methods, stop_fd, deadline)) return;
  bool no_auth = false;
  for (size_t i = 0; i < methods; ++i) no_auth = no_auth || buf[i] == 0;
  const std::array<uint8_t, 2> choice{5, static_cast<uint8_t>(no_auth ? 0x00 : 0xFF)};
  if (!WriteAll(fd, choice.data(), choice.size(), stop_fd) || !no_auth) return;
  // Request: VER CMD RSV ATYP DST.ADDR DST.PORT.
  if (!ReadExactly(fd, buf.data(), 4, stop_fd, deadline) || buf[0] != 5) return;
  const uint8_t command = buf[1], type = buf[3];
  std::string host;
  if (type == 1) {
    if (!ReadExactly(fd, buf.data(), 4, stop_fd, deadline)) return;
    char text[INET_ADDRSTRLEN];
    host = ::inet_ntop(AF_INET, buf.data(), text, sizeof text);
  } else if (type == 4) {
    if (!ReadExactly(fd, buf.data(), 16, stop_fd, deadline)) return;
    char text[INET6_ADDRSTRLEN];
    host = std::string("[") + ::inet_ntop(AF_INET6, buf.data(), text, sizeof text) + "]";
  } else if (type == 3) {
    if (!ReadExactly(fd, buf.data(), 1, stop_fd, deadline)) return;
    const size_t n = buf[0];
    if (!ReadExactly(fd, buf.data(), n, stop_fd, deadline)) return;
    auto named = AuthorityHost(std::string_view(reinterpret_cast<char*>(buf.data()), n));
    if (!named) return Reply(fd, kAddressNotSupported, stop_fd);
    host = std::move(*named);
  } else {
    return Reply(fd, kAddressNotSupported, stop_fd);
  }
  if (!ReadExactly(fd, buf.data(), 2, stop_fd, deadline)) return;
  const int port = (buf[0] << 8) | buf[1];
  if (command != 1) return Reply(fd, kCommandNotSupported, stop_fd);
  const std::string where = host + ":" + std::to_string(port);
  if (port == 0) {
    NoteRefusal("network guard: port 0 is not a destination (rule: reserved) [socket " + where +
                "]");
    return Reply(fd, kNotAllowed, stop_fd);
  }

  // The judgement: the guard resolves the name (once, here) and judges every address; the
  // tunnel then goes only to one of those addresses. The scheme is not known at this layer and
  // the guard's rules do not depend on it.
  auto admitted = options_.guard->Admit("http://" + where + "/", stop);
  if (!admitted) {
    if (!web::RefusalRule(admitted.error()).empty() ||
        admitted.error().code() == StatusCode::kPermissionDenied) {
      NoteRefusal(admitted.error().message() + " [socket " + where + "]");
      return Reply(fd, kNotAllowed, stop_fd);
    }
    return Reply(fd, kHostUnreachable, stop_fd);
  }
  const auto connect_deadline = Clock::now() + options_.connect_timeout;
  UniqueFd upstream;
  int error = 0;
  for (const web::IpAddress& address : admitted->addresses) {
    // Never a tunnel into the proxy itself (an allow list naming 127.0.0.1/8 would admit it).
    if (!address.v6 && address.v4() == INADDR_LOOPBACK && port == port_) {
      NoteRefusal(
          "network guard: the browser's own proxy is not a destination (rule: loopback) "
          "[socket " +
          where + "]");
      return Reply(fd, kNotAllowed, stop_fd);
    }
    upstream = ConnectTo(address, port, stop_fd, connect_deadline, error);
    if (upstream) break;
  }
  if (!upstream) {
    return Reply(fd,
                 error == ECONNREFUSED ? kConnectionRefused
                 : error == ETIMEDOUT  ? kHostUnreachable
                                       : kGeneralFailure,
                 stop_fd);
  }
  Reply(fd, kSucceeded, stop_fd);
  Splice(fd, upstream.get(), stop_fd);
}

}  // namespace talaria::browser
