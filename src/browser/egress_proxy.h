// The local Chromium's only way out: a SOCKS5 proxy inside talaria, on 127.0.0.1 at a port the
// kernel picks, that the browser is started behind (`ChromiumArgs`). Fetch interception judges
// the URLs a page asks for, but Chromium would resolve the name again itself (a rebinding DNS
// answer can differ from the one judged) and WebSockets, preconnects and service workers never
// reach Fetch. Here every connection Chromium opens — HTTP, HTTPS, ws, wss — names its host to
// the proxy, which resolves it through the network guard (`NetworkGuard::Admit`: the same
// resolution and judgement the web fetcher pins to), connects only to an address it judged, and
// refuses the rest with SOCKS5's "not allowed by ruleset".
//
// SOCKS5 rather than an HTTP proxy: every connection is one tunnel to one host, so no HTTP is
// parsed and no kept-alive proxy connection can carry a second request to another host.
// Chromium sends SOCKS5 no credentials, so the proxy admits a connection only when the socket
// on the other end belongs to talaria's own uid (read from /proc/net/tcp): another local user
// cannot borrow talaria's allow list (`web.allow_private`) or its egress.
//
//   auto proxy = EgressProxy::Start({.guard = guard});
//   args = (*proxy)->ChromiumArgs();   // --proxy-server=socks5://127.0.0.1:P, no bypass
//
// Thread-safety: thread-safe. The destructor stops accepting, ends every tunnel and joins.
#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "talaria/base/status.h"
#include "talaria/base/unique_fd.h"
#include "talaria/web/network_guard.h"

namespace talaria::browser {

struct EgressProxyOptions {
  std::shared_ptr<const web::NetworkGuard> guard;  // required
  std::chrono::milliseconds connect_timeout{15'000};
  // Tunnels open at once; more are closed at accept (Chromium keeps far fewer per profile).
  size_t max_connections = 256;
};

class EgressProxy {
 public:
  // Unavailable when the socket cannot be set up; InvalidArgument without a guard.
  static Result<std::unique_ptr<EgressProxy>> Start(EgressProxyOptions options);
  ~EgressProxy();
  EgressProxy(const EgressProxy&) = delete;
  EgressProxy& operator=(const EgressProxy&) = delete;

  int port() const { return port_; }
  // What Chromium is started with: the proxy for every scheme, nothing bypassing it (not even
  // loopback, which Chromium otherwise exempts), and WebRTC kept off UDP the proxy cannot see.
  std::vector<std::string> ChromiumArgs() const;

  // Refusals since the last call ("network guard: ... (rule: loopback) [socket host:port]"),
  // oldest first, at most the last 64.
  std::vector<std::string> TakeRefusals();
  // Connections refused because their socket was not talaria's uid (for tests).
  int foreign_peers() const;

 private:
  struct Tunnel;
  explicit EgressProxy(EgressProxyOptions options);
  void AcceptLoop();
  void Serve(Tunnel& tunnel, const std::stop_token& stop);
  void NoteRefusal(std::string message);
  void ReapFinished();  // REQUIRES: mu_ held

  EgressProxyOptions options_;
  UniqueFd listener_;
  UniqueFd stop_;  // eventfd: written once by the destructor; every poll watches it
  int port_ = 0;
  std::jthread acceptor_;

  mutable std::mutex mu_;
  std::list<std::unique_ptr<Tunnel>> tunnels_;  // Guarded by mu_.
  std::deque<std::string> refusals_;            // Guarded by mu_.
  int foreign_peers_ = 0;                       // Guarded by mu_.
};

}  // namespace talaria::browser
