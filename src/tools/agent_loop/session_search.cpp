// session_search: recall of past conversations from the session database (an agent-loop tool).
//
// The session database and the current session's identity belong to the agent loop, so the
// dispatcher routes calls there before they reach the registry. The registry still holds the
// schema below so models see the tool; the handler is only a safety net for a call that slips
// past the routing stage.
#include <string_view>

#include "talaria/core/tool_registration.h"
#include "tools/agent_loop/agent_loop_tool.h"

namespace {

constexpr std::string_view kSessionSearchSchema = R"json({
  "name": "session_search",
  "description": "Search and read your earlier conversations, which are stored locally and indexed for full-text search (SQLite FTS5). The arguments you pass decide the mode; there is no mode parameter.\n\n1) DISCOVER: pass `query`. Returns up to `limit` matching sessions, at most one per conversation lineage. With detail='adaptive' (the default) the best match comes with the first and last messages of its session plus a window of messages around the hit, while lower-ranked matches carry only the matching message and metadata; detail='full' expands every result that way. Each result names its session_id and match_message_id.\n2) SCROLL: pass `session_id` and `around_message_id`. Returns `window` messages on each side of that message, with no search and no opening/closing messages. To move forward, call again anchored on the last message id of the window; to move back, on the first. When a side holds fewer than `window` messages you have reached the start or the end of the session.\n3) READ: pass `session_id` alone. Returns the whole session, or its beginning and end when it is long.\n4) BROWSE: pass nothing. Lists recent sessions with titles, previews and times; useful when the user asks what they were working on without naming a topic.\n\nQUERY SYNTAX (FTS5): terms are combined with AND by default, so every word must match. Use OR for broader recall (alpha OR beta), double quotes for an exact phrase (\"docker networking\"), NOT to exclude a term (python NOT java) and a trailing * for a prefix (deploy*).\n\nUse it for questions about earlier conversations: what was decided about X, where work on Y stopped, which session dealt with Z. It tells you what was said and when; it does not show the current state of files or the outside world.",
  "parameters": {
    "type": "object",
    "properties": {
      "query": {
        "type": "string",
        "description": "Discover mode: the FTS5 search text (keywords, phrases or boolean expressions). Leave out to browse recent sessions. Ignored when session_id and around_message_id are both given."
      },
      "limit": {
        "type": "integer",
        "description": "Discover mode: how many sessions to return (default 3, max 10). Raise it to 5-10 when the topic probably spans several sessions and you want to choose one to scroll into.",
        "default": 3
      },
      "sort": {
        "type": "string",
        "enum": ["newest", "oldest"],
        "description": "Discover mode: favour recent or early sessions on top of relevance. Leave out for relevance alone (exploring what is known about a topic); 'newest' for where something was left; 'oldest' for how something began."
      },
      "detail": {
        "type": "string",
        "enum": ["adaptive", "full"],
        "description": "Discover mode: 'adaptive' (default) expands only the best match and gives just the matching message for the rest; 'full' expands every result.",
        "default": "adaptive"
      },
      "session_id": {
        "type": "string",
        "description": "The session to scroll or read, as returned by an earlier discover call. Scrolling also needs around_message_id."
      },
      "around_message_id": {
        "type": "integer",
        "description": "Scroll mode: the message to centre the window on, e.g. a result's match_message_id or any id from an earlier window."
      },
      "window": {
        "type": "integer",
        "description": "Scroll mode: how many messages to return on each side of the anchor, which is always included (default 5, clamped to 1..20).",
        "default": 5
      },
      "role_filter": {
        "type": "string",
        "description": "Comma-separated message roles to include. Defaults to 'user,assistant', since tool output is mostly noise; pass 'user,assistant,tool' to include tool output or 'tool' to search tool output only."
      },
      "scope": {
        "type": "string",
        "enum": ["current", "all"],
        "description": "'current' limits results to the current conversation and its lineage; 'all' searches the whole history. Messaging front ends may default to 'current'; elsewhere the whole history is searched."
      }
    }
  }
})json";

}  // namespace

// Only reads the session database: may run beside other calls of the same turn.
TALARIA_TOOL(SessionSearch, talaria::tools::AgentLoopToolSpec({
                                .name = "session_search",
                                .toolset = "session_search",
                                .schema = kSessionSearchSchema,
                                .emoji = "\xF0\x9F\x94\x8E",  // "🔎"
                                .parallel = talaria::ParallelClass::kSafe,
                                .annotations = {.read_only = true, .idempotent = true},
                            }));
