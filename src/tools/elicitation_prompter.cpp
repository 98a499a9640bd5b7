#include "tools/elicitation_prompter.h"

#include <algorithm>
#include <chrono>

#include <nlohmann/json.hpp>

#include "talaria/core/client_channel.h"

namespace talaria::tools {
namespace {

// A human gets this long to answer (the call's own deadline may be shorter).
constexpr std::chrono::minutes kAnswerTimeout{5};

class ElicitationPrompter final : public safety::ApprovalPrompter {
 public:
  ElicitationPrompter(std::shared_ptr<ClientChannel> client, std::stop_token cancel,
                      ToolContext::Deadline deadline)
      : client_(std::move(client)), cancel_(std::move(cancel)), deadline_(deadline) {}

  safety::ApprovalAnswer Ask(const safety::ApprovalRequest& request) override {
    std::string why;
    for (const safety::GuardReason& r : request.reasons) {
      if (!why.empty()) why += "; ";
      why += r.description;
    }
    Json choices = Json::array();
    for (const auto& [value, title] :
         {std::pair{"once", "Allow once"}, std::pair{"session", "Allow for this session"},
          std::pair{"always", "Always allow this kind of command"}, std::pair{"deny", "Deny"}}) {
      choices.push_back({{"const", value}, {"title", title}});
    }
    Json schema = {{"type", "object"},
                   {"properties",
                    {{"decision",
                      {{"type", "string"}, {"title", "Decision"}, {"oneOf", std::move(choices)}}}}},
                   {"required", {"decision"}}};
    Json params = {{"message", "The agent wants to run (" + request.tool + "):\n" +
                                   request.command + "\nIt needs approval: " + why},
                   {"requestedSchema", std::move(schema)}};
    Result<Json> answer = client_->Request("elicitation/create", params, cancel_,
                                           EarlierDeadline(deadline_, kAnswerTimeout));
    if (!answer) {
      const StatusCode code = answer.error().code();
      return code == StatusCode::kDeadlineExceeded || code == StatusCode::kCancelled
                 ? safety::ApprovalAnswer::kTimeout
                 : safety::ApprovalAnswer::kDeny;
    }
    if (answer->value("action", "") != "accept") return safety::ApprovalAnswer::kDeny;
    const Json content = answer->value("content", Json::object());
    const std::string decision = content.is_object() ? content.value("decision", "") : "";
    if (decision == "once") return safety::ApprovalAnswer::kOnce;
    if (decision == "session") return safety::ApprovalAnswer::kSession;
    if (decision == "always") return safety::ApprovalAnswer::kAlways;
    return safety::ApprovalAnswer::kDeny;
  }

 private:
  const std::shared_ptr<ClientChannel> client_;
  const std::stop_token cancel_;
  const ToolContext::Deadline deadline_;
};

}  // namespace

std::shared_ptr<safety::ApprovalPrompter> MakeElicitationPrompter(const ToolContext& ctx) {
  if (WhyClientCannotAnswer(ctx.client.get(), "elicitation/create")) return nullptr;
  return std::make_shared<ElicitationPrompter>(ctx.client, ctx.cancel, ctx.deadline);
}

}  // namespace talaria::tools
