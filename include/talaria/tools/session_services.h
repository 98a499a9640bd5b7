// SessionServices: what a tools::Session lends each call through ToolContext::services (core's
// CallServices seam): its workspace, audit log, command environment and background processes.
// The accessors return null when a context carries no services of this kind, so every tool
// checks and answers with a clear error instead of assuming a session.
// Thread-safety: the services object is shared by the session's calls and not changed while
// they run; what it points to documents its own.
#pragma once

#include <memory>
#include <string>

#include "talaria/audit/audit_log.h"
#include "talaria/confinement/workspace.h"
#include "talaria/core/tool_context.h"
#include "talaria/env/environment.h"
#include "talaria/env/process_table.h"

namespace talaria::checkpoints {
class CheckpointManager;  // talaria/checkpoints/checkpoint_manager.h
}  // namespace talaria::checkpoints

namespace talaria::tools {

struct SessionServices final : CallServices {
  std::shared_ptr<safety::Workspace> workspace;       // file tools resolve every path through it
  std::shared_ptr<const safety::AuditLog> audit_log;  // null: mutations are not audited
  std::shared_ptr<env::Environment> environment;      // where commands run; null: no terminal
  std::shared_ptr<env::ProcessTable> processes;       // the session's background processes
  // Snapshots before mutations (config checkpoints.enabled); null: off.
  std::shared_ptr<checkpoints::CheckpointManager> checkpoints;

  std::string cwd() const override { return workspace ? workspace->cwd() : std::string(); }
};

// The services `ctx` carries; null when it has none (or another implementation's).
SessionServices* ServicesOf(const ToolContext& ctx);
// The services `ctx` carries, made (empty) first when it has none of this kind: for a caller
// that builds its own context (tests, embedders) and attaches one service at a time.
SessionServices& EnsureServices(ToolContext& ctx);

safety::Workspace* WorkspaceOf(const ToolContext& ctx);
const safety::AuditLog* AuditLogOf(const ToolContext& ctx);
env::Environment* EnvironmentOf(const ToolContext& ctx);
env::ProcessTable* ProcessesOf(const ToolContext& ctx);
checkpoints::CheckpointManager* CheckpointsOf(const ToolContext& ctx);

}  // namespace talaria::tools
