// The static toolset table: plain data, declared to core's Toolsets at start-up.
//
// Every bundle starts from one shared list, CoreTools() (the seed's _HERMES_CORE_TOOLS): add a
// tool there once and every bundle built on it follows. Basic toolsets group one tool family;
// scenario toolsets compose basic ones through `includes`; bundles are what a front end enables
// by default. Tool names are the seed's legacy ones (`todo`, `process`).
#include <string>
#include <vector>

#include "talaria/tools/builtin_toolsets.h"

namespace talaria::tools {

const std::vector<std::string>& CoreTools() {
  static const std::vector<std::string> kCoreTools = {
      // Web
      "web_search",
      "web_extract",
      // Terminal and processes
      "terminal",
      "process",
      // Files
      "read_file",
      "write_file",
      "patch",
      "search_files",
      // Code execution
      "execute_code",
      // Agent-loop tools (planning, memory, recall, the user, subagents)
      "todo",
      "memory",
      "session_search",
      "clarify",
      "delegate_task",
      // Models
      "mixture_of_agents",
      "vision_analyze",
      "image_generate",
      // Messaging (available once a platform is configured)
      "send_message",
      // Home Assistant (available when HASS_TOKEN is set)
      "ha_list_entities",
      "ha_get_state",
      "ha_list_services",
      "ha_call_service",
  };
  return kCoreTools;
}

std::vector<ToolsetDef> BuiltinToolsetTable() {
  return {
      // Basic toolsets: one tool family each.
      {"web", "Search the web and extract page content", {"web_search", "web_extract"}, {}},
      {"search", "Web search only (no page extraction)", {"web_search"}, {}},
      {"browser",
       "Drive a web browser: navigate, read the page, click, type",
       {"browser_navigate", "browser_snapshot", "browser_click", "browser_type", "browser_scroll",
        "browser_back", "browser_press", "browser_get_images", "browser_vision", "browser_console",
        "browser_close"},
       {}},
      {"terminal", "Shell commands and background process management", {"terminal", "process"}, {}},
      {"file",
       "Read, write, patch and search files in the workspace",
       {"read_file", "write_file", "patch", "search_files"},
       {}},
      {"code_execution", "Run Python scripts that can call other tools", {"execute_code"}, {}},
      {"todo", "A task list for planning multi-step work", {"todo"}, {}},
      {"memory", "Persistent memory that survives across sessions", {"memory"}, {}},
      {"session_search", "Search and read past conversations", {"session_search"}, {}},
      {"clarify", "Ask the user clarifying questions", {"clarify"}, {}},
      {"delegation", "Hand tasks to subagents with isolated context", {"delegate_task"}, {}},
      {"moa", "Mixture of agents: several models on one hard problem", {"mixture_of_agents"}, {}},
      {"vision", "Analyze images", {"vision_analyze"}, {}},
      {"image_gen", "Generate images from text prompts", {"image_generate"}, {}},
      {"messaging", "Send messages to chat platforms, e-mail and SMS", {"send_message"}, {}},
      {"homeassistant",
       "Home Assistant: list and read entities, list and call services",
       {"ha_list_entities", "ha_get_state", "ha_list_services", "ha_call_service"},
       {}},
      {"rl",
       "RL training: environments, config, runs and their metrics",
       {"rl_list_environments", "rl_select_environment", "rl_get_current_config", "rl_edit_config",
        "rl_start_training", "rl_check_status", "rl_stop_training", "rl_get_results",
        "rl_list_runs", "rl_test_inference"},
       {}},

      // Scenario toolsets: compositions of basic ones. Their descriptions name no tools: some
      // they include may not be built in, and `talaria toolsets` adds the families they serve.
      {"debugging", "Debugging", {"terminal", "process"}, {"web", "file"}},
      {"safe", "Safe mode, no terminal access", {}, {"web", "vision", "image_gen"}},

      // Bundles: what a front end enables by default.
      {"talaria-cli", "The full interactive agent", CoreTools(), {}},
      // Not the agent loop's state tools (todo, memory, ...): an MCP client has no loop. clarify
      // is served: its question goes to the client's user through elicitation.
      {"talaria-mcp",
       "What `talaria mcp` serves by default",
       {"read_file", "write_file", "patch", "search_files", "terminal", "process", "execute_code",
        "web_search", "web_extract", "clarify"},
       {}},
  };
}

namespace {
[[maybe_unused]] const bool kDeclared = (DeclareBuiltinToolsets(&BuiltinToolsetTable), true);
}  // namespace

}  // namespace talaria::tools
