// The store's caps, enforced after every snapshot (the original's store grew to 12 GB past its
// cap): snapshots per project, then bytes of the whole store, the oldest snapshots going first
// across all projects; projects whose directory is gone are deleted first.
// Thread-safety: each function locks the projects it changes (one at a time).
#pragma once

#include <cstdint>
#include <string>

#include "checkpoints/git/project_store.h"
#include "talaria/checkpoints/checkpoint_store.h"

namespace talaria::checkpoints {

// Drops the oldest snapshots of the locked `project` beyond `max_snapshots`, then sweeps.
Status PruneToCount(ProjectStore& project, int max_snapshots);

// Brings the store under `root` to at most `max_bytes`. The snapshot `current_hash` of
// `current_workdir` (just taken) goes last; returns true when it had to go too. Projects another
// process holds are passed over.
Result<bool> EnforceTotalCap(const std::string& root, uint64_t max_bytes,
                             const std::string& current_workdir, const std::string& current_hash);

Result<StoreUsage> MeasureStore(const std::string& root);

}  // namespace talaria::checkpoints
