// What `talaria run` and `talaria chat` share before the first turn: the model settings
// (config.yaml's `model:` section, TALARIA_MODEL / TALARIA_BASE_URL, then flags), the session
// store, the tools a session serves (the command guard asking on the terminal), and the agent,
// new or resumed.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "talaria/agent/agent.h"
#include "talaria/core/runtime.h"
#include "talaria/store/session_store.h"

namespace talaria::cli {

struct AgentFlags {
  SessionFlags session;               // --root
  std::vector<std::string> toolsets;  // --toolsets
  std::string model;                  // --model
  std::string base_url;               // --base-url
  int max_iterations = 0;             // --max-iterations; 0: the config's (default 90)
  std::string resume;                 // --resume ID
  bool continue_latest = false;       // --continue: the latest session in this directory
};

struct AgentSetup {
  std::shared_ptr<store::SessionStore> store;
  std::unique_ptr<agent::Agent> agent;
  agent::ModelSettings model;
  bool resumed = false;
};

// Errors are printed as "talaria <command>: <message>"; the exit code is returned through
// `exit_code` (kExitUsage for bad flags or config, kExitToolError when the store or the model
// client cannot be opened).
std::unique_ptr<AgentSetup> SetUpAgent(Runtime& rt, const AgentFlags& flags,
                                       const std::string& command, int& exit_code);

// The emoji a tool shows with (its ToolEntry's), by name.
std::string ToolEmoji(Runtime& rt, std::string_view name);

}  // namespace talaria::cli
