// clarify over MCP: the question goes to the calling client as elicitation/create, so a human
// at the client answers it on a form.
#include <chrono>

#include <nlohmann/json.hpp>

#include "talaria/core/client_channel.h"
#include "talaria/tools/clarify.h"

namespace talaria::tools {
namespace {

// A person gets this long to answer (the call's own deadline may be shorter); the original's
// agent.clarify_timeout.
constexpr std::chrono::minutes kClientAnswerTimeout{10};

std::string FieldKey(const ClarifyRequest& request, size_t i) {
  return request.batch ? "q" + std::to_string(i + 1) : std::string("answer");
}

// One field per question (an enum of its choices, or free text), plus a free-text "other"
// field for a question with choices; one boolean per choice for multi_select.
Json FormSchema(const ClarifyRequest& request) {
  Json properties = Json::object();
  for (size_t i = 0; i < request.questions.size(); ++i) {
    const ClarifyQuestion& q = request.questions[i];
    const std::string key = FieldKey(request, i);
    if (q.choices.empty()) {
      properties[key] = {{"type", "string"}, {"title", q.question}};
    } else if (q.multi_select) {
      for (size_t j = 0; j < q.choices.size(); ++j) {
        properties[key + "_" + std::to_string(j + 1)] = {
            {"type", "boolean"}, {"title", q.choices[j]}, {"default", false}};
      }
      properties[key + "_other"] = {{"type", "string"}, {"title", "Other (type your answer)"}};
    } else {
      properties[key] = {{"type", "string"}, {"title", q.question}, {"enum", q.choices}};
      properties[key + "_other"] = {{"type", "string"}, {"title", "Other (type your answer)"}};
    }
  }
  return {{"type", "object"}, {"properties", std::move(properties)}};
}

std::string FormMessage(const ClarifyRequest& request) {
  if (!request.batch) return request.questions.front().question;
  std::string message = request.title.empty() ? "The agent has some questions:" : request.title;
  for (size_t i = 0; i < request.questions.size(); ++i) {
    message += "\n" + std::to_string(i + 1) + ". " + request.questions[i].question;
  }
  return message;
}

std::string StringField(const Json& content, const std::string& key) {
  auto it = content.find(key);
  return it != content.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// The answer to question i from the form's content: the typed text wins over a picked choice.
Json AnswerOf(const ClarifyRequest& request, size_t i, const Json& content) {
  const ClarifyQuestion& q = request.questions[i];
  const std::string key = FieldKey(request, i);
  const std::string other = StringField(content, key + "_other");
  if (q.multi_select) {
    Json picked = Json::array();
    for (size_t j = 0; j < q.choices.size(); ++j) {
      auto it = content.find(key + "_" + std::to_string(j + 1));
      if (it != content.end() && it->is_boolean() && it->get<bool>())
        picked.push_back(q.choices[j]);
    }
    if (!other.empty()) picked.push_back(other);
    return picked;
  }
  if (!other.empty()) return other;
  const std::string picked = StringField(content, key);
  // A client that let a value outside the enum through: taken as typed text.
  return picked;
}

}  // namespace

bool ClarifyThroughClientTakes(std::string_view name) { return name == "clarify"; }

std::optional<ToolResult> ClarifyThroughClient(std::string_view name, const Json& args,
                                               ToolContext& ctx) {
  if (!ClarifyThroughClientTakes(name)) return std::nullopt;
  auto request = ParseClarifyArgs(args);
  if (!request) return ToolResult::Error(request.error().message());
  if (auto why = WhyClientCannotAnswer(ctx.client.get(), "elicitation/create")) {
    return ClarifyNobodyToAsk(*why);
  }
  const Json params = {{"message", FormMessage(*request)},
                       {"requestedSchema", FormSchema(*request)}};
  Result<Json> reply = ctx.client->Request("elicitation/create", params, ctx.cancel,
                                           EarlierDeadline(ctx.deadline, kClientAnswerTimeout));
  const size_t n = request->questions.size();
  if (!reply) {
    const StatusCode code = reply.error().code();
    if (code == StatusCode::kCancelled) {
      return ToolResult::Error("clarify was cancelled", CallStatus::kCancelled);
    }
    if (code == StatusCode::kDeadlineExceeded) {
      return ClarifyAnswered(*request,
                             std::vector<Json>(n, Json("[the user did not respond in time]")),
                             /*timed_out=*/true);
    }
    return ClarifyNobodyToAsk("the client could not ask: " + reply.error().message());
  }
  const std::string action = reply->is_object() ? reply->value("action", "") : "";
  if (action != "accept") {
    return ClarifyAnswered(*request, std::vector<Json>(n, Json("[the user declined to answer]")));
  }
  const Json content = reply->value("content", Json::object());
  std::vector<Json> answers;
  for (size_t i = 0; i < n; ++i) {
    answers.push_back(content.is_object() ? AnswerOf(*request, i, content) : Json(""));
  }
  return ClarifyAnswered(*request, answers);
}

}  // namespace talaria::tools
