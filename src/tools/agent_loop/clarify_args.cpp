#include <nlohmann/json.hpp>

#include "talaria/base/strings.h"
#include "talaria/tools/clarify.h"

namespace talaria::tools {
namespace {

std::string Stringify(const Json& value) {
  return value.is_string() ? value.get<std::string>() : DumpJson(value);
}

std::vector<std::string> NormalizedChoices(const Json& raw) {
  std::vector<std::string> choices;
  if (!raw.is_array()) return choices;
  for (const Json& item : raw) {
    if (item.is_null()) continue;
    std::string text(Trim(Stringify(item)));
    if (text.empty()) continue;
    choices.push_back(std::move(text));
    if (choices.size() == kMaxClarifyChoices) break;
  }
  return choices;
}

Result<ClarifyQuestion> ParseQuestion(const Json& item, std::string_view where) {
  ClarifyQuestion q;
  const Json question = item.value("question", Json());
  if (question.is_string()) q.question = std::string(Trim(question.get<std::string>()));
  if (q.question.empty()) {
    return Err(InvalidArgumentError(std::string(where) + ": the question is empty"));
  }
  q.choices = NormalizedChoices(item.value("choices", Json()));
  q.multi_select = item.value("multi_select", Json(false)).is_boolean() &&
                   item.value("multi_select", false) && !q.choices.empty();
  if (const Json id = item.value("id", Json()); id.is_string()) q.id = id.get<std::string>();
  return q;
}

}  // namespace

Result<ClarifyRequest> ParseClarifyArgs(const Json& args) {
  if (!args.is_object()) return Err(InvalidArgumentError("clarify: arguments must be an object"));
  ClarifyRequest request;
  const Json questions = args.value("questions", Json());
  if (questions.is_array() && !questions.empty()) {
    request.batch = true;
    if (const Json title = args.value("question", Json()); title.is_string()) {
      request.title = std::string(Trim(title.get<std::string>()));
    }
    for (size_t i = 0; i < questions.size() && i < kMaxClarifyQuestions; ++i) {
      if (!questions[i].is_object()) {
        return Err(InvalidArgumentError("clarify: questions[" + std::to_string(i) +
                                        "] must be an object"));
      }
      auto q = ParseQuestion(questions[i], "clarify: questions[" + std::to_string(i) + "]");
      if (!q) return Err(q.error());
      request.questions.push_back(std::move(*q));
    }
    return request;
  }
  auto q = ParseQuestion(args, "clarify");
  if (!q) return Err(q.error());
  request.questions.push_back(std::move(*q));
  return request;
}

ToolResult ClarifyAnswered(const ClarifyRequest& request, const std::vector<Json>& answers,
                           bool timed_out) {
  auto answer_of = [&](size_t i) { return i < answers.size() ? answers[i] : Json(""); };
  if (!request.batch) {
    const ClarifyQuestion& q = request.questions.front();
    Json out = {
        {"question", q.question}, {"choices_offered", q.choices}, {"user_response", answer_of(0)}};
    if (timed_out) out["timed_out"] = true;
    return ToolResult::FromJson(out);
  }
  Json responses = Json::array();
  for (size_t i = 0; i < request.questions.size(); ++i) {
    Json r = Json::object();
    if (!request.questions[i].id.empty()) r["id"] = request.questions[i].id;
    r["question"] = request.questions[i].question;
    r["user_response"] = answer_of(i);
    responses.push_back(std::move(r));
  }
  Json out = {{"responses", std::move(responses)}};
  if (timed_out) out["timed_out"] = true;
  return ToolResult::FromJson(out);
}

ToolResult ClarifyNobodyToAsk(std::string_view why) {
  return ToolResult::Error("No user is available to answer clarify (" + std::string(why) +
                               "). Make a sensible decision yourself, state the assumption, and "
                               "go on.",
                           CallStatus::kError, "no_user");
}

}  // namespace talaria::tools
