// The registry side of an agent-loop tool: its schema is registered so models see it, while
// its calls are routed to the agent loop (which owns the state) before they reach a handler.
// The handler built here is only the safety net for a call that slips past that routing.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "talaria/core/tool_entry.h"

namespace talaria::tools {

struct AgentLoopTool {
  std::string_view name;
  std::string_view toolset;
  std::string_view schema;
  std::string_view emoji;
  ParallelClass parallel = ParallelClass::kNever;
  ToolAnnotations annotations;
  std::vector<std::string> aliases = {};  // older names the model may still call it by
};

ToolSpec AgentLoopToolSpec(const AgentLoopTool& tool);

}  // namespace talaria::tools
