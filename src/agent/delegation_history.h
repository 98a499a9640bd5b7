// What a child's finished history tells its parent: the calls it made, the files it wrote,
// its last words and why its turn ended (the parts of delegate_task's per-task result entry).
// Thread-safety: pure functions.
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "talaria/agent/agent.h"
#include "talaria/agent/chat.h"
#include "talaria/base/json.h"

namespace talaria::agent {

// The absolute paths named by a history's successful calls of `tools` ("path" argument),
// relative ones taken from `cwd`.
std::set<std::string> PathsOfCalls(const std::vector<Message>& history,
                                   const std::vector<std::string_view>& tools,
                                   const std::string& cwd);

// [{tool, args_bytes, result_bytes, status}], the calls paired with their results by id.
Json ToolTrace(const std::vector<Message>& history);

// The last assistant message with text, or "".
std::string LastAssistantText(const std::vector<Message>& history);

// The reference's exit_reason for how a turn ended.
std::string_view ExitReason(TurnExit exit);

}  // namespace talaria::agent
