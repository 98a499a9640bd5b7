#include "talaria/mcp/tool_requests.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "talaria/core/client_channel.h"

namespace talaria::mcp {
namespace {

// Sends `method` to the call's client, if it can answer, for at most `timeout`.
Result<Json> Ask(ToolContext& ctx, std::string_view method, const Json& params,
                 std::chrono::milliseconds timeout) {
  if (auto why = WhyClientCannotAnswer(ctx.client.get(), method))
    return Err(FailedPreconditionError(std::move(*why)));
  return ctx.client->Request(method, params, ctx.cancel, EarlierDeadline(ctx.deadline, timeout));
}

}  // namespace

Result<Json> Elicit(ToolContext& ctx, std::string_view message, const Json& requested_schema,
                    std::chrono::milliseconds timeout) {
  Json params = Json::object();
  params["message"] = std::string(message);
  params["requestedSchema"] = requested_schema;
  Json answer = TALARIA_TRY(Ask(ctx, "elicitation/create", params, timeout));
  auto action = answer.find("action");
  static constexpr std::string_view kActions[] = {"accept", "decline", "cancel"};
  if (action == answer.end() || !action->is_string() ||
      std::find(std::begin(kActions), std::end(kActions), action->get_ref<const std::string&>()) ==
          std::end(kActions)) {
    return Err(InternalError(
        "the client's elicitation answer has no valid action (accept, decline or cancel)"));
  }
  return answer;
}

Result<Json> CreateMessage(ToolContext& ctx, const Json& params,
                           std::chrono::milliseconds timeout) {
  Json answer = TALARIA_TRY(Ask(ctx, "sampling/createMessage", params, timeout));
  if (!answer.contains("content"))
    return Err(InternalError("the client's sampling answer has no content"));
  return answer;
}

}  // namespace talaria::mcp
