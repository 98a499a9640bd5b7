// A small HTTP/1.1 server for the MCP endpoint, built so that no client can hold the server
// before it has shown who it is.
//
// One gate thread owns the listening socket and every connection that is not being answered: it
// reads request heads on a poll loop, each connection against a total deadline (not a per-read
// one), parses them strictly (one Host, one Origin, one well-formed Content-Length; size and
// count limits answered with 431 as soon as they are crossed), hands the head to a screen
// (Host, Origin, authentication) right after the headers, and only then reads the body, again
// against a total deadline. Complete, screened requests go to a fixed pool of worker threads,
// which run the handler and write the response (a body, or a chunked stream such as SSE); a
// kept-alive connection then goes back to the gate for its next head. So half-open or slow
// connections cost a file descriptor and a few bytes, never a worker, and refused requests are
// answered by the gate without touching the pool.
//
// Connections are capped per client address; when an address is at its cap, its oldest
// connection still waiting for a head is closed to admit the new one (a client that is being
// answered is never evicted), so a flood of idle connections cannot lock anyone out.
//
// No TLS: the server speaks plain HTTP on loopback or behind a proxy.
//
// Thread-safety: thread-safe. The screen runs on the gate thread and must not block; handlers
// run on worker threads.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "talaria/base/status.h"

namespace talaria::mcp::http_internal {

struct HttpHeader {
  std::string name;   // as sent
  std::string value;  // surrounding blanks removed
};

// A parsed request. Header names compare case-insensitively.
struct HttpRequest {
  std::string method;
  std::string target;     // as sent
  std::string path;       // target without its query
  int minor_version = 1;  // HTTP/1.<minor_version>
  std::vector<HttpHeader> headers;
  std::string body;
  std::string peer;  // the client's address ("127.0.0.1", "::1")

  bool has_header(std::string_view name) const;
  // The first value of `name`; empty when absent.
  std::string get_header_value(std::string_view name) const;
};

// Where a streamed response body goes. write() is false once the client is gone or too slow.
class StreamSink {
 public:
  virtual ~StreamSink() = default;
  virtual bool write(const char* data, size_t size) = 0;
  // Ends the stream cleanly (the connection may then serve another request).
  virtual void done() = 0;
};

struct HttpResponse {
  int status = 200;
  std::vector<HttpHeader> headers;
  std::string body;
  // A streamed body (chunked): called again and again until it returns false or calls
  // sink.done(). Each call should return within about a second, so Stop is seen.
  std::function<bool(StreamSink& sink)> stream;
  // Called once when the stream ends, however it ends.
  std::function<void()> on_stream_end;

  void set_header(std::string_view name, std::string_view value);
  void set_content(std::string content, std::string_view content_type);
  void set_chunked_content_provider(std::string_view content_type,
                                    std::function<bool(StreamSink&)> provider,
                                    std::function<void()> on_end);
  bool has_header(std::string_view name) const;
  std::string get_header_value(std::string_view name) const;
};

struct HttpServerOptions {
  std::string host = "127.0.0.1";
  int port = 0;  // 0: an ephemeral port
  size_t worker_threads = 32;
  // The whole head (request line and headers) must arrive within this long of the connection
  // being accepted (or going back to the gate after a kept-alive response).
  std::chrono::milliseconds header_timeout{10'000};
  // The whole body must arrive within this long of the end of its head.
  std::chrono::milliseconds body_timeout{30'000};
  // A response write that makes no progress for this long ends the connection.
  std::chrono::milliseconds write_timeout{30'000};
  size_t max_head_bytes = 16 * 1024;         // beyond: 431
  size_t max_headers = 100;                  // beyond: 431
  size_t max_body_bytes = size_t{16} << 20;  // beyond: 413
  size_t max_connections_per_address = 64;
  size_t max_connections = 1024;
};

// Looks at a complete head (body not read yet, `body` empty): nullopt lets the request through
// to its body and the handler; a response is sent as is and the connection closed.
using HeadScreen = std::function<std::optional<HttpResponse>(const HttpRequest& head)>;
// Answers a complete request; runs on a worker thread.
using HttpHandler = std::function<void(const HttpRequest& request, HttpResponse& response)>;

class HttpServer {
 public:
  // Binds and listens; nothing is accepted before Run. Errors: InvalidArgument (bad options),
  // Unavailable (the address cannot be resolved or bound).
  static Result<std::unique_ptr<HttpServer>> Bind(HttpServerOptions options);
  virtual ~HttpServer() = default;
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // The bound port.
  virtual int port() const = 0;
  // Starts the gate and worker threads. REQUIRES: called once, before Stop.
  virtual void Run(HeadScreen screen, HttpHandler handler) = 0;
  // Stops accepting, closes every connection the gate holds, lets the workers finish the
  // requests they are answering (streams end when their provider sees the owner stopping) and
  // joins every thread. Idempotent.
  virtual void Stop() = 0;

 protected:
  HttpServer() = default;
};

// The reason phrase for a status ("Not Found"); "Unknown" for others.
std::string_view StatusReason(int status);

}  // namespace talaria::mcp::http_internal
