// The approval prompt of a call whose MCP client can elicit: the question goes to the client as
// elicitation/create (a form with one choice: allow once, for the session, always, or deny),
// so a human at the client answers it. Built per call by the command policy; without such a
// client there is none, and the approval mode's deny default applies.
#pragma once

#include <memory>

#include "talaria/core/tool_context.h"
#include "talaria/guard/approvals.h"

namespace talaria::tools {

// Null when `ctx` has no MCP client or the client did not declare the elicitation capability.
std::shared_ptr<safety::ApprovalPrompter> MakeElicitationPrompter(const ToolContext& ctx);

}  // namespace talaria::tools
