// A client connection to one MCP server, and its stdio implementation. `Connection` is what the
// supervisor (client_manager.cpp) and the tool handlers use, whatever the transport; the HTTP
// one is in client_http.h.
//
// StdioConnection: the child (own process group, pidfd), a reader thread that decodes
// newline-delimited JSON-RPC from its stdout, and requests matched to their responses through
// an id -> promise map. The child's stderr is drained separately (never mixed into the protocol
// stream); its tail is kept for error messages.
// Thread-safety: thread-safe. Callbacks run on a transport thread and must not block on Call().
#pragma once

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "talaria/base/json.h"
#include "talaria/base/status.h"
#include "talaria/base/unique_fd.h"
#include "talaria/mcp/jsonrpc.h"

namespace talaria::mcp::client_internal {

struct ConnectionCallbacks {
  // A notification from the server (method + params).
  std::function<void(const std::string& method, const Json& params)> on_notification;
  // The server's stdout closed (the process died or exited). Called once.
  std::function<void()> on_closed;
};

// A JSON-RPC response document as Call() reports it: its "result" ({} when absent), or
// FailedPrecondition "<message> (code N)" for an error answer.
Result<Json> ResultOfResponse(const Json& doc);

class Connection {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;
  virtual ~Connection() = default;

  // Sends a request and waits for its response's "result". Unavailable when the connection is
  // closed (or closes meanwhile); DeadlineExceeded / Cancelled (after sending
  // notifications/cancelled) when `deadline` passes or `cancel` fires first; a JSON-RPC error
  // answer becomes FailedPrecondition carrying "<message> (code N)".
  virtual Result<Json> Call(std::string_view method, Json params, TimePoint deadline,
                            std::stop_token cancel = {}) = 0;
  // Unavailable when the connection is closed.
  virtual Status Notify(std::string_view method, const Json& params) = 0;
  // Told once the handshake is done (initialize answered, initialized sent): the negotiated
  // version and the server's capabilities.
  virtual void Initialized(const std::string& /*protocol_version*/, const Json& /*capabilities*/) {}

  virtual bool closed() const = 0;
  // The server process while it runs (stdio), else 0.
  virtual int64_t pid() const { return 0; }
  // True when nothing tells the client that the server went away (no process to watch), so
  // the supervisor pings it now and then.
  virtual bool NeedsKeepalive() const { return false; }
  // What the server printed last (stdio: its stderr tail; unredacted).
  virtual std::string StderrTail() const { return {}; }
  // How the server ended ("exited with code N", "killed by signal N"), once known; else empty.
  virtual std::string ExitDescription() const { return {}; }

  // Ends the connection; in-flight calls fail Unavailable. Idempotent.
  virtual void Close(std::chrono::milliseconds grace) = 0;
};

class StdioConnection final : public Connection {
 public:
  // Spawns argv with exactly `env` as its environment. Errors as StartProcess's (NotFound for
  // a missing program).
  static Result<std::unique_ptr<StdioConnection>> Start(const std::vector<std::string>& argv,
                                                        const std::vector<std::string>& env,
                                                        ConnectionCallbacks callbacks);
  ~StdioConnection() override;  // Close()
  StdioConnection(const StdioConnection&) = delete;
  StdioConnection& operator=(const StdioConnection&) = delete;

  Result<Json> Call(std::string_view method, Json params, TimePoint deadline,
                    std::stop_token cancel = {}) override;
  Status Notify(std::string_view method, const Json& params) override;

  bool closed() const override;
  int64_t pid() const override { return pid_; }
  // The last few KB the server wrote to stderr (redacted by the caller before display).
  std::string StderrTail() const override;
  // "exited with code N" / "killed by signal N" once the child is gone; else empty.
  std::string ExitDescription() const override;

  // Closes stdin, gives the server `grace` to exit, then ends its process group, joins the
  // reader and reaps the child. Idempotent.
  void Close(std::chrono::milliseconds grace) override;

 private:
  StdioConnection() = default;
  void ReaderLoop(const std::stop_token& stop);
  void HandleLine(std::string_view line);
  void FailPending(const Status& status);
  bool WriteLine(std::string_view line);
  void Reap(bool block);

  pid_t pid_ = -1;
  UniqueFd pidfd_;
  UniqueFd wake_;    // eventfd: wakes the reader for Close
  UniqueFd out_fd_;  // child's stdout, non-blocking
  UniqueFd err_fd_;  // child's stderr, non-blocking
  ConnectionCallbacks callbacks_;

  std::mutex write_mu_;
  UniqueFd in_fd_;  // child's stdin. Guarded by write_mu_.

  mutable std::mutex mu_;
  int64_t next_id_ = 1;                                    // Guarded by mu_.
  std::map<int64_t, std::promise<Result<Json>>> pending_;  // Guarded by mu_.
  bool closed_ = false;                                    // Guarded by mu_.
  std::string stderr_tail_;                                // Guarded by mu_.
  std::string exit_description_;                           // Guarded by mu_.
  bool reaped_ = false;                                    // Guarded by mu_.

  std::mutex close_mu_;  // serializes Close
  std::jthread reader_;
};

}  // namespace talaria::mcp::client_internal
