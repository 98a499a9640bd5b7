// HttpClient: outbound HTTP(S) for talaria's own requests (the model endpoint; later the web
// tools' fetcher behind the network guard). One client keeps its connections alive between
// requests; the response body is handed over as it arrives, so a caller can stream it.
//
//   auto client = talaria::net::MakeHttpClient();
//   talaria::net::HttpRequest req{.method = "POST", .url = url, .body = body};
//   auto head = (*client)->Send(req, [&](std::string_view chunk) { parse(chunk); return true; },
//                               stop_token);
//
// The implementation (libcurl) lives in libtalaria_net.so, loaded on first use: libcurl and the
// libraries it brings cost every start of talaria ~3 ms of dynamic loading, and most starts
// (an MCP server, a CLI command) never make an outbound request.
// Thread-safety: one HttpClient serves one request at a time; use one per thread. Clients made
// from one ConnectionPool share kept-alive connections and TLS sessions across threads.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "talaria/base/status.h"

namespace talaria::net {

using HeaderList = std::vector<std::pair<std::string, std::string>>;

struct HttpRequest {
  std::string method = "GET";
  std::string url;
  HeaderList headers;
  std::string body;
  std::chrono::milliseconds connect_timeout{30'000};
  // The longest silence allowed while the response arrives (headers or body); 0: none.
  std::chrono::milliseconds idle_timeout{120'000};
  // The whole exchange; 0: none.
  std::chrono::milliseconds total_timeout{0};
  // HTTPS: PEM certificates to trust instead of the system's (a private CA, a local proxy);
  // empty: the system's. The peer's certificate and host name are always verified.
  std::string ca_file;
  // HTTPS, in memory: PEM certificates to trust (as ca_file, which it replaces), and a client
  // certificate with its private key for a server that asks for one (a Kubernetes API server's
  // kubeconfig user). Empty: none.
  std::string ca_pem;
  std::string client_cert_pem;
  std::string client_key_pem;
  // Connect only to these addresses (IP literals) for the URL's host and port: libcurl does not
  // resolve the name itself, and a socket to any other address is refused before it is opened
  // (PermissionDenied). The network guard's pin: the address judged is the address used. With a
  // proxy the socket goes to the proxy, which resolves the name; the pin then only fixes what
  // libcurl would have resolved. Empty: libcurl resolves as usual.
  std::vector<std::string> pinned_addresses;
  // nullopt: libcurl's default (http_proxy, https_proxy, all_proxy and no_proxy from the
  // environment); "": no proxy; else the proxy's URL.
  std::optional<std::string> proxy;
  // Ask for a compressed body (whatever libcurl was built with: gzip, deflate, br, zstd) and
  // hand it to the sink decoded. Off by default: a compressing server holds back small pieces of
  // an event stream.
  bool decompress = false;
  // > 0: at most this many body bytes reach the sink; the transfer then stops and Send returns
  // the head with `truncated` set (the rest is never read).
  size_t max_body_bytes = 0;
};

struct HttpResponseHead {
  int status = 0;
  HeaderList headers;      // names as the server sent them
  bool truncated = false;  // the body passed HttpRequest::max_body_bytes and was cut there
  // The first header of that name, compared case-insensitively; empty when absent.
  std::string Header(std::string_view name) const;
};

// Receives the body as it arrives; return false to stop the transfer (Send then returns
// Cancelled).
using BodySink = std::function<bool(std::string_view chunk)>;

class HttpClient {
 public:
  virtual ~HttpClient() = default;
  // Sends `request` and streams the body into `on_body` (for any status: the caller reads an
  // error body too). Returns the status line and headers once the body is complete.
  // Errors: InvalidArgument (bad URL), Unavailable (cannot resolve or connect, TLS failure, the
  // connection dropped mid-body), DeadlineExceeded (idle or total timeout), Cancelled (`stop`
  // requested or the sink returned false). The message names the host, never the headers.
  virtual Result<HttpResponseHead> Send(const HttpRequest& request, const BodySink& on_body,
                                        std::stop_token stop = {}) = 0;
};

// True for the Unavailable errors of Send that mean no connection was made (the host did not
// resolve, refused, or did not answer within connect_timeout): nothing reached the server, and
// trying the same endpoint again at once will most likely fail the same way.
bool IsConnectFailure(const Status& status);

// A new client. Errors: Unavailable when libtalaria_net.so cannot be loaded (the message names
// the file and the loader's error).
Result<std::unique_ptr<HttpClient>> MakeHttpClient();

// A cache of kept-alive connections and TLS sessions that clients on several threads share (the
// web fetcher's parallel fetches reuse each other's connections). Opaque; thread-safe.
class ConnectionPool {
 public:
  virtual ~ConnectionPool() = default;
};

// A new pool; errors as MakeHttpClient's.
Result<std::shared_ptr<ConnectionPool>> MakeConnectionPool();
// A client whose connections live in `pool` (kept alive by the client). REQUIRES: pool came from
// MakeConnectionPool.
Result<std::unique_ptr<HttpClient>> MakeHttpClient(std::shared_ptr<ConnectionPool> pool);

}  // namespace talaria::net
