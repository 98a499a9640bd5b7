// The tools the loop executes itself (ToolSpec::owner == CallOwner::kAgentLoop): their state
// is the conversation's. The dispatcher has already resolved, coerced and validated the
// arguments against the tool's schema when it routes a call here.
#include <algorithm>

#include "agent/agent_impl.h"
#include "talaria/base/strings.h"

namespace talaria::agent {
namespace {

constexpr std::string_view kTodoStateKey = "todo";
constexpr size_t kMaxChoices = 4;

std::vector<std::string> ChoicesOf(const Json& item) {
  std::vector<std::string> out;
  auto it = item.find("choices");
  if (it == item.end() || !it->is_array()) return out;
  for (const Json& c : *it) {
    std::string text = c.is_string() ? c.get<std::string>() : DumpJson(c);
    text = std::string(Trim(text));
    if (!text.empty() && out.size() < kMaxChoices) out.push_back(std::move(text));
  }
  return out;
}

ToolResult NoUser() {
  return ToolResult::Error(
      "No user is available to answer questions in this session (it runs without anyone "
      "at a terminal). Make a reasonable assumption, say which one you made, and go on.",
      CallStatus::kError, "no_user");
}

}  // namespace

std::optional<ToolResult> AgentImpl::RouteLoopTool(std::string_view name, const Json& args) {
  if (name == "todo") return RunTodo(args);
  if (name == "clarify") return RunClarify(args);
  return std::nullopt;  // not this loop's: the dispatcher answers "must be handled"
}

ToolResult AgentImpl::RunTodo(const Json& args) {
  std::lock_guard lock(todo_mu_);
  Json result = todo_.Apply(args);
  if (args.is_object() && args.contains("todos")) {
    if (Status s = store_->PutState(session_id_, kTodoStateKey, todo_.Snapshot()); !s.ok()) {
      result["warning"] = "the list could not be saved with the session: " + s.message();
    }
  }
  return ToolResult::FromJson(result);
}

ToolResult AgentImpl::RunClarify(const Json& args) {
  AgentEvents* events = turn_events_.load();
  if (events == nullptr) return NoUser();
  auto batch = args.find("questions");
  if (batch != args.end() && batch->is_array() && !batch->empty()) {
    Json responses = Json::array();
    for (const Json& item : *batch) {
      if (!item.is_object()) continue;
      const std::string question(Trim(JsonStringField(item, "question")));
      if (question.empty()) continue;
      std::vector<std::string> choices = ChoicesOf(item);
      std::optional<std::string> answer = events->Clarify(question, choices);
      if (!answer) return NoUser();
      Json response = Json::object();
      if (item.contains("id")) response["id"] = item["id"];
      response["question"] = question;
      response["user_response"] = *answer;
      responses.push_back(std::move(response));
    }
    if (responses.empty()) return ToolResult::Error("clarify: every question is empty");
    return ToolResult::FromJson(Json{{"responses", std::move(responses)}});
  }
  const std::string question(Trim(JsonStringField(args, "question")));
  if (question.empty()) return ToolResult::Error("clarify: the question is empty");
  std::vector<std::string> choices = ChoicesOf(args);
  std::optional<std::string> answer = events->Clarify(question, choices);
  if (!answer) return NoUser();
  Json result = Json::object();
  result["question"] = question;
  result["choices_offered"] = choices;
  result["user_response"] = *answer;
  return ToolResult::FromJson(result);
}

}  // namespace talaria::agent
