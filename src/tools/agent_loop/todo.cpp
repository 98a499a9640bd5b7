// todo: the agent's task list for multi-step work (an agent-loop tool).
//
// The list is per-session agent state, so the dispatcher routes calls to the agent loop before
// they reach the registry. The registry still holds the schema below so models see the tool; the
// handler is only a safety net for a call that slips past the routing stage.
#include <string_view>

#include "talaria/core/tool_registration.h"
#include "tools/agent_loop/agent_loop_tool.h"

namespace {

constexpr std::string_view kTodoSchema = R"json({
  "name": "todo",
  "description": "Keep a task list for work that takes three or more steps, or when the user hands you several tasks at once. When a request covers every item of some collection, give each item its own entry so nothing is silently skipped. Call with no arguments to read the current list; every call returns the whole list.\nThe order of the list is its priority. Keep exactly one item in_progress at a time. Break a large phase into subtasks by giving them a parent. Mark an item completed only after the work is verified, not when you merely plan to do it; if something fails, mark it cancelled and add a revised item.",
  "parameters": {
    "type": "object",
    "properties": {
      "todos": {
        "type": "array",
        "description": "Items to write. With merge=false they become the whole list; with merge=true they update the items with the same id and the rest are appended.",
        "items": {
          "type": "object",
          "properties": {
            "id": {
              "type": "string",
              "description": "A short unique id you choose, e.g. \"1\" or \"setup\"."
            },
            "content": {
              "type": "string",
              "description": "What needs doing, as one actionable line."
            },
            "status": {
              "type": "string",
              "enum": ["pending", "in_progress", "completed", "cancelled"]
            },
            "parent": {
              "type": "string",
              "description": "Id of another item, which makes this one its subtask. Leave out for a top-level item."
            }
          },
          "required": ["id", "content", "status"]
        }
      },
      "merge": {
        "type": "boolean",
        "description": "true: update existing items by id and append new ones. false (default): replace the whole list with the given items.",
        "default": false
      }
    }
  }
})json";

}  // namespace

// Writes agent state: a barrier in a batch, and not read-only.
TALARIA_TOOL(Todo, talaria::tools::AgentLoopToolSpec({
                       .name = "todo",
                       .toolset = "todo",
                       .schema = kTodoSchema,
                       .emoji = "\xF0\x9F\x93\x8B",  // "📋"
                       .parallel = talaria::ParallelClass::kNever,
                       .annotations = {},
                       .aliases = {"todo_list"},
                   }));
