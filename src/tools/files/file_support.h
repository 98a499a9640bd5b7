// What every file tool shares: the session's workspace, status-to-result mapping, and the
// audit record of a mutation.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "talaria/base/status.h"
#include "talaria/confinement/workspace.h"
#include "talaria/core/tool_context.h"
#include "talaria/core/tool_result.h"
#include "talaria/tools/session_services.h"

namespace talaria::tools {

// The result to return when no workspace is attached (WorkspaceOf(ctx) is null).
ToolResult NoWorkspaceResult();

// A Status from the workspace as the model's error result ({"error": message}); refusals of
// policy become kBlocked-free errors (the model should adjust, not retry).
ToolResult ErrorFromStatus(const Status& status);

// Appends one audit record for a mutation, when the context carries an audit log. Failures to
// audit are logged, never turned into tool failures (the write already landed).
void AuditMutation(const ToolContext& ctx, std::string_view tool, std::string_view path,
                   size_t bytes, const std::optional<std::string>& before,
                   const std::optional<std::string>& after, std::string_view outcome);

}  // namespace talaria::tools
