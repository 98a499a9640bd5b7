// ClientChannel: what a running tool may ask of the client that started its call — log and
// progress notifications, and requests the client answers (MCP elicitation/create,
// sampling/createMessage). The MCP server hands one to every tools/call through
// ToolContext::client; the agent loop and the CLI leave it null, so a tool checks for null and
// falls back (an approval it cannot ask for is denied, a question it cannot ask is an error).
//
// A channel belongs to one call: its notifications are tied to that request (over Streamable
// HTTP they travel on the call's own event stream), and it stops working once the call ended.
// Thread-safety: thread-safe; a tool may use it from any thread while its call runs.
#pragma once

#include <chrono>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>

#include "talaria/base/json.h"
#include "talaria/base/status.h"

namespace talaria {

class ClientChannel {
 public:
  using Deadline = std::chrono::steady_clock::time_point;

  virtual ~ClientChannel() = default;

  // True when the client declared `capability` at initialize ("elicitation", "sampling",
  // "roots", ...).
  virtual bool Supports(std::string_view capability) const = 0;

  // A log message (notifications/message), sent only when `level` is at or above the level the
  // client asked for. Levels as in syslog: debug, info, notice, warning, error, critical, alert,
  // emergency.
  virtual void Log(std::string_view level, std::string_view logger, const Json& data) = 0;

  // A progress notification, sent only when the client asked for progress on this call and
  // `progress` is above the last value sent (MCP requires progress to increase strictly).
  virtual void Progress(double progress, std::optional<double> total, std::string_view message) = 0;

  // Sends a request to the client and waits for its result object, until the client answers,
  // `cancel` fires or `deadline` passes (the client is then told the request was cancelled).
  // Errors: FailedPrecondition (the call has ended), Cancelled, DeadlineExceeded, Unavailable
  // (the client went away), Internal (the client answered with a JSON-RPC error; its code and
  // message are in the text).
  virtual Result<Json> Request(std::string_view method, const Json& params, std::stop_token cancel,
                               Deadline deadline) = 0;
};

// Why `client` cannot be sent `method`: there is no client (the call did not come over MCP), or
// the client did not declare the capability an MCP-defined request needs ("elicitation" for
// elicitation/create, "sampling" for sampling/createMessage, "roots" for roots/list). Nullopt
// when it may be sent; other methods need no capability.
std::optional<std::string> WhyClientCannotAnswer(const ClientChannel* client,
                                                 std::string_view method);

// The earlier of `deadline` and `timeout` from now: a question to a human gets `timeout`, but
// never outlives the call that asks it.
ClientChannel::Deadline EarlierDeadline(ClientChannel::Deadline deadline,
                                        std::chrono::milliseconds timeout);

}  // namespace talaria
