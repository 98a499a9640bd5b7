// The tool session a CLI command works in: config.yaml's terminal settings, the --root
// directories, and the command policy with a terminal prompt (when there is a terminal).
#pragma once

#include <memory>
#include <string>

#include "cli/commands.h"
#include "talaria/tools/session.h"

namespace talaria::cli {

// Errors are printed to stderr as "talaria <command>: <message>"; null then.
std::shared_ptr<tools::Session> OpenCliSession(Runtime& rt, const SessionFlags& flags, const std::string& command);

}  // namespace talaria::cli
