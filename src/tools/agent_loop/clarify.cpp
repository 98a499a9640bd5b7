// clarify: asks the user a question and waits for the answer (an agent-loop tool).
//
// Only the front end driving the agent loop can reach the user, so the dispatcher routes calls
// there before they reach the registry. The registry still holds the schema below so models see
// the tool; the handler is only a safety net for a call that slips past the routing stage.
#include <string_view>

#include "talaria/core/tool_registration.h"
#include "tools/agent_loop/agent_loop_tool.h"

namespace {

constexpr std::string_view kClarifySchema = R"json({
  "name": "clarify",
  "description": "Ask the user a question when you need a decision, missing information or feedback before going on. Give either `question` (one question) or `questions` (a batch). Three kinds of question:\n1. Single choice: give up to 4 `choices`. The user picks one, or types an answer of their own through an 'Other' option the interface adds. Put the option you recommend first: the interface marks it as recommended and preselects it.\n2. Multiple choice: also set multi_select=true. The user may tick several options, and user_response is then a list.\n3. Open question: leave out `choices`; the user answers in free text.\n\nTo ask several independent questions at once, pass them in `questions` (up to 5, each with its own choices and multi_select, mixing the three kinds freely). The user answers them all on one form, in any order; prefer this to a chain of single-question calls.\n\nPut the options only in `choices`, never spelled out inside the question text: options written into the question cannot be selected. Right: question='Which database should the service use?', choices=['PostgreSQL', 'SQLite']. Wrong: question='Which database: (a) PostgreSQL or (b) SQLite?' with no choices.\n\nUse it when a task is ambiguous and the user should choose the approach, when a decision has trade-offs the user should weigh, or to ask how a finished task worked out. When a decision is low-stakes, make a sensible choice yourself instead of asking.",
  "parameters": {
    "type": "object",
    "properties": {
      "question": {
        "type": "string",
        "description": "The question and nothing else, e.g. 'Which branch should I rebase onto?'. Do not list the answer options here; pass them in `choices`. With `questions`, use it for a short title of the batch."
      },
      "choices": {
        "type": "array",
        "items": {"type": "string"},
        "maxItems": 4,
        "description": "The selectable options, one per element (up to 4), the one you recommend first; the interface labels it, so do not write 'recommended' yourself. An 'Other' option for a typed answer is added automatically. Leave out only for a truly open-ended question."
      },
      "multi_select": {
        "type": "boolean",
        "description": "true: the user may select several choices and user_response is a list. false (default): exactly one choice. Has no effect without choices."
      },
      "questions": {
        "type": "array",
        "maxItems": 5,
        "description": "Batch form: 2-5 independent questions answered on one form. Each item follows the same rules as the top-level fields, and its optional id is echoed in the matching response. When given, the top-level question serves as the batch title and the top-level choices are ignored. The result is {responses: [...]}, with timed_out: true added when the user stopped partway (unanswered items have an empty user_response). Batch only questions whose answers do not depend on each other.",
        "items": {
          "type": "object",
          "properties": {
            "id": {
              "type": "string",
              "description": "Optional short identifier echoed in the matching response, e.g. 'approach'."
            },
            "question": {"type": "string"},
            "choices": {
              "type": "array",
              "items": {"type": "string"},
              "maxItems": 4
            },
            "multi_select": {"type": "boolean"}
          },
          "required": ["question"]
        }
      }
    }
  }
})json";

}  // namespace

// Waits on the user, so never beside other calls; changes nothing itself.
TALARIA_TOOL(Clarify, talaria::tools::AgentLoopToolSpec({
                          .name = "clarify",
                          .toolset = "clarify",
                          .schema = kClarifySchema,
                          .emoji = "\xE2\x9D\x93",  // "❓"
                          .parallel = talaria::ParallelClass::kNever,
                          .annotations = {.read_only = true},
                      }));
