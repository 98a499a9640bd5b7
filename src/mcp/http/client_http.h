// The MCP client's Streamable HTTP transport (protocol 2025-03-26 .. 2025-11-25), as a
// Connection the supervisor uses like the stdio one:
//
//   POST   every message, with `Accept: application/json, text/event-stream`; a request's answer
//          is either one JSON body or an event stream carrying notifications (passed on), server
//          requests (ping answered, others refused) and finally the response. Notifications
//          expect 202.
//   GET    after the handshake, when the server says tools.listChanged: an event stream for
//          server-initiated messages, reopened (with Last-Event-ID, after the server's `retry`)
//          when it ends; 405 means the server offers none.
//   DELETE on Close, ending the session.
//
// The initialize answer's MCP-Session-Id is echoed on every later request, and the negotiated
// MCP-Protocol-Version too. A 404 for our session, or a refused connection, closes the
// connection (on_closed fires; the supervisor re-initializes).
//
// Each POST has an httplib client to itself, stopped (the connection's RequestWatch sees to
// it) when the call's deadline passes, its cancel token fires or the connection closes, so a
// server that hangs or drips bytes never holds a call past its deadline. Bodies and events over
// max_message_bytes fail the request. A client whose POST ended cleanly (the whole answer read,
// nothing stopped) is kept with its connection open for the next POST, so calls to a remote https
// server do not pay a TCP and TLS handshake each; a stopped or cut-short one is dropped with its
// socket. Thread-safety: thread-safe; requests run concurrently. Callbacks run on request threads
// or the event-stream thread and must not block on Call().
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "mcp/client_connection.h"
#include "mcp/http/request_watch.h"
#include "mcp/http_module.h"
#include "mcp/server_url.h"
#include "talaria/mcp/jsonrpc.h"

namespace httplib {
class Client;
}

namespace talaria::mcp::client_internal {

class HttpConnection final : public Connection {
 public:
  // Checks the URL; connects nothing yet (the first Call does). InvalidArgument for a bad URL.
  static Result<std::unique_ptr<HttpConnection>> Open(HttpConnectionOptions options,
                                                      ConnectionCallbacks callbacks);
  ~HttpConnection() override;  // Close()
  HttpConnection(const HttpConnection&) = delete;
  HttpConnection& operator=(const HttpConnection&) = delete;

  Result<Json> Call(std::string_view method, Json params, TimePoint deadline,
                    std::stop_token cancel = {}) override;
  Status Notify(std::string_view method, const Json& params) override;
  void Initialized(const std::string& protocol_version, const Json& capabilities) override;
  bool closed() const override;
  bool NeedsKeepalive() const override { return true; }
  std::string ExitDescription() const override;
  void Close(std::chrono::milliseconds grace) override;

  struct Exchange;  // one POST in flight (client_http.cpp)

 private:
  HttpConnection() = default;
  // POSTs `body`. With `expect_id`, waits for the response with that id and returns its
  // document; without, returns null once the server accepted the message.
  Result<Json> Post(const std::string& body, const Json* expect_id, TimePoint deadline,
                    const std::stop_token& cancel);
  // Dispatches a message a server sent on an event stream; true when it is the awaited response
  // (stored in `exchange`).
  bool HandleIncoming(const Message& message, Exchange* exchange);
  // A client for one POST: an idle kept-alive one when there is one.
  std::unique_ptr<httplib::Client> TakeClient();
  // Keeps a client whose POST ended cleanly for the next one (a few at most).
  void KeepClient(std::unique_ptr<httplib::Client> client);
  void StreamLoop(const std::stop_token& stop);
  void MarkClosed(std::string why);

  HttpServerUrl url_;
  std::string display_url_;
  HttpConnectionOptions options_;
  ConnectionCallbacks callbacks_;
  std::atomic<int64_t> next_id_{1};
  std::stop_source close_source_;  // stops every request in flight
  RequestWatch watch_{close_source_.get_token()};

  mutable std::mutex mu_;
  std::string session_id_;        // Guarded by mu_.
  std::string protocol_version_;  // Guarded by mu_. Empty before initialize.
  bool closed_ = false;           // Guarded by mu_.
  bool closed_notified_ = false;  // Guarded by mu_.
  std::string close_reason_;      // Guarded by mu_.

  struct IdleClient {
    std::unique_ptr<httplib::Client> client;
    std::chrono::steady_clock::time_point since;
  };
  static constexpr size_t kMaxIdleClients = 4;
  // Servers close idle connections after a few seconds (node and httplib after 5): an older one
  // would likely fail the next POST as the server hangs up, so it is not used again.
  static constexpr std::chrono::seconds kMaxIdle{4};
  std::mutex idle_mu_;
  std::vector<IdleClient> idle_;  // Guarded by idle_mu_. Connected, unused; the newest last.
  bool idle_closed_ = false;      // Guarded by idle_mu_. Close ran: nothing is kept any more.

  std::mutex close_mu_;  // serializes Close
  std::jthread stream_;  // the GET event stream, when the server offers one
};

}  // namespace talaria::mcp::client_internal
