// session_search for `talaria mcp`: the agent-loop router's half that answers session_search
// calls from the user's sessions database, opened read-only on the first call (the file may
// not exist yet when the server starts). An MCP client has no session of its own, so nothing
// is excluded as "current".
// Thread-safety: thread-safe (calls may run in parallel; the store serialises its reads).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "talaria/core/dispatcher.h"

namespace talaria::cli {

// A router for Dispatcher::SetAgentLoopRouter that takes session_search over the database at
// `sessions_path` and hands every other loop-owned tool to `next` (clarify's router).
struct LoopRouter {
  AgentLoopRouter route;
  AgentLoopRouterTakes takes;
};
LoopRouter WithSessionSearch(std::string sessions_path, AgentLoopRouter next,
                             AgentLoopRouterTakes next_takes);

}  // namespace talaria::cli
