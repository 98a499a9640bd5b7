// ToolContext: everything one call may know about where it runs — ids, cancellation, deadline,
// and the session's seams. Passed by reference through the whole pipeline; no ambient state.
// Thread-safety: one context belongs to one call; the cancel token may be triggered from any
// thread.
#pragma once

#include <chrono>
#include <memory>
#include <stop_token>
#include <string>
#include <string_view>

namespace talaria {

class ClientChannel;  // the MCP client behind this call (client_channel.h); null elsewhere

// What a session lends each of its calls besides ids, cancellation and a deadline: in talaria's
// tools, the workspace, the audit log, the command environment and the background processes
// (tools::SessionServices, talaria/tools/session_services.h). Core defines the seam and reads
// only the working directory through it (the batch planner scopes relative paths against it);
// the modules above implement it, so core depends on none of them.
class CallServices {
 public:
  virtual ~CallServices() = default;
  // The directory a call's relative paths start from; empty when there is none.
  virtual std::string cwd() const = 0;
};

// The file tools' consecutive-read tracker: any other tool resets it. The dispatcher calls it;
// the file tools keep their per-session read state behind it.
class ReadLoopObserver {
 public:
  virtual ~ReadLoopObserver() = default;
  virtual void NotifyOtherToolCall(std::string_view task_id) = 0;
};

struct ToolContext {
  using Deadline = std::chrono::steady_clock::time_point;

  std::string session_id;
  std::string task_id;
  std::string call_id;
  std::string user_task;

  // Requested cancellation; handlers poll it (and register stop_callbacks to kill children).
  std::stop_token cancel;
  // Absolute deadline for this call; time_point::max() means none.
  Deadline deadline = Deadline::max();

  // Shared with the session; may be null.
  std::shared_ptr<CallServices> services;
  std::shared_ptr<ReadLoopObserver> read_tracker;
  // Set by the MCP server for tools/call: log, progress, elicitation and sampling requests to
  // the client. Null outside MCP.
  std::shared_ptr<ClientChannel> client;
  // No human can answer for this call (a subagent's): an approval that would ask is refused.
  bool unattended = false;

  bool cancelled() const { return cancel.stop_requested(); }
  bool expired() const { return std::chrono::steady_clock::now() >= deadline; }
};

}  // namespace talaria
