// The static toolset table of the built-in tools (seed: toolsets.py): basic sets, one per tool
// family; scenario sets composed of them ("debugging", "safe"); and bundles ("talaria-cli",
// "talaria-mcp"). Declared to core's Toolsets when libtalaria loads.
#pragma once

#include <string>
#include <vector>

#include "talaria/core/toolsets.h"

namespace talaria::tools {

// The shared core tool list every bundle starts from (seed: _HERMES_CORE_TOOLS).
const std::vector<std::string>& CoreTools();
// The table itself (BuiltinToolsets() returns it once libtalaria is loaded).
std::vector<ToolsetDef> BuiltinToolsetTable();

}  // namespace talaria::tools
