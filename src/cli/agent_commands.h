// The agent's subcommands: `talaria run`, `talaria chat` and `talaria sessions`.
#pragma once

#include <string>

#include "cli/agent_setup.h"
#include "cli/commands.h"
#include "talaria/core/runtime.h"

namespace talaria::cli {

// 128 + SIGINT: what a shell reports for a command stopped by Ctrl-C.
inline constexpr int kExitInterrupted = 130;

// talaria run "PROMPT": exit 0 on an answer, 1 on a model or budget failure, 2 on usage
// errors, 130 on Ctrl-C.
struct RunOptions {
  AgentFlags agent;
  std::string prompt;
  bool json = false;  // one JSON event per line instead of the streamed answer
};
int RunAgentTask(Runtime& rt, const RunOptions& options);

// talaria chat: a conversation on the terminal until /exit, Ctrl-D or a second Ctrl-C.
struct ChatOptions {
  AgentFlags agent;
};
int RunChat(Runtime& rt, const ChatOptions& options);

// talaria sessions list|show ID|usage [ID]|delete ID [--json].
struct SessionsOptions {
  std::string action;  // list | show | usage | delete
  std::string id;
  bool json = false;
  size_t limit = 20;
  bool here = false;  // list: only sessions of the current directory
};
int RunSessions(const SessionsOptions& options);

}  // namespace talaria::cli
