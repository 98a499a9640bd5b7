// The RL tools' shared spec (rl_tool_spec.h).
#include "rl/rl_tool_spec.h"

#include <string>
#include <utility>

namespace talaria::rl {

ToolSpec RlToolSpec(std::string_view name, std::string_view schema, SyncHandler handler,
                    RlAccess access) {
  ToolSpec spec;
  spec.name = std::string(name);
  spec.toolset = "rl";
  spec.schema = schema;
  spec.handler = std::move(handler);
  spec.requires_env = {"TINKER_API_KEY", "WANDB_API_KEY"};
  spec.emoji = "\xF0\x9F\xA7\xAA";  // "🧪"
  // Every RL tool reads or changes the one selection and run table: one at a time.
  spec.parallel = ParallelClass::kNever;
  spec.annotations.read_only = access == RlAccess::kRead;
  spec.annotations.open_world = true;
  return spec;
}

}  // namespace talaria::rl
