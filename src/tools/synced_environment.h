// A remote sandbox's environment with the workspace kept in step (terminal.<service>.sync):
// the local workspace root goes into the sandbox at open as one tar stream; before each
// command, the files changed locally since the last exchange (the file tools' writes) go in;
// after it, the files the command changed come back and are written through the workspace, so
// its confinement rules (no writes outside, through links or to sensitive paths) hold for them
// as for the file tools. A file that may not be written back is named after the output.
// Background jobs' changes come back with the next command.
// Thread-safety: as env::Environment (commands and their exchanges are serialized).
#pragma once

#include <memory>
#include <string>

#include "talaria/base/status.h"
#include "talaria/confinement/workspace.h"
#include "talaria/env/environment.h"

namespace talaria::tools {

// Pushes `local_root` into `remote_dir` of `remote` (created when missing) and starts the
// session there. Errors: those of the first push (sandboxes::PushTree).
Result<std::shared_ptr<env::Environment>> WithWorkspaceSync(
    std::shared_ptr<env::Environment> remote, std::shared_ptr<const safety::Workspace> workspace,
    std::string local_root, std::string remote_dir);

}  // namespace talaria::tools
