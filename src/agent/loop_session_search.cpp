// session_search in the agent loop: the session's store and id (session_search_tool.cpp does
// the work, on the store's read-only connection, so it may run beside the batch's other calls
// and never waits for the session's writes).
#include "agent/agent_impl.h"
#include "talaria/agent/session_search.h"

namespace talaria::agent {

ToolResult AgentImpl::RunSessionSearchTool(const Json& args) {
  return SessionSearchToolResult(*store_, session_id_, args);
}

}  // namespace talaria::agent
