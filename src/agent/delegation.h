// delegate_task: subagents. Each child is a real agent loop (AgentImpl) in this process with its
// own session (stored with the parent's id, source "delegate"), its own tool session (workspace,
// terminal, background processes) and a fresh iteration budget; it shares the parent's runtime,
// model settings and store. Its tools are the requested toolsets ∩ what the parent offers,
// minus the blocked ones; it asks no human (approvals follow the non-interactive policy).
//
// Limits, on every path a child could spawn another: at most max_concurrent_children live
// children per agent (background ones included; more is an error, not a queue), a depth cap
// (a leaf cannot delegate; an orchestrator only below max_spawn_depth), a per-child timeout after
// which the child is stopped and its partial result returned with status "timeout".
// Interrupting the parent's turn stops every child of that call, which kills their processes.
//
// Thread-safety: Delegator is thread-safe; Run blocks the calling thread until its children end.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "talaria/agent/chat.h"
#include "talaria/base/json.h"
#include "talaria/base/status.h"
#include "talaria/core/config.h"
#include "talaria/core/tool_context.h"
#include "talaria/core/tool_result.h"

namespace talaria::agent {

class AgentImpl;

// config.yaml's `delegation:` section:
//   delegation:
//     max_concurrent_children: 3   # live children per agent; more is an error
//     max_spawn_depth: 1           # 1: children cannot delegate; 2: orchestrators may
//     orchestrator_enabled: true
//     max_iterations: 50           # each child's budget
//     child_timeout_seconds: 600   # then the child is stopped (partial result, "timeout")
//     blocked_tools: [delegate_task, clarify, memory, send_message, execute_code]
struct DelegationSettings {
  int max_concurrent_children = 3;
  int max_spawn_depth = 1;
  bool orchestrator_enabled = true;
  int max_iterations = 50;
  std::chrono::milliseconds child_timeout{600'000};
  std::vector<std::string> blocked_tools = {"delegate_task", "clarify", "memory", "send_message",
                                            "execute_code"};
  // How long a stopped child may take to wind down before it is reported and left behind.
  std::chrono::milliseconds stop_grace{30'000};
};

// Errors: InvalidArgument naming the bad key.
Result<DelegationSettings> DelegationSettingsFromConfig(const Config& config);

// What a subagent knows of its place in the tree; set before its Init.
struct ChildRole {
  std::string parent_session_id;
  int depth = 1;
  bool may_delegate = false;               // an orchestrator below the depth cap
  std::vector<std::string> allowed_tools;  // the parent's offer minus the blocked tools
};

class Delegator {
 public:
  // depth: the owner's (0 for a session the user started); may_delegate: false for a leaf child.
  Delegator(AgentImpl& owner, DelegationSettings settings, int depth, bool may_delegate);
  ~Delegator();  // StopAll
  // Stops every child still running (background ones too) and joins it; a background child's
  // result (interrupted) is then among the notices.
  void StopAll();
  Delegator(const Delegator&) = delete;
  Delegator& operator=(const Delegator&) = delete;

  // The delegate_task call: validated arguments, the parent's call context (its cancel token
  // is the parent's turn). Returns {results: [...], total_duration_seconds} or an error.
  ToolResult Run(const Json& args, ToolContext& ctx);

  // Background results finished since the last call, as text to append to a tool result.
  std::string TakeNotices();

  // Children's usage (and the mixture of agents') not yet added to the owner's store totals.
  void AddUsage(const Usage& usage, double cost);
  void TakeUsage(Usage& usage, double& cost);
  void PeekUsage(Usage& usage, double& cost) const;

  const DelegationSettings& settings() const { return settings_; }

 private:
  struct Task;
  struct ChildRun;
  // The child's turn and its result entry; `used`/`cost`: what it spent, its children's too.
  Json RunChild(const Task& task, ChildRun& run, Usage& used, double& cost);
  std::shared_ptr<ChildRun> Start(Task task);
  Json Wait(ChildRun& run, const std::stop_token& cancel);
  ToolResult StartBackground(Task task);

  AgentImpl& owner_;
  const DelegationSettings settings_;
  const int depth_;
  const bool may_delegate_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  int live_ = 0;     // Guarded by mu_.
  int next_id_ = 0;  // Guarded by mu_.
  std::vector<std::shared_ptr<ChildRun>>
      runs_;             // every started child not yet joined; Guarded by mu_.
  std::string notices_;  // Guarded by mu_.
  Usage usage_;          // Guarded by mu_.
  double cost_ = 0;      // Guarded by mu_.
};

}  // namespace talaria::agent
