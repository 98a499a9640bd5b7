// The ToolSpec every RL tool shares: toolset `rl`, its emoji, and the original's availability
// (TINKER_API_KEY and WANDB_API_KEY set; the reason names the missing one).
#pragma once

#include <string_view>

#include "talaria/core/tool_entry.h"

namespace talaria::rl {

enum class RlAccess { kRead, kWrite };

ToolSpec RlToolSpec(std::string_view name, std::string_view schema, SyncHandler handler,
                    RlAccess access);

}  // namespace talaria::rl
