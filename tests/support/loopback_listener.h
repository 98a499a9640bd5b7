// A TCP socket listening on 127.0.0.1 at a port the kernel chose, that never accepts: connects
// complete into its backlog and then wait (a server that never answers, or a canary a sandbox
// or a proxy must not reach: BacklogHasConnection tells). Header-only: any test target that links
// talaria_test_support can include "support/loopback_listener.h". Not thread-safe; caller
// synchronises.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include "talaria/base/unique_fd.h"

namespace talaria::test_support {

struct LoopbackListener {
  UniqueFd fd;  // invalid when the socket could not be set up
  int port = 0;
};

inline LoopbackListener ListenOnLoopback() {
  LoopbackListener out;
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) return out;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(fd.get(), 8) != 0 ||
      ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    return out;
  }
  out.port = ntohs(addr.sin_port);
  out.fd = std::move(fd);
  return out;
}

// Whether a connection waits in `listener`'s backlog: a canary the test checks nothing reached.
// Takes that connection off the backlog (so a later check sees only newer ones).
inline bool BacklogHasConnection(const LoopbackListener& listener) {
  // The listening socket blocks: ask poll first, so an empty backlog answers at once.
  pollfd p{.fd = listener.fd.get(), .events = POLLIN, .revents = 0};
  if (::poll(&p, 1, 0) <= 0) return false;
  UniqueFd got(::accept4(listener.fd.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
  return got.valid();
}

}  // namespace talaria::test_support
