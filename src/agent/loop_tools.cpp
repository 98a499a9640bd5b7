// The tools the loop executes itself (ToolSpec::owner == CallOwner::kAgentLoop): their state
// is the conversation's. The dispatcher has already resolved, coerced and validated the
// arguments against the tool's schema when it routes a call here.
#include <algorithm>

#include "agent/agent_impl.h"
#include "talaria/base/strings.h"
#include "talaria/tools/clarify.h"

namespace talaria::agent {
namespace {

constexpr std::string_view kLoopTodoStateKey = "todo";

}  // namespace

bool AgentImpl::TakesLoopTool(std::string_view name) {
  return name == "todo" || name == "clarify" || name == "memory" || name == "session_search";
}

std::optional<ToolResult> AgentImpl::RouteLoopTool(std::string_view name, const Json& args) {
  if (name == "todo") return RunTodo(args);
  if (name == "clarify") return RunClarify(args);
  if (name == "memory") return RunMemory(args);
  if (name == "session_search") return RunSessionSearchTool(args);
  return std::nullopt;  // not this loop's: the dispatcher answers "must be handled"
}

ToolResult AgentImpl::RunTodo(const Json& args) {
  std::lock_guard lock(todo_mu_);
  Json result = todo_.Apply(args);
  if (args.is_object() && args.contains("todos")) {
    if (Status s = store_->PutState(session_id_, kLoopTodoStateKey, todo_.Snapshot()); !s.ok()) {
      result["warning"] = "the list could not be saved with the session: " + s.message();
    }
  }
  return ToolResult::FromJson(result);
}

ToolResult AgentImpl::RunClarify(const Json& args) {
  auto request = tools::ParseClarifyArgs(args);
  if (!request) return ToolResult::Error(request.error().message());
  AgentEvents* events = turn_events_.load();
  if (events == nullptr) return tools::ClarifyNobodyToAsk("nobody is attached to this turn");
  std::vector<Json> answers;
  for (const tools::ClarifyQuestion& q : request->questions) {
    std::optional<std::string> answer = events->Clarify(q.question, q.choices);
    if (!answer) {
      if (answers.empty()) return tools::ClarifyNobodyToAsk("this session runs without a user");
      return tools::ClarifyAnswered(*request, answers, /*timed_out=*/true);
    }
    if (!q.multi_select) {
      answers.emplace_back(std::move(*answer));
      continue;
    }
    // Several choices come back one per line.
    Json picked = Json::array();
    for (std::string_view rest = *answer; !rest.empty();) {
      const size_t nl = rest.find('\n');
      std::string_view line = Trim(rest.substr(0, nl));
      if (!line.empty()) picked.push_back(std::string(line));
      rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    }
    answers.push_back(std::move(picked));
  }
  return tools::ClarifyAnswered(*request, answers);
}

}  // namespace talaria::agent
