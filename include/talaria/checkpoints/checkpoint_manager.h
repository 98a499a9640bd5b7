// CheckpointManager: when a session snapshots. The tools call it before they mutate
// (write_file and patch before writing a file, terminal before a destructive command); it takes
// at most one snapshot per project directory per turn (the first mutation's), and the agent
// loop starts a new turn with NewTurn. Until the first NewTurn (a caller without turns: talaria
// call, the MCP server) every mutation is checked: a snapshot is taken whenever the directory
// changed since the latest one.
//
// A failed snapshot never fails the tool call: the mutation goes ahead, the failure is logged
// once per directory and turn (an unwritable store must not stop the agent's work).
// Thread-safety: thread-safe; the batch's parallel calls may call it at once.
#pragma once

#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "talaria/checkpoints/checkpoint_store.h"

namespace talaria::checkpoints {

class CheckpointManager {
 public:
  // `boundaries`: the session's roots; a project directory is never chosen above them.
  CheckpointManager(std::shared_ptr<CheckpointStore> store, std::vector<std::string> boundaries);

  // Before `path` (absolute) is written, moved or deleted by `tool`: reason "before <tool>".
  void BeforeFileMutation(std::string_view path, std::string_view tool);
  // Before `command` runs in `cwd` (absolute): snapshots when IsDestructiveCommand says so;
  // reason "before terminal: <command>" (cut at 200 bytes).
  void BeforeCommand(std::string_view command, std::string_view cwd);

  void NewTurn();

  const std::shared_ptr<CheckpointStore>& store() const { return store_; }
  // The directories snapshotted (or attempted) in the current turn; for tests and /rollback.
  std::vector<std::string> TouchedThisTurn() const;

 private:
  void SnapshotOnce(const std::string& dir, std::string_view reason);
  std::string BoundaryOf(std::string_view path) const;

  std::shared_ptr<CheckpointStore> store_;
  std::vector<std::string> boundaries_;
  mutable std::mutex mu_;
  std::set<std::string> touched_;  // Guarded by mu_.
  bool turns_ = false;             // Guarded by mu_. NewTurn was called: dedup per turn.
};

}  // namespace talaria::checkpoints
