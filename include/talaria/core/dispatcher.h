// Dispatcher: one tool call through the whole pipeline, in ARCHITECTURE.md's order:
//   parse -> coerce -> validate -> agent-loop routing -> policy -> pre hooks -> read-loop
//   notification -> execute -> post hooks (exactly once) -> transform_result -> budget.
// Every ending — bad arguments, unknown tool, block, throw, timeout, cancel — is a ToolResult;
// nothing a model sends can crash the process.
// Thread-safety: thread-safe; Dispatch may run concurrently from any number of threads.
// Configure (SetPolicy, SetAgentLoopRouter, ...) before the first call.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "talaria/base/json.h"
#include "talaria/core/budget.h"
#include "talaria/core/hooks.h"
#include "talaria/core/registry.h"
#include "talaria/core/tool_context.h"
#include "talaria/core/tool_result.h"

namespace talaria {

// One policy for every tool (built-in, plugin, MCP). The command guard implements it.
class Policy {
 public:
  struct Decision {
    bool allowed = true;
    std::string message;  // why not, when denied
    // When allowed: added to a JSON object result as "approval" (e.g. "Command required
    // approval (...) and was approved by the user.").
    std::string note;
  };
  virtual ~Policy() = default;
  virtual Decision Check(const ToolEntry& tool, const Json& args, const ToolContext& ctx) = 0;
};

// Runs a loop-owned tool (ToolSpec::owner == CallOwner::kAgentLoop) against the loop's own
// state. nullopt: not handled (the call then gets the "must be handled" error).
using AgentLoopRouter = std::function<std::optional<ToolResult>(
    std::string_view name, const Json& args, ToolContext& ctx)>;

// Which loop-owned tools a router takes (by name); the others stay unavailable.
using AgentLoopRouterTakes = std::function<bool(std::string_view name)>;

// The reason a loop-owned tool is unavailable while no agent loop is attached.
inline constexpr std::string_view kNeedsAgentLoop = "needs the agent loop";

inline constexpr std::chrono::seconds kDefaultAsyncTimeout{300};

struct DispatcherOptions {
  BudgetConfig budget;
  // How long a sync caller waits for an async handler when the call has no earlier deadline.
  std::chrono::milliseconds async_timeout = kDefaultAsyncTimeout;
};

class Dispatcher {
 public:
  explicit Dispatcher(Registry& registry = Registry::Global(), DispatcherOptions options = {});

  Registry& registry() { return registry_; }
  const Registry& registry() const { return registry_; }
  HookSet& hooks() { return hooks_; }
  const DispatcherOptions& options() const { return options_; }

  void SetPolicy(std::shared_ptr<Policy> policy) { policy_ = std::move(policy); }
  // A process-wide observer, told in addition to the session's ctx.read_tracker.
  void SetReadLoopObserver(std::shared_ptr<ReadLoopObserver> o) { read_loop_ = std::move(o); }
  // `takes`: the loop-owned tools the router runs (null: all of them). A front end that can run
  // only some (an MCP server runs clarify through its client, not todo) offers only those.
  void SetAgentLoopRouter(AgentLoopRouter router, AgentLoopRouterTakes takes = nullptr) {
    router_ = std::move(router);
    router_takes_ = std::move(takes);
  }

  // Whether a call of `entry` can run through this dispatcher: the registry's availability
  // (requires_env, check_fn), and for a tool the agent loop owns, a router that takes it (else
  // unavailable, reason kNeedsAgentLoop). Every list of tools offered to a model or client is
  // filtered by this, so nothing is offered that can only fail.
  Availability CheckRunnable(const ToolEntry& entry) const;
  // The registered tools among `names` that CheckRunnable accepts, in the given order.
  std::vector<std::string> RunnableTools(std::span<const std::string> names) const;

  // `raw_args` is the model's JSON text; empty or blank text means {}.
  ToolResult Dispatch(std::string_view name, std::string_view raw_args, ToolContext& ctx,
                      PreHookMode pre_mode = PreHookMode::kDecide) const;
  // Arguments already parsed (an object, or the call fails with "Invalid tool arguments").
  ToolResult DispatchArgs(std::string_view name, Json args, ToolContext& ctx,
                          PreHookMode pre_mode = PreHookMode::kDecide) const;
  // Ends a call that will not run (a batch cancelled before its turn) with `result`: the post
  // hooks, result transforms and budget see it like any other ending, exactly once.
  ToolResult Conclude(std::string_view name, std::string_view raw_args, ToolContext& ctx,
                      ToolResult result) const;

 private:
  ToolResult Run(std::string_view& name, Json& args, ToolContext& ctx, PreHookMode pre_mode,
                 std::shared_ptr<const ToolEntry>& entry) const;
  ToolResult Execute(const ToolEntry& entry, Json& args, ToolContext& ctx) const;
  ToolResult Finish(std::string_view name, const Json& args, ToolResult result,
                    const ToolEntry* entry, ToolContext& ctx,
                    std::chrono::steady_clock::time_point started) const;

  Registry& registry_;
  DispatcherOptions options_;
  HookSet hooks_;
  std::shared_ptr<Policy> policy_;
  std::shared_ptr<ReadLoopObserver> read_loop_;
  AgentLoopRouter router_;
  AgentLoopRouterTakes router_takes_;
};

}  // namespace talaria
