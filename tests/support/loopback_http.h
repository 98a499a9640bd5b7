// Small real servers on 127.0.0.1 (port 0) for the HTTP client's and the model client's tests:
// a cpp-httplib server that counts the connections it served and can hold handlers until the
// test releases them, and a raw TCP server that answers each connection with scripted bytes and
// then closes it (a response cut off mid-body, a peer that vanishes; loopback_accept_loop.h).
// Header-only; include it from test files only (it pulls in httplib.h).
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>

#include <httplib.h>

#include "loopback_accept_loop.h"

namespace talaria_test {

class LoopbackHttpServer {
 public:
  // `routes` registers the handlers on the server before it starts.
  explicit LoopbackHttpServer(const std::function<void(httplib::Server&)>& routes) {
    server_.set_tcp_nodelay(true);
    server_.set_keep_alive_max_count(1000);
    server_.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response&) {
      std::lock_guard lock(mu_);
      client_ports_.insert(req.remote_port);
      ++requests_;
      return httplib::Server::HandlerResponse::Unhandled;
    });
    routes(server_);
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    for (int i = 0; i < 5000 && !server_.is_running(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  LoopbackHttpServer(const LoopbackHttpServer&) = delete;
  LoopbackHttpServer& operator=(const LoopbackHttpServer&) = delete;
  ~LoopbackHttpServer() {
    Release();
    server_.stop();
    thread_.join();
  }

  int port() const { return port_; }
  std::string url(const std::string& path = "") const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }
  // Connections (client ports) the server answered requests on, and requests answered.
  int connections() const {
    std::lock_guard lock(mu_);
    return static_cast<int>(client_ports_.size());
  }
  int requests() const {
    std::lock_guard lock(mu_);
    return requests_;
  }

  // A handler holding until the test lets it go (bounded: false after `max`).
  bool WaitReleased(std::chrono::milliseconds max = std::chrono::seconds(10)) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, max, [this] { return released_; });
  }
  void Release() {
    {
      std::lock_guard lock(mu_);
      released_ = true;
    }
    cv_.notify_all();
  }
  // A signal the other way: the test waits until a handler says it got somewhere.
  void Signal() {
    {
      std::lock_guard lock(mu_);
      ++signals_;
    }
    cv_.notify_all();
  }
  bool WaitSignals(int count, std::chrono::milliseconds max = std::chrono::seconds(10)) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, max, [&] { return signals_ >= count; });
  }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::set<int> client_ports_;  // Guarded by mu_.
  int requests_ = 0;            // Guarded by mu_.
  bool released_ = false;       // Guarded by mu_.
  int signals_ = 0;             // Guarded by mu_.
};

// Accepts connections on 127.0.0.1; for each, reads the request head (and a Content-Length
// body), writes `reply(n)` for the n-th connection (0-based) and closes the connection.
class RawReplyServer {
 public:
  explicit RawReplyServer(std::function<std::string(int)> reply)
      : reply_(std::move(reply)), loop_([this](int conn, int n) { Answer(conn, n); }) {}

  int port() const { return loop_.port(); }
  std::string url(const std::string& path = "") const {
    return "http://127.0.0.1:" + std::to_string(port()) + path;
  }
  int connections() const { return loop_.connections(); }

 private:
  void Answer(int conn, int n) {
    std::string request;
    char buf[4096];
    size_t head_end = std::string::npos;
    while (head_end == std::string::npos) {
      const ssize_t got = ::read(conn, buf, sizeof(buf));
      if (got <= 0) break;
      request.append(buf, static_cast<size_t>(got));
      head_end = request.find("\r\n\r\n");
    }
    size_t want = 0;
    const size_t cl = request.find("Content-Length: ");
    if (cl != std::string::npos && cl < head_end) want = std::stoul(request.substr(cl + 16));
    while (head_end != std::string::npos && request.size() < head_end + 4 + want) {
      const ssize_t got = ::read(conn, buf, sizeof(buf));
      if (got <= 0) break;
      request.append(buf, static_cast<size_t>(got));
    }
    LoopbackAcceptLoop::WriteAll(conn, reply_(n));
  }

  std::function<std::string(int)> reply_;
  LoopbackAcceptLoop loop_;  // last: serves once everything else is there, stops first
};

// A port on 127.0.0.1 nothing listens on (bound, then closed).
inline int UnusedLoopbackPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

}  // namespace talaria_test
