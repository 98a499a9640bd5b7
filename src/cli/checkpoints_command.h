// talaria checkpoints list|diff|restore and chat's /rollback: the checkpoint store
// (talaria/checkpoints/checkpoint_store.h) for people (tables, diffs) and programs (--json).
#pragma once

#include <optional>
#include <string>

#include "talaria/core/runtime.h"

namespace talaria::cli {

// talaria checkpoints list [--dir D] [--json] | diff HASH | restore HASH [FILE]: exit 0 done,
// 1 failed (no such snapshot, a file not restored), 2 usage errors (bad hash, bad config).
struct CheckpointsOptions {
  std::string action;  // list | diff | restore
  std::string dir;     // empty: the project of the current directory
  std::string hash;
  std::string file;  // restore: only this file
  bool json = false;
};
int RunCheckpoints(Runtime& rt, const CheckpointsOptions& options);

// chat's /rollback [N|HASH [FILE]] | /rollback diff N|HASH, for the project of `dir`:
// without arguments lists the snapshots numbered from 1 (newest); N picks from that list.
void RunRollback(Runtime& rt, const std::string& dir, const std::string& args);

}  // namespace talaria::cli
