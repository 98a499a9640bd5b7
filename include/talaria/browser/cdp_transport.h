// One Chrome DevTools Protocol connection: whole JSON messages in both directions. The local
// browser is reached over `--remote-debugging-pipe` (OpenPipe; the pipe closes when talaria dies,
// so the browser exits with it), a remote one over a WebSocket (ConnectWebSocket).
//
//   auto t = talaria::browser::ConnectWebSocket({.url = "ws://127.0.0.1:9222/devtools/browser/x"});
//   (*t)->Send(R"({"id":1,"method":"Browser.getVersion"})");
//   auto reply = (*t)->Receive(std::chrono::steady_clock::now() + 5s, stop);
//
// Thread-safety: Send may be called from any thread (messages are never interleaved); Receive
// from one reader thread at a time; Close from any thread, and it wakes a blocked Receive.
#pragma once

#include <chrono>
#include <memory>
#include <stop_token>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "talaria/base/status.h"

namespace talaria::browser {

class CdpTransport {
 public:
  virtual ~CdpTransport() = default;
  // Unavailable once the connection is closed.
  virtual Status Send(std::string_view message) = 0;
  // The next whole message. DeadlineExceeded at `deadline`, Cancelled when `cancel` fires,
  // Unavailable when the peer closed or Close was called.
  virtual Result<std::string> Receive(std::chrono::steady_clock::time_point deadline,
                                      std::stop_token cancel) = 0;
  virtual void Close() = 0;
};

// Chromium's pipe framing (messages end with a NUL byte) over two descriptors the transport
// takes ownership of: `read_fd` is the browser's fd 4, `write_fd` its fd 3.
Result<std::unique_ptr<CdpTransport>> OpenPipe(int read_fd, int write_fd);

struct WebSocketOptions {
  std::string url;                                           // ws:// or wss://
  std::vector<std::pair<std::string, std::string>> headers;  // sent with the upgrade request
  std::chrono::milliseconds connect_timeout{10'000};
  // Messages larger than this close the connection with an error (a hostile peer).
  size_t max_message_bytes = size_t{64} << 20;
};
// Errors: InvalidArgument (not a ws/wss URL), Unavailable (connect, TLS or upgrade failed; the
// message says which), DeadlineExceeded.
Result<std::unique_ptr<CdpTransport>> ConnectWebSocket(const WebSocketOptions& options);

}  // namespace talaria::browser
