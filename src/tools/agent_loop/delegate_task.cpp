// delegate_task: hands work to subagents with isolated contexts (an agent-loop tool).
//
// Spawning children needs the parent agent (its model client, toolsets and interrupt state), so
// the dispatcher routes calls to the agent loop before they reach the registry. The registry
// still holds the schema below so models see the tool; the handler is only a safety net for a
// call that slips past the routing stage.
#include <string_view>

#include "talaria/core/tool_registration.h"
#include "tools/agent_loop/agent_loop_tool.h"

namespace {

constexpr std::string_view kDelegateTaskSchema = R"json({
  "name": "delegate_task",
  "description": "Hand work to one or more subagents. Each runs in an isolated context with its own conversation, working session and toolsets, and only its final summary comes back to you: its intermediate steps never enter your context.\n\nTWO FORMS (give `goal` or `tasks`):\n1. One task: `goal`, plus optional `context` and `toolsets`.\n2. Batch: a `tasks` array. The tasks run in parallel, up to the configured concurrency limit (3 by default), and the results come back together.\n\nGOOD USES: reasoning-heavy subtasks (debugging, code review, synthesising research), work whose intermediate output would flood your context, and independent workstreams that can proceed side by side.\nPOOR USES: a single tool call (make it yourself), mechanical steps that need no judgement, and anything that needs the user's input (subagents cannot talk to the user).\n\nIMPORTANT:\n- Subagents have not seen this conversation. Put everything they need in `context`: file paths, error messages, constraints, and the language or tone the user expects (otherwise they answer in English).\n- A summary is the subagent's own account, not a verified fact. For work with side effects (files written, remote changes, uploads, publishing) ask for a checkable handle (absolute path, URL, id, status code) and check it yourself before telling the user it worked.\n- Subagents cannot ask the user questions or save long-term notes. A 'leaf' subagent (the default) cannot delegate; an 'orchestrator' may start its own workers when nesting is enabled in the configuration (it is off by default).\n- Delegation runs inside the current turn: if the turn is interrupted, the subagents are cancelled and their work is lost. For one long, independent task, set background=true instead.\n- Results always come back as an array with one entry per task.",
  "parameters": {
    "type": "object",
    "properties": {
      "goal": {
        "type": "string",
        "description": "What the subagent should achieve. Make it specific and self-contained: the subagent knows nothing about this conversation."
      },
      "context": {
        "type": "string",
        "description": "Background the subagent needs: file paths, error messages, project layout, constraints. The more specific, the better the result."
      },
      "toolsets": {
        "type": "array",
        "items": {"type": "string"},
        "description": "Toolsets to enable for the subagent (default: the toolsets you have), e.g. ['file'] for code work or ['web'] for research."
      },
      "tasks": {
        "type": "array",
        "description": "Batch form: tasks to run in parallel, each in its own subagent with an isolated context, up to the configured concurrency limit (3 by default). When given, the top-level goal, context and toolsets are ignored.",
        "items": {
          "type": "object",
          "properties": {
            "goal": {
              "type": "string",
              "description": "What this subagent should achieve."
            },
            "context": {
              "type": "string",
              "description": "Background for this task only."
            },
            "toolsets": {
              "type": "array",
              "items": {"type": "string"},
              "description": "Toolsets for this task only."
            },
            "role": {
              "type": "string",
              "enum": ["leaf", "orchestrator"],
              "description": "Role for this task only; see the top-level role."
            }
          },
          "required": ["goal"]
        }
      },
      "role": {
        "type": "string",
        "enum": ["leaf", "orchestrator"],
        "description": "'leaf' (default): a focused worker that cannot delegate further. 'orchestrator': may start its own workers, if nesting is enabled in the configuration (max_spawn_depth of 2 or more); otherwise it is treated as 'leaf'."
      },
      "background": {
        "type": "boolean",
        "description": "true: run a single task in the background instead of blocking this turn (default false). The call returns at once with a delegation_id and the full result arrives later as a new message that repeats the original goal and context. Cannot be combined with `tasks`. Do not poll or wait for it; carry on with other work."
      }
    }
  }
})json";

}  // namespace

// Children act on the world: a barrier in a batch, and not read-only.
TALARIA_TOOL(DelegateTask, talaria::tools::AgentLoopToolSpec({
                               .name = "delegate_task",
                               .toolset = "delegation",
                               .schema = kDelegateTaskSchema,
                               .emoji = "\xF0\x9F\x94\x80",  // "🔀"
                               .parallel = talaria::ParallelClass::kNever,
                               .annotations = {},
                           }));
