// McpServer: the MCP server protocol, independent of the transport. A transport feeds it one
// incoming message at a time (HandleMessage) and gives it a sink for outgoing lines; responses
// to tools/call arrive on the sink later, from the call's own thread.
//
// What it serves (protocol 2025-11-25, negotiating down to 2025-06-18, 2025-03-26, 2024-11-05):
// initialize / notifications/initialized, ping, tools/list (sorted by name, cursor pagination),
// tools/call through the Dispatcher (text content, or the result's rich content blocks;
// structuredContent when the result is a JSON object, tool failures as isError results, unknown
// tools -32602), progress notifications for requests carrying _meta.progressToken,
// notifications/cancelled (the call's cancel token fires: its child processes are killed and no
// response is sent), notifications/tools/list_changed when the registry changes what is exposed,
// and logging/setLevel; JSON-RPC batches under 2025-03-26. With options.features: resources
// (list, read, templates/list, subscribe/unsubscribe, notifications/resources/updated and
// list_changed), prompts (list, get, list_changed) and completion/complete; capabilities name
// only what is served.
//
// A running tool reaches the client through ToolContext::client (client_channel.h): log and
// progress notifications and requests the client answers (elicitation/create,
// sampling/createMessage, see tool_requests.h), all tied to the call's request so that Streamable
// HTTP sends them on that request's event stream; the client's answers come back through
// HandleMessage as responses.
//
// Each tools/call runs on its own thread, so a slow call never delays ping or other calls. Calls
// that must not overlap are kept apart by the tools' parallel classes: safe and path-scoped
// readers run together; writers and never-parallel tools (terminal) run alone.
// Thread-safety: thread-safe. HandleMessage is meant to be called from one reader thread (the
// order of messages is the order of calls); the sink is never called concurrently with itself.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "talaria/base/json.h"
#include "talaria/base/status.h"
#include "talaria/core/dispatcher.h"
#include "talaria/core/tool_context.h"
#include "talaria/core/toolsets.h"
#include "talaria/mcp/jsonrpc.h"

namespace talaria {
class ConflictGate;  // talaria/core/conflict_gate.h
}  // namespace talaria

namespace talaria::mcp {

inline constexpr std::string_view kLatestProtocolVersion = "2025-11-25";
// Newest first.
std::span<const std::string_view> SupportedProtocolVersions();

// A context for one tools/call (the tool session's seams: workspace, shell, audit log). The
// server then sets the context's cancel token (and deadline, when configured) itself.
using ContextFactory = std::function<ToolContext(const std::string& call_id)>;

// Receives each outgoing message as one line of JSON (no newline). Never called concurrently.
using MessageSink = std::function<void(std::string_view line)>;

// Where an outgoing message belongs, for transports that keep a stream per request (Streamable
// HTTP sends a request's related messages on its POST's event stream).
struct Routing {
  // DumpJson of the id of the client request this message answers or belongs to (the
  // tools/call whose progress, log message or elicitation request it is); empty: none, a
  // server-initiated message (list_changed, resource updates, logs outside calls).
  std::string_view request;
  bool is_response = false;  // the answer to `request`: nothing more follows for it
  // The answer to a lone request that reused an id an open batch still waits on: it never goes
  // into that batch's array (transports route it by `request` as usual).
  bool outside_batch = false;
};
using RoutedSink = std::function<void(std::string_view line, const Routing& routing)>;

class ServerFeatures;  // features.h

struct McpServerOptions {
  // What is exposed: the union of these toolsets (resolved through Toolsets).
  std::vector<std::string> toolsets{"talaria-mcp"};
  std::string server_name = "talaria";
  std::string server_version = "0.1.0";
  std::string instructions;  // empty: none sent
  size_t page_size = 100;    // items per tools/resources/templates/prompts list page
  MessageLimits limits;
  // More concurrent tools/call requests than this are refused (-32603) rather than queued.
  size_t max_calls_in_flight = 64;
  // Per-call deadline; zero: none (the tools' own timeouts apply).
  std::chrono::milliseconds call_timeout{0};
  // Null: each call gets a bare ToolContext (no workspace, no terminal).
  ContextFactory make_context;
  // The client's roots (`roots/list`) as absolute local paths, asked for after initialization
  // when the client declares the roots capability and again on notifications/roots/list_changed;
  // called from a server thread. Roots that are not file:// URIs are dropped. An error refuses
  // the session's calls with its message until a later answer is accepted (fail closed). Null:
  // roots are never asked for.
  //
  // While the roots are not known — from initialize until the client's answer is accepted, and
  // again after list_changed — a client that declared roots has its calls (tools/call,
  // resources/read, prompts/get) wait for them up to `roots_timeout`; calls still waiting then,
  // and calls made after a failed or refused answer, are refused: never run on a context
  // make_context made before the roots applied. A client without the capability is not waited on.
  std::function<Status(const std::vector<std::string>& paths)> on_client_roots;
  std::chrono::milliseconds roots_timeout{5000};
  // Keeps calls that must not overlap apart, by the batch planner's rule (conflict_gate.h).
  // Shared by every server whose calls reach the same tool session; null: one of its own.
  std::shared_ptr<ConflictGate> call_gate;
  // Resources, resource templates and prompts to serve besides tools (those of the selected
  // toolsets); null: none, and no such capabilities are declared.
  std::shared_ptr<ServerFeatures> features;
};

class McpServer {
 public:
  // InvalidArgument when options.toolsets names an unknown toolset or page_size is zero.
  static Result<std::unique_ptr<McpServer>> Create(Dispatcher& dispatcher, const Toolsets& toolsets,
                                                   McpServerOptions options, MessageSink sink);
  // The same, for a transport that routes messages by the request they belong to.
  static Result<std::unique_ptr<McpServer>> Create(Dispatcher& dispatcher, const Toolsets& toolsets,
                                                   McpServerOptions options, RoutedSink sink);
  // Shutdown(0).
  ~McpServer();
  McpServer(const McpServer&) = delete;
  McpServer& operator=(const McpServer&) = delete;

  // Decodes and serves one incoming message. Requests other than tools/call are answered before
  // it returns; tools/call is answered from the call's thread. A response answers a request the
  // server sent (elicitation, sampling) and wakes the call waiting for it. Never throws.
  void HandleMessage(std::string_view text);
  // The same for a message the transport already decoded (with these options' limits).
  void HandleDecoded(const Message& message);
  // Serves a JSON-RPC batch (`text` is a JSON array; HandleMessage sends arrays here). Only a
  // client that negotiated protocol 2025-03-26 may batch; otherwise the batch gets one -32600
  // error with "id": null. The responses to its requests, and the errors of elements that are
  // no valid message, go out together as one JSON array, routed as the response to
  // `batch_key` (a key no request uses, for a transport that waits for the answer); a request
  // the client cancels meanwhile is left out. Returns false when nothing will be sent back
  // (the batch held only notifications and responses).
  bool HandleBatch(std::string_view text, std::string_view batch_key = {});

  // Answers a message the transport refused before decoding (e.g. a line over the size cap)
  // with a JSON-RPC error carrying "id": null.
  void RejectMessage(int code, std::string_view message);

  // Stops accepting calls; gives running ones up to `grace` to finish, then cancels them (their
  // children are killed) and waits for them. Responses of calls that end meanwhile are still
  // sent. Idempotent.
  void Shutdown(std::chrono::milliseconds grace = std::chrono::milliseconds(0));

  // Sends notifications/message when `level` (debug, info, notice, warning, error, critical,
  // alert, emergency) is at or above the level the client set (default: warning).
  void SendLog(std::string_view level, std::string_view logger, const Json& data);

  // The client's capabilities from initialize (null before).
  Json client_capabilities() const;

  size_t calls_in_flight() const;
  bool initialized() const;              // notifications/initialized received
  std::string protocol_version() const;  // negotiated; empty before initialize

 private:
  struct Impl;
  explicit McpServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace talaria::mcp
