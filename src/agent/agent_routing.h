// Which agent a loop-owned call belongs to. A dispatcher has one agent-loop router, but several
// agents may share its runtime (a parent and its subagents), so the router is installed once
// per dispatcher and sends each call to the agent whose session made it (ToolContext::
// session_id). The same table lets ordinary tools reach their session's agent (usage of
// mixture_of_agents) and appends finished background subagents' results to the next result.
//
//   routing_ = AttachRouting(runtime.dispatcher());   // before the tools are chosen
//   RegisterSession(session_id, this, &dispatcher);    // once the session has its id
//   ...
//   UnregisterSession(session_id); DetachRouting(runtime.dispatcher());
//
// Thread-safety: thread-safe. An agent must unregister before it is destroyed.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "talaria/core/dispatcher.h"

namespace talaria::agent {

class AgentImpl;

// Installs the router and the result transform on `dispatcher` when no agent uses it yet;
// counts one more agent on it.
void AttachRouting(Dispatcher& dispatcher);
// One agent fewer on `dispatcher`; the last one removes the router (the runtime may outlive
// every agent, and must not call into one that is gone).
void DetachRouting(Dispatcher& dispatcher);

void RegisterSession(const std::string& session_id, AgentImpl* agent, const Dispatcher* dispatcher);
void UnregisterSession(const std::string& session_id);

// Runs `fn` with the live agent of `session_id` (under the table's lock, so the agent cannot
// go away meanwhile); false when there is none.
bool WithSessionAgent(std::string_view session_id, const std::function<void(AgentImpl&)>& fn);

}  // namespace talaria::agent
