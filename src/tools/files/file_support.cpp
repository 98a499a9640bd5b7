#include "tools/files/file_support.h"

#include "talaria/audit/audit_log.h"
#include "talaria/base/log.h"
#include "talaria/tools/session_services.h"

namespace talaria::tools {

ToolResult NoWorkspaceResult() {
  return ToolResult::Error("no workspace is attached to this session", CallStatus::kError,
                           "no_workspace");
}

ToolResult ErrorFromStatus(const Status& status) {
  return ToolResult::Error(status.message(), CallStatus::kError,
                           std::string(StatusCodeName(status.code())));
}

void AuditMutation(const ToolContext& ctx, std::string_view tool, std::string_view path,
                   size_t bytes, const std::optional<std::string>& before,
                   const std::optional<std::string>& after, std::string_view outcome) {
  if (!AuditLogOf(ctx)) return;
  safety::AuditRecord record;
  record.session = ctx.session_id;
  record.tool = std::string(tool);
  record.path = std::string(path);
  record.bytes = bytes;
  record.sha256_before = before;
  record.sha256_after = after;
  record.outcome = std::string(outcome);
  if (Status s = AuditLogOf(ctx)->Append(record); !s.ok()) LogWarn("audit log: " + s.message());
}

}  // namespace talaria::tools
