// The accept loop the raw test servers share: a TCP socket on 127.0.0.1 at a port the kernel
// chose, a thread that accepts one connection at a time, bounds every read on it (5 s), hands
// it to `serve` and closes it. RawReplyServer (loopback_http.h) and FakeSmtpServer
// (fake_smtp_server.h) are built on it; each says only what it answers.
// Header-only; include it from test files only. Declare the loop as its owner's LAST member:
// it starts serving when constructed and stops (joins) first when destroyed, so `serve` never
// sees a member that is not there.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <string>
#include <thread>
#include <utility>

namespace talaria_test {

class LoopbackAcceptLoop {
 public:
  // `serve(conn, n)`: the n-th connection (0-based); the loop closes `conn` afterwards.
  using Serve = std::function<void(int conn, int n)>;

  explicit LoopbackAcceptLoop(Serve serve, int backlog = 16) : serve_(std::move(serve)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
        ::listen(fd_, backlog) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      return;  // port() stays 0: the test's first request fails and says so
    }
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { Run(); });
  }
  LoopbackAcceptLoop(const LoopbackAcceptLoop&) = delete;
  LoopbackAcceptLoop& operator=(const LoopbackAcceptLoop&) = delete;
  ~LoopbackAcceptLoop() {
    stopping_ = true;
    if (fd_ >= 0) ::shutdown(fd_, SHUT_RDWR);  // wakes accept4
    if (thread_.joinable()) thread_.join();
    if (fd_ >= 0) ::close(fd_);
  }

  int port() const { return port_; }
  int connections() const { return connections_; }

  // Writes all of `s` unless the peer goes away (no SIGPIPE).
  static void WriteAll(int conn, const std::string& s) {
    size_t sent = 0;
    while (sent < s.size()) {
      const ssize_t n = ::send(conn, s.data() + sent, s.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return;
      sent += static_cast<size_t>(n);
    }
  }

 private:
  void Run() {
    while (!stopping_) {
      const int conn = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (conn < 0) return;
      timeval tv{5, 0};  // every read bounded
      ::setsockopt(conn, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
      serve_(conn, connections_++);
      ::close(conn);
    }
  }

  Serve serve_;
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<int> connections_{0};
  std::thread thread_;
};

}  // namespace talaria_test
