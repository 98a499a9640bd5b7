// clarify's arguments and results, shared by every front end that can reach a user: the agent
// loop asks on its terminal; an MCP server asks its client through elicitation/create.
//
// Arguments are normalized as the original does: the question trimmed (empty is an error),
// choices stringified and trimmed, blanks dropped, at most 4; no choices means open-ended. A
// batch (`questions`, at most 5) carries its own questions and `question` becomes its title.
// Results: {"question", "choices_offered", "user_response"} for one question,
// {"responses": [{"id"?, "question", "user_response"}...]} for a batch (plus "timed_out": true
// when the user stopped partway), and {"error": ...} when no user can be asked.
// Thread-safety: free functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "talaria/base/json.h"
#include "talaria/base/status.h"
#include "talaria/core/tool_context.h"
#include "talaria/core/tool_result.h"

namespace talaria::tools {

inline constexpr size_t kMaxClarifyChoices = 4;
inline constexpr size_t kMaxClarifyQuestions = 5;

struct ClarifyQuestion {
  std::string id;  // a batch item's, echoed in its response; may be empty
  std::string question;
  std::vector<std::string> choices;  // empty: an open question
  bool multi_select = false;
};

struct ClarifyRequest {
  std::vector<ClarifyQuestion> questions;  // one, unless `batch`
  bool batch = false;
  std::string title;  // a batch's `question`
};

// InvalidArgument naming the problem (no question, a batch item without one).
Result<ClarifyRequest> ParseClarifyArgs(const Json& args);

// The result for answers given (one per question, in order: a string, or for multi_select a
// list of strings); `timed_out` when the user stopped before answering all.
ToolResult ClarifyAnswered(const ClarifyRequest& request, const std::vector<Json>& answers,
                           bool timed_out = false);

// The result when nobody can answer: an error telling the model to decide for itself.
ToolResult ClarifyNobodyToAsk(std::string_view why);

// An AgentLoopRouter for a server whose calls come from MCP clients: runs clarify through the
// calling client's elicitation/create (a form of one field per question: the choices as an
// enum plus a free-text field); any other loop-owned tool is not taken (nullopt). A client that
// did not declare elicitation gets ClarifyNobodyToAsk.
std::optional<ToolResult> ClarifyThroughClient(std::string_view name, const Json& args,
                                               ToolContext& ctx);
// Whether ClarifyThroughClient takes calls of `name` (for Dispatcher::SetAgentLoopRouter).
bool ClarifyThroughClientTakes(std::string_view name);

}  // namespace talaria::tools
