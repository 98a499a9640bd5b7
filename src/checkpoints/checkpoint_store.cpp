// CheckpointStore::Open: the defaults, then the store from the lazily loaded libgit2 module.
#include "talaria/checkpoints/checkpoint_store.h"

#include "checkpoints/checkpoints_module.h"
#include "talaria/base/paths.h"
#include "talaria/base/sibling_module.h"

namespace talaria::checkpoints {

Result<std::shared_ptr<CheckpointStore>> CheckpointStore::Open(CheckpointSettings settings) {
  // Loaded once; never dlclose'd: stores point into it.
  static const Result<const void*> table = LoadSiblingModuleTable(
      kModuleFile, kModuleEntry, "the checkpoints module", kModuleAbi, sizeof(CheckpointsModule));
  if (!table) return Err(table.error());
  if (settings.root.empty()) settings.root = TalariaHome() + "/checkpoints";
  if (settings.refused_dirs.empty()) settings.refused_dirs = {UserHome()};
  if (settings.max_snapshots < 1) settings.max_snapshots = 1;
  return static_cast<const CheckpointsModule*>(*table)->open_store(std::move(settings));
}

}  // namespace talaria::checkpoints
