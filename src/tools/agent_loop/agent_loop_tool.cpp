#include "tools/agent_loop/agent_loop_tool.h"

#include <string>

namespace talaria::tools {

ToolSpec AgentLoopToolSpec(const AgentLoopTool& tool) {
  ToolSpec spec;
  spec.name = std::string(tool.name);
  spec.toolset = std::string(tool.toolset);
  spec.schema = tool.schema;
  spec.emoji = std::string(tool.emoji);
  spec.parallel = tool.parallel;
  spec.annotations = tool.annotations;
  spec.owner = CallOwner::kAgentLoop;
  spec.aliases = tool.aliases;
  spec.handler = [message = spec.name + " must be handled by the agent loop"](const Json&,
                                                                              ToolContext&) {
    return ToolResult::Error(message, CallStatus::kError, "agent_loop_tool");
  };
  return spec;
}

}  // namespace talaria::tools
