// What a child's finished history tells its parent (delegation_history.h).
#include "agent/delegation_history.h"

#include <algorithm>
#include <filesystem>

#include "agent/delegation_run.h"
#include "talaria/base/strings.h"

namespace talaria::agent {
namespace {

// The absolute, normalized form of a path a tool call named, relative to `cwd`.
std::string AbsolutePath(const std::string& path, const std::string& cwd) {
  std::filesystem::path p(path);
  if (p.is_relative() && !cwd.empty()) p = std::filesystem::path(cwd) / p;
  return p.lexically_normal().string();
}

}  // namespace

// The paths of a history's successful calls of `tools` (their "path" argument).
std::set<std::string> PathsOfCalls(const std::vector<Message>& history,
                                   const std::vector<std::string_view>& tools,
                                   const std::string& cwd) {
  std::set<std::string> ok_ids;
  for (const Message& m : history) {
    if (m.role == Role::kTool && m.content.rfind("{\"error\"", 0) != 0)
      ok_ids.insert(m.tool_call_id);
  }
  std::set<std::string> out;
  for (const Message& m : history) {
    for (const ToolCall& call : m.tool_calls) {
      if (std::find(tools.begin(), tools.end(), call.name) == tools.end()) continue;
      if (ok_ids.count(call.id) == 0) continue;
      auto args = ParseJson(call.arguments);
      if (!args || !args->is_object()) continue;
      std::string path = StringField(*args, "path");
      if (!path.empty()) out.insert(AbsolutePath(path, cwd));
    }
  }
  return out;
}

// [{tool, args_bytes, result_bytes, status}], the calls paired with their results by id.
Json ToolTrace(const std::vector<Message>& history) {
  Json trace = Json::array();
  for (size_t i = 0; i < history.size(); ++i) {
    for (const ToolCall& call : history[i].tool_calls) {
      Json step = {{"tool", call.name}, {"args_bytes", call.arguments.size()}};
      for (size_t j = i + 1; j < history.size() && history[j].role == Role::kTool; ++j) {
        if (history[j].tool_call_id != call.id) continue;
        step["result_bytes"] = history[j].content.size();
        step["status"] = history[j].content.rfind("{\"error\"", 0) == 0 ? "error" : "ok";
        break;
      }
      if (!step.contains("status")) step["status"] = "unanswered";
      trace.push_back(std::move(step));
    }
  }
  return trace;
}

std::string LastAssistantText(const std::vector<Message>& history) {
  std::string last;
  for (const Message& m : history) {
    if (m.role == Role::kAssistant && !Trim(m.content).empty()) last = m.content;
  }
  return last;
}

std::string_view ExitReason(TurnExit exit) {
  switch (exit) {
    case TurnExit::kAnswered:
      return "completed";
    case TurnExit::kBudgetExhausted:
      return "max_iterations";
    case TurnExit::kModelFailed:
      return "model_failed";
    case TurnExit::kInterrupted:
      return "interrupted";
    case TurnExit::kHalted:
      return "halted";
  }
  return "completed";
}

}  // namespace talaria::agent
