// The one symbol libtalaria_checkpoints.so exports for libtalaria (checkpoints_module.h).
#include "checkpoints/checkpoints_module.h"

namespace talaria::checkpoints {
namespace {

const CheckpointsModule kModule{kModuleAbi, sizeof(CheckpointsModule), &OpenGitStore};

}  // namespace
}  // namespace talaria::checkpoints

extern "C" __attribute__((visibility("default"))) const talaria::checkpoints::CheckpointsModule*
talaria_checkpoints_module() {
  return &talaria::checkpoints::kModule;
}
