// The bridge between a plugin's C handlers (plugin.h) and talaria's C++ side: a tool handler as
// a SyncHandler, a resource read or prompt get as the MCP feature functions (features.h), and
// the talaria_call each handler sees (result text, rich content, the MCP client of the call).
// Thread-safety: the adapters are safe to call concurrently (plugins promise thread-safe
// handlers).
#pragma once

#include <string>

#include "talaria/base/json.h"
#include "talaria/core/tool_entry.h"
#include "talaria/mcp/features.h"
#include "talaria/plugin.h"

namespace talaria::plugins {

SyncHandler AdaptToolHandler(talaria_tool_handler fn, void* user_data, std::string tool);

// `resource_json` / `prompt_json` as plugin.h describes them. InvalidArgument names what is
// wrong with the JSON.
Result<mcp::ResourceDef> AdaptResource(const talaria_resource_def& def, const std::string& plugin);
Result<mcp::PromptDef> AdaptPrompt(const talaria_prompt_def& def, const std::string& plugin);

}  // namespace talaria::plugins
