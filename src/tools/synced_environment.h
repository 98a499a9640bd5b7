// A remote sandbox's environment with the workspace kept in step (terminal.<service>.sync):
// the local workspace root goes into the sandbox at open as one tar stream; before each
// command, the files changed or deleted locally since the last exchange (the file tools'
// writes) are copied in or removed there; after it, the files the command changed come back and
// are written through the workspace, and those it deleted are removed through it, so its
// confinement rules (no writes or removals outside, through links or of sensitive paths) hold
// for them as for the file tools. A file that may not be written back or removed is named after
// the output. Background jobs' changes come back with the next command.
// "Changed" is judged against each side's listing of the last exchange (mtime to the
// nanosecond, and size; sandboxes/file_sync.h), so a file that did not change is never sent
// again and cannot overwrite a newer copy on the other side. A file changed on both sides
// between two exchanges (a file tool's write while a background job in the sandbox writes the
// same file) keeps the local copy: local changes go in before the command runs.
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
