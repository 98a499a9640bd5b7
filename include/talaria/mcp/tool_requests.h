// Requests a running tool sends to the MCP client behind its call (ToolContext::client): ask the
// user (elicitation/create) or the client's model (sampling/createMessage). Each waits for the
// answer until the call is cancelled, its deadline passes or `timeout` runs out, whichever is
// first; the client is then told to drop the request.
//
//   auto answer = talaria::mcp::Elicit(ctx, "Which branch?", schema);
//   if (!answer) return ToolResult::Error(answer.error().message());
//   if ((*answer)["action"] != "accept") return ToolResult::Error("the user declined");
//
// Thread-safety: free functions; safe from any thread of the running call.
#pragma once

#include <chrono>
#include <string_view>

#include "talaria/base/json.h"
#include "talaria/base/status.h"
#include "talaria/core/tool_context.h"

namespace talaria::mcp {

inline constexpr std::chrono::minutes kDefaultClientRequestTimeout{10};

// Sends elicitation/create {message, requestedSchema} and returns the client's ElicitResult
// ({"action": "accept" | "decline" | "cancel", "content"?: {...}}).
// Errors: FailedPrecondition when the call has no MCP client (ctx.client is null) or the client
// did not declare the elicitation capability; Internal for an answer of the wrong shape; the
// rest as ClientChannel::Request (Cancelled, DeadlineExceeded, Unavailable, ...).
Result<Json> Elicit(ToolContext& ctx, std::string_view message, const Json& requested_schema,
                    std::chrono::milliseconds timeout = kDefaultClientRequestTimeout);

// Sends sampling/createMessage with `params` ({messages, maxTokens, ...}) and returns the
// client's CreateMessageResult ({role, content, model, stopReason?}). Errors as Elicit, for the
// sampling capability.
Result<Json> CreateMessage(ToolContext& ctx, const Json& params,
                           std::chrono::milliseconds timeout = kDefaultClientRequestTimeout);

}  // namespace talaria::mcp
