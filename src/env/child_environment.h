// Environments whose commands are children of this process: local, and the bubblewrap sandbox
// (the same, with bwrap in front of bash). One implementation, parameterised by the wrapper.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "talaria/env/environment.h"

namespace talaria::env {

// Turns the bash argv of a command into the argv to spawn. `cwd` is where the command runs;
// `pty` says whether it gets a terminal. The command must get the environment it is spawned
// with unchanged: its shell skips re-exporting saved variables it already has.
using ArgvWrapper = std::function<std::vector<std::string>(std::vector<std::string> bash_argv,
                                                           const std::string& cwd, bool pty)>;

// `make_wrapper` gets the session's shell-state directory (which the wrapped command must be
// able to write) and returns the wrapper; null: bash runs directly.
Result<std::shared_ptr<Environment>> OpenChildEnvironment(
    std::string kind, LocalOptions options,
    std::function<ArgvWrapper(const std::string& state_dir)> make_wrapper);

}  // namespace talaria::env
