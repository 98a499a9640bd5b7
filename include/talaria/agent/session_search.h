// session_search: the agent-loop tool that recalls earlier sessions from the session store
// (src/agent/session_search_tool.cpp), in the four modes of the original (no LLM), chosen by
// which arguments are present:
//   discover (query)                     matching sessions, one per conversation lineage
//   scroll   (session_id + around_message_id)  a window of messages around one
//   read     (session_id)                the session, or its first 20 and last 10 messages
//   browse   (nothing)                   recent sessions with a preview
// Message ids are the store's message ids (unique across sessions), so an id names its
// session too. The current session's lineage (its root, following parent_id, and everything
// below it) is left out of discover and browse, and a scroll into it is refused; delegated
// children's sessions are searched and reported once per root conversation.
// Every store read is on the store's read-only connection (SessionStore's recall members).
// Thread-safety: a pure function of its arguments and the store (which is thread-safe).
#pragma once

#include <string_view>

#include "talaria/base/json.h"
#include "talaria/core/tool_result.h"

namespace talaria::store {
class SessionStore;
}  // namespace talaria::store

namespace talaria::agent {

// Runs one session_search call. `current_session_id` is the calling session (empty: none, as
// for an MCP client). Always an object: the mode's result, or {"success": false, "error"}.
Json RunSessionSearch(store::SessionStore& store, std::string_view current_session_id,
                      const Json& args);

// The call as a tool result: an error result for {"success": false}, otherwise the result with
// its recalled text marked untrusted (old sessions hold pages, files and tool output, so a
// recalled "ignore your instructions" is data like a fetched page's).
ToolResult SessionSearchToolResult(store::SessionStore& store, std::string_view current_session_id,
                                   const Json& args);

}  // namespace talaria::agent
