#include "tools/code/script_call_screen.h"

#include <algorithm>
#include <array>
#include <optional>
#include <string_view>

#include <nlohmann/json.hpp>

namespace talaria::tools::code {
namespace {

// terminal from a script runs in the foreground only, as in the original (a background process
// would outlive the script that is supposed to collect its output).
constexpr std::array<std::string_view, 8> kTerminalStripped = {"background",
                                                               "pty",
                                                               "notify",
                                                               "notify_on_complete",
                                                               "watch_patterns",
                                                               "heartbeat",
                                                               "persist_on_release",
                                                               "check_interval"};

std::string ErrorText(const std::string& message) {
  Json body = Json::object();
  body["error"] = message;
  return DumpJson(body);
}

// Under code_execution.approvals: deny, a terminal command the guard would ask about is refused
// before it reaches the dispatcher: nobody is there to approve it.
std::optional<std::string> RefusalWithoutApprover(const Json& args,
                                                  const safety::GuardOptions& guard) {
  auto command = args.find("command");
  if (command == args.end() || !command->is_string()) return std::nullopt;  // the tool reports it
  const safety::GuardVerdict verdict =
      safety::JudgeCommand(command->get_ref<const std::string&>(), guard);
  if (verdict.decision == safety::GuardDecision::kAllow) return std::nullopt;
  std::string message = "Command refused: it needs approval, and scripts run without it";
  message += " (code_execution.approvals: deny)";
  if (!verdict.reasons.empty()) {
    message += ": ";
    message += verdict.reasons.front().description;
  }
  return message;
}

}  // namespace

std::string ToolNotAvailableMessage(const std::string& tool,
                                    const std::vector<std::string>& allowed) {
  std::string message = "Tool '";
  message += tool;
  message += "' is not available in execute_code. Available: ";
  for (size_t i = 0; i < allowed.size(); ++i) {
    if (i > 0) message += ", ";
    message += allowed[i];
  }
  return message;
}

std::string CallLimitMessage(int limit) {
  std::string message = "Tool call limit reached (";
  message += std::to_string(limit);
  message += "). No more tool calls allowed in this execution.";
  return message;
}

ScriptCallScreen::ScriptCallScreen(const Dispatcher& dispatcher, const ToolContext& base,
                                   ScreenOptions options, std::stop_token cancel,
                                   ToolContext::Deadline deadline)
    : dispatcher_(dispatcher), base_(base), options_(std::move(options)) {
  base_.cancel = std::move(cancel);
  base_.deadline = deadline;
}

std::string ScriptCallScreen::Call(const std::string& tool, Json args) {
  if (!std::binary_search(options_.allowed.begin(), options_.allowed.end(), tool)) {
    return ErrorText(ToolNotAvailableMessage(tool, options_.allowed));
  }
  // Claim a slot; a refused claim is handed back, so refusals never consume the budget.
  const int n = calls_.fetch_add(1, std::memory_order_relaxed);
  if (n >= options_.max_tool_calls) {
    calls_.fetch_sub(1, std::memory_order_relaxed);
    return ErrorText(CallLimitMessage(options_.max_tool_calls));
  }
  if (!args.is_object()) args = Json::object();  // the dispatcher reports it as invalid arguments
  if (tool == "terminal") {
    for (std::string_view key : kTerminalStripped) args.erase(std::string(key));
    if (options_.approvals == ScriptApprovals::kDeny) {
      if (auto refusal = RefusalWithoutApprover(args, options_.guard)) return ErrorText(*refusal);
    }
  }
  ToolContext ctx = base_;
  ctx.call_id = base_.call_id + "-rpc" + std::to_string(n + 1);
  return dispatcher_.DispatchArgs(tool, std::move(args), ctx).text;
}

}  // namespace talaria::tools::code
