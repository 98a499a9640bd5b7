// The MCP Streamable HTTP transport (protocol 2025-03-26 .. 2025-11-25): one endpoint, `/mcp`.
//
//   POST   one JSON-RPC message. A request is answered with its response as application/json,
//          or as text/event-stream when the client accepts event streams and the server has
//          something related to send before the response (progress, log messages of the call,
//          requests to the client such as elicitation/create); the response comes last, then
//          the stream ends. The client's answer to such a request is a new POST.
//          Notifications and responses get 202 with no body.
//   GET    an event stream of the session's server-initiated messages (list_changed, resource
//          updates, log messages outside calls); one per session at a time (409 for a second).
//   DELETE ends the session: its running calls are cancelled; later requests get 404.
//
// Each session (created by `initialize`, named by a random MCP-Session-Id) owns its own
// McpServer, made by the ServerFactory. After initialize every request must carry the session
// id (400 when missing, 404 when unknown or ended) and may carry MCP-Protocol-Version (400 when
// unsupported; absent means 2025-03-26).
//
// Security, checked on every request right after its headers, before its body is read: the
// Host header must name the bound address, a loopback name or an allowed host (403); an Origin
// header, when present, must be the server's own origin (http://<a name of the bound address>:
// <port>) or an allowed one (403); with a bearer token configured, `Authorization: Bearer
// <token>` is required (401; compared in constant time). Binding a non-loopback address without
// a token is refused. Heads are read by one gate thread against a total deadline (408 beyond),
// parsed strictly (a duplicate Host, Origin or Content-Length, or a malformed Content-Length,
// gets 400; an oversized head or too many headers 431, as soon as the limit is crossed); only
// screened requests reach the worker threads, so connections that never finish a head hold no
// worker. Connections and sessions are capped per client address. Bodies over limits.max_bytes
// get 413; malformed JSON gets 400 with a JSON-RPC -32700 error body.
//
//   auto http = talaria::mcp::HttpTransport::Start(options, [&](talaria::mcp::RoutedSink sink) {
//     return talaria::mcp::McpServer::Create(dispatcher, toolsets, server_options,
//     std::move(sink));
//   });
//   std::fprintf(stderr, "%s\n", (*http)->url().c_str());
//   ...  // until a signal
//   (*http)->Stop();
//
// Thread-safety: thread-safe. Requests are served on the transport's own worker threads.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "talaria/base/status.h"
#include "talaria/mcp/jsonrpc.h"
#include "talaria/mcp/server.h"

namespace talaria::mcp {

// HOST:PORT as given to `talaria mcp --http`: "127.0.0.1:8765", "localhost:0", "[::1]:8765",
// ":8765" or "8765" (host 127.0.0.1). Port 0 asks for an ephemeral port.
struct HostPort {
  std::string host;  // without brackets
  int port = 0;
};
// InvalidArgument for a missing or out-of-range port or an empty bracketed host.
Result<HostPort> ParseHostPort(std::string_view text);

// True for "localhost", 127.0.0.0/8 and ::1 (bracketed or not).
bool IsLoopbackHost(std::string_view host);

// Makes the McpServer of a new session; everything it sends goes to `sink`, which routes each
// message by the request it belongs to.
using ServerFactory = std::function<Result<std::unique_ptr<McpServer>>(RoutedSink sink)>;

struct HttpTransportOptions {
  std::string host = "127.0.0.1";
  int port = 0;  // 0: an ephemeral port (see HttpTransport::port())
  // Non-empty: every request needs `Authorization: Bearer <bearer_token>`. Required when `host`
  // is not a loopback address.
  std::string bearer_token;
  // Origins accepted besides the server's own, exactly as browsers send them
  // ("https://app.example.com", "http://localhost:5173"; compared case-insensitively).
  std::vector<std::string> allowed_origins;
  // Host header values accepted besides the bound address and loopback names ("myhost:8765").
  std::vector<std::string> allowed_hosts;
  MessageLimits limits;      // limits.max_bytes caps request bodies (413 beyond)
  size_t max_sessions = 64;  // initialize beyond this gets 503 (idle sessions expire first)
  // Per client address, likewise. On loopback every client shares one address; reached over a
  // network, it keeps one host from taking every session.
  size_t max_sessions_per_address = 64;
  // A session not used for this long is ended (checked every reap_interval, and whenever room
  // is needed for a new one).
  std::chrono::milliseconds session_idle_timeout{std::chrono::hours(1)};
  // The same for sessions created while no bearer token is configured: anyone who can connect
  // can make those.
  std::chrono::milliseconds anonymous_session_idle_timeout{std::chrono::minutes(5)};
  std::chrono::milliseconds reap_interval{std::chrono::seconds(30)};
  // A request's head must arrive whole within this long of the connection opening (or of the
  // previous response on a kept-alive connection); its body within body_timeout after that.
  std::chrono::milliseconds header_timeout{std::chrono::seconds(10)};
  std::chrono::milliseconds body_timeout{std::chrono::seconds(30)};
  // Open connections per client address; at the cap, the address's oldest connection still
  // waiting for its head is closed to admit a new one.
  size_t max_connections_per_address = 64;
  // A POSTed request whose response takes longer gets a JSON-RPC internal error.
  std::chrono::seconds request_timeout{3600};
  // Threads answering screened requests; each open event stream or pending request holds one.
  // Connections waiting for a head hold none.
  size_t worker_threads = 32;
  // How long running calls get to finish when a session ends or the transport stops.
  std::chrono::milliseconds shutdown_grace{0};
};

class HttpTransport {
 public:
  // Binds and starts serving on a thread of its own; returns once the port is bound. The
  // transport lives in libtalaria_http.so (beside libtalaria), loaded on the first Start, so
  // programs that never serve HTTP never load the HTTP and TLS libraries.
  // Errors: InvalidArgument (bad options; non-loopback host without a bearer token),
  // Unavailable (the address cannot be bound, or the HTTP module cannot be loaded).
  static Result<std::unique_ptr<HttpTransport>> Start(HttpTransportOptions options,
                                                      ServerFactory factory);
  // Implementations stop serving first.
  virtual ~HttpTransport() = default;
  HttpTransport(const HttpTransport&) = delete;
  HttpTransport& operator=(const HttpTransport&) = delete;

  // The bound port (the actual one when options.port was 0).
  virtual int port() const = 0;
  // "http://HOST:PORT/mcp" (IPv6 hosts in brackets).
  virtual std::string url() const = 0;
  virtual size_t session_count() const = 0;

  // Stops accepting connections, ends open event streams and waiting requests, then ends every
  // session (running calls get options.shutdown_grace, then are cancelled). Idempotent.
  virtual void Stop() = 0;

 protected:
  HttpTransport() = default;
};

}  // namespace talaria::mcp
