// Outlet: one McpServer's way out to its client — the sink every outgoing message goes through,
// the client's declared capabilities and log level, and the requests the server sends to the
// client (elicitation, sampling) waiting for their answers. Shared by the server and the
// channels it hands to running calls, so a channel a tool kept past its call, or past the
// server, finds it closed instead of dangling.
// Thread-safety: thread-safe.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "talaria/base/json.h"
#include "talaria/base/status.h"
#include "talaria/core/client_channel.h"
#include "talaria/mcp/jsonrpc.h"
#include "talaria/mcp/server.h"

namespace talaria::mcp {

int LogLevelRank(std::string_view level);  // -1 for an unknown level

class Outlet {
 public:
  explicit Outlet(RoutedSink sink) : sink_(std::move(sink)) {}

  // Hands `line` to the sink, in order with every other message; returns once the sink took it.
  // Dropped once closed. The sink is never called concurrently with itself.
  void Send(std::string_view line, const Routing& routing) {
    Deliver(line, nullptr, routing, true);
  }
  // The same, but may return before the sink took it (another thread delivering at the moment
  // takes it along): for answers nobody waits on, so a finished call's thread does not queue
  // behind another call's write.
  // `line` is taken by value: queued by move, not copied (an answer is tens of KB).
  void Post(std::string line, const Routing& routing) { Deliver(line, &line, routing, false); }
  // Delivers what is queued, then no more messages; waiting requests fail with Unavailable.
  // Idempotent.
  void Close();

  void SetClientCapabilities(Json capabilities);
  Json ClientCapabilities() const;  // null before initialize
  bool ClientSupports(std::string_view capability) const;

  void SetLogThreshold(int rank) { log_threshold_ = rank; }
  bool LogEnabled(int rank) const { return rank >= 0 && rank >= log_threshold_.load(); }

  // Sends a request to the client (routed with `routing`) and waits for the answer; see
  // ClientChannel::Request for the errors.
  Result<Json> Request(std::string_view method, const Json& params, const Routing& routing,
                       const std::stop_token& cancel, ClientChannel::Deadline deadline);
  // Hands a response from the client to the request waiting for it; false when none is (an
  // unknown, late or cancelled id: dropped, as the spec allows).
  bool Resolve(const Message& response);

 private:
  struct Waiter {
    std::optional<Result<Json>> answer;  // Guarded by Outlet::mu_.
  };

  struct Queued {
    std::string line;
    std::string request;  // Routing::request, owned
    Routing flags;        // the rest of the Routing (its `request` unused)
  };
  static constexpr size_t kMaxQueuedBytes = 16
                                            << 20;  // beyond this a Post waits (a stalled client)

  // `owned`, when not null, holds `line` and may be moved from.
  void Deliver(std::string_view line, std::string* owned, const Routing& routing, bool wait);
  void CallSink(std::string_view line, const Routing& routing);

  const RoutedSink sink_;
  std::mutex send_mu_;
  std::condition_variable send_cv_;  // a message delivered, queue space freed, or delivery done
  std::deque<Queued> send_queue_;    // Guarded by send_mu_. Waiting for the delivering thread.
  size_t queued_bytes_ = 0;          // Guarded by send_mu_.
  uint64_t enqueued_ = 0;            // Guarded by send_mu_. Tickets handed out, in order.
  uint64_t delivered_ = 0;           // Guarded by send_mu_. Tickets the sink took.
  size_t send_waiters_ = 0;          // Guarded by send_mu_. Threads sleeping on send_cv_.
  bool delivering_ = false;          // Guarded by send_mu_. One thread is calling the sink.
  bool send_closed_ = false;         // Guarded by send_mu_.

  std::atomic<int> log_threshold_{3};  // "warning"

  mutable std::mutex mu_;
  std::condition_variable_any cv_;                      // an answer arrived, or the outlet closed
  Json capabilities_;                                   // Guarded by mu_. null before initialize
  bool closed_ = false;                                 // Guarded by mu_.
  int64_t next_id_ = 1;                                 // Guarded by mu_.
  std::map<int64_t, std::shared_ptr<Waiter>> waiting_;  // Guarded by mu_.
};

// The ClientChannel of one tools/call.
class CallChannel final : public ClientChannel {
 public:
  CallChannel(std::shared_ptr<Outlet> outlet, std::string request_key, Json progress_token)
      : outlet_(std::move(outlet)),
        request_key_(std::move(request_key)),
        progress_token_(std::move(progress_token)) {}

  bool Supports(std::string_view capability) const override;
  void Log(std::string_view level, std::string_view logger, const Json& data) override;
  void Progress(double progress, std::optional<double> total, std::string_view message) override;
  Result<Json> Request(std::string_view method, const Json& params, std::stop_token cancel,
                       Deadline deadline) override;

  // The call answered: nothing more may be sent for it.
  void End() { ended_ = true; }

 private:
  Routing Related() const { return Routing{request_key_, false}; }

  const std::shared_ptr<Outlet> outlet_;
  const std::string request_key_;  // DumpJson of the tools/call id
  const Json progress_token_;      // null: the client asked for no progress
  std::atomic<bool> ended_{false};
  std::mutex progress_mu_;
  std::optional<double> last_progress_;  // Guarded by progress_mu_.
};

}  // namespace talaria::mcp
