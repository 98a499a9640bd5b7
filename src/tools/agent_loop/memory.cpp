// memory: durable notes about the environment and the user (an agent-loop tool).
//
// The memory store belongs to the agent loop (it is frozen into the system prompt at session
// start), so the dispatcher routes calls there before they reach the registry. The registry
// still holds the schema below so models see the tool; the handler is only a safety net for a
// call that slips past the routing stage.
#include <string_view>

#include "talaria/core/tool_registration.h"
#include "tools/agent_loop/agent_loop_tool.h"

namespace {

constexpr std::string_view kMemorySchema = R"json({
  "name": "memory",
  "description": "Keep durable facts that should outlive this session. Saved entries are put in front of you at the start of every future session, so each one should be short and worth its space.\n\nHOW: make every change in a single call through the `operations` array (items are {action, content?, old_text?}). The batch is applied atomically and the size limit is checked only against the end result, so one call can drop or shorten stale entries and add new ones even when the addition alone would not fit. The reply shows usage (current/limit characters) and confirms the write; a successful call is complete, so do not send it again. Use the single-change fields (action, content, old_text) only for one isolated edit.\n\nWHEN: save without being asked when the user states a preference, corrects you or shares something personal, and when you learn a lasting fact about their environment, conventions or workflow. Priority: the user's preferences and corrections first, then facts about the environment, then procedures. A good entry saves the user from having to tell you again.\n\nWHEN FULL: an addition that would exceed the limit is refused and the current entries are listed. Send one batch that removes or condenses enough stale entries and adds the new one.\n\nTARGETS: 'user' describes the user (name, role, preferences, style); 'memory' holds your own notes (environment, conventions, tool quirks, lessons learned).\n\nDO NOT SAVE: trivial or obvious facts, anything easy to look up again, raw data, progress on the current task, logs of finished work, or a temporary to-do list.",
  "parameters": {
    "type": "object",
    "properties": {
      "target": {
        "type": "string",
        "enum": ["memory", "user"],
        "description": "Which store: 'memory' for your own notes, 'user' for what you know about the user."
      },
      "action": {
        "type": "string",
        "enum": ["add", "replace", "remove"],
        "description": "Single-change form: what to do. Leave out when you pass `operations`."
      },
      "content": {
        "type": "string",
        "description": "Single-change form: the entry text. Needed for add and replace."
      },
      "old_text": {
        "type": "string",
        "description": "Single-change form, needed for replace and remove: a short substring that occurs in exactly one existing entry and so picks the entry to change. Leave out for add."
      },
      "operations": {
        "type": "array",
        "description": "Batch form: several changes applied together and atomically, with the size limit checked only on the final result. Preferred whenever you make more than one change or need to make room. Each item is {action, content?, old_text?}.",
        "items": {
          "type": "object",
          "properties": {
            "action": {
              "type": "string",
              "enum": ["add", "replace", "remove"]
            },
            "content": {
              "type": "string",
              "description": "Entry text, for add and replace."
            },
            "old_text": {
              "type": "string",
              "description": "Unique substring of the entry to replace or remove."
            }
          },
          "required": ["action"]
        }
      }
    },
    "required": ["target"]
  }
})json";

}  // namespace

// Writes files shared across sessions: a barrier in a batch, and not read-only.
TALARIA_TOOL(Memory, talaria::tools::AgentLoopToolSpec({
                         .name = "memory",
                         .toolset = "memory",
                         .schema = kMemorySchema,
                         .emoji = "\xF0\x9F\xA7\xA0",  // "🧠"
                         .parallel = talaria::ParallelClass::kNever,
                         .annotations = {},
                     }));
