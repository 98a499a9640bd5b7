#include "talaria/mcp/tool_requests.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "talaria/core/client_channel.h"

namespace talaria::mcp {
namespace {

// The earlier of the call's deadline and now + timeout (without overflowing max()).
ClientChannel::Deadline DeadlineFor(const ToolContext& ctx, std::chrono::milliseconds timeout) {
  const auto now = std::chrono::steady_clock::now();
  if (ctx.deadline <= now) return ctx.deadline;
  const auto left = ctx.deadline - now;
  return left < timeout ? ctx.deadline : now + timeout;
}

Result<Json> Ask(ToolContext& ctx, std::string_view capability, std::string_view method, const Json& params,
                 std::chrono::milliseconds timeout) {
  if (!ctx.client) {
    return Err(FailedPreconditionError(std::string(method) + " needs an MCP client, and this call has none"));
  }
  if (!ctx.client->Supports(capability)) {
    return Err(FailedPreconditionError("the MCP client did not declare the " + std::string(capability) +
                                       " capability, so it cannot answer " + std::string(method)));
  }
  return ctx.client->Request(method, params, ctx.cancel, DeadlineFor(ctx, timeout));
}

}  // namespace

Result<Json> Elicit(ToolContext& ctx, std::string_view message, const Json& requested_schema,
                    std::chrono::milliseconds timeout) {
  Json params = Json::object();
  params["message"] = std::string(message);
  params["requestedSchema"] = requested_schema;
  Json answer = TALARIA_TRY(Ask(ctx, "elicitation", "elicitation/create", params, timeout));
  auto action = answer.find("action");
  static constexpr std::string_view kActions[] = {"accept", "decline", "cancel"};
  if (action == answer.end() || !action->is_string() ||
      std::find(std::begin(kActions), std::end(kActions), action->get_ref<const std::string&>()) ==
          std::end(kActions)) {
    return Err(InternalError("the client's elicitation answer has no valid action (accept, decline or cancel)"));
  }
  return answer;
}

Result<Json> CreateMessage(ToolContext& ctx, const Json& params, std::chrono::milliseconds timeout) {
  Json answer = TALARIA_TRY(Ask(ctx, "sampling", "sampling/createMessage", params, timeout));
  if (!answer.contains("content")) return Err(InternalError("the client's sampling answer has no content"));
  return answer;
}

}  // namespace talaria::mcp
