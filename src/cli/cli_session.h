// The tool session a CLI command works in: config.yaml's terminal settings, the --root
// directories, and the command policy with a terminal prompt (when there is a terminal).
#pragma once

#include <memory>
#include <string>

#include "cli/commands.h"
#include "talaria/guard/approvals.h"
#include "talaria/tools/session.h"

namespace talaria::cli {

// The tools a front end binds to its own dispatcher: the command policy (asking `prompter`;
// null: nobody can answer, so ask acts as deny) and execute_code, configured from config.yaml,
// whose scripts may call only the tools of `toolsets` (empty: the default selection).
Status InstallSessionTools(Runtime& rt, std::shared_ptr<safety::ApprovalPrompter> prompter,
                           const std::vector<std::string>& toolsets);

// Only the execute_code part of InstallSessionTools: what `tools` and `toolsets` need to list
// what a session would serve. Not having any tool a script may call is not an error.
Status EnableSessionCodeExecution(Runtime& rt, const std::vector<std::string>& toolsets);

// Errors are printed to stderr as "talaria <command>: <message>"; null then.
std::shared_ptr<tools::Session> OpenCliSession(Runtime& rt, const SessionFlags& flags,
                                               const std::string& command);

}  // namespace talaria::cli
