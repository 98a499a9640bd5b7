// What stands between a script's tool call and the dispatcher: the allow-list (the original's
// sandbox tool set, intersected with the session's), the per-execution call budget, the
// foreground-only terminal, and the script-level approval mode. Refusals are the original's
// messages and do not consume the budget. Every admitted call goes through the same Dispatcher
// as a direct call (coercion, validation, policy, hooks, budgets) with the execution's context:
// its cancel token and deadline.
// Thread-safety: Call is thread-safe (scripts may call from several threads).
#pragma once

#include <atomic>
#include <chrono>
#include <stop_token>
#include <string>
#include <vector>

#include "talaria/base/json.h"
#include "talaria/core/dispatcher.h"
#include "talaria/guard/command_guard.h"
#include "talaria/tools/code_execution.h"

namespace talaria::tools::code {

struct ScreenOptions {
  std::vector<std::string> allowed;  // tool names, sorted
  int max_tool_calls = kDefaultMaxToolCalls;
  ScriptApprovals approvals = ScriptApprovals::kInherit;
  safety::GuardOptions guard;  // for ScriptApprovals::kDeny
};

class ScriptCallScreen {
 public:
  // `base` is the execute_code call's context (session, workspace, environment); each script call
  // gets a copy with `cancel`, `deadline` and its own call id.
  ScriptCallScreen(const Dispatcher& dispatcher, const ToolContext& base, ScreenOptions options,
                   std::stop_token cancel, ToolContext::Deadline deadline);

  // Runs one call from the script; returns the result text the script receives.
  std::string Call(const std::string& tool, Json args);
  int calls_made() const { return calls_.load(std::memory_order_relaxed); }

 private:
  const Dispatcher& dispatcher_;
  ToolContext base_;
  const ScreenOptions options_;
  std::atomic<int> calls_{0};
};

// "Tool 'x' is not available in execute_code. Available: a, b, c"
std::string ToolNotAvailableMessage(const std::string& tool,
                                    const std::vector<std::string>& allowed);
// "Tool call limit reached (50). No more tool calls allowed in this execution."
std::string CallLimitMessage(int limit);

}  // namespace talaria::tools::code
