#include "talaria/tools/session_services.h"

namespace talaria::tools {

SessionServices* ServicesOf(const ToolContext& ctx) {
  return dynamic_cast<SessionServices*>(ctx.services.get());
}

SessionServices& EnsureServices(ToolContext& ctx) {
  if (SessionServices* services = ServicesOf(ctx)) return *services;
  auto fresh = std::make_shared<SessionServices>();
  SessionServices& ref = *fresh;
  ctx.services = std::move(fresh);
  return ref;
}

safety::Workspace* WorkspaceOf(const ToolContext& ctx) {
  SessionServices* s = ServicesOf(ctx);
  return s != nullptr ? s->workspace.get() : nullptr;
}

const safety::AuditLog* AuditLogOf(const ToolContext& ctx) {
  SessionServices* s = ServicesOf(ctx);
  return s != nullptr ? s->audit_log.get() : nullptr;
}

env::Environment* EnvironmentOf(const ToolContext& ctx) {
  SessionServices* s = ServicesOf(ctx);
  return s != nullptr ? s->environment.get() : nullptr;
}

env::ProcessTable* ProcessesOf(const ToolContext& ctx) {
  SessionServices* s = ServicesOf(ctx);
  return s != nullptr ? s->processes.get() : nullptr;
}

checkpoints::CheckpointManager* CheckpointsOf(const ToolContext& ctx) {
  SessionServices* s = ServicesOf(ctx);
  return s != nullptr ? s->checkpoints.get() : nullptr;
}

}  // namespace talaria::tools
