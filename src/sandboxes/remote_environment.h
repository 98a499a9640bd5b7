// RemoteEnvironment: env::Environment over a SandboxApi. The session's shell state lives in a
// private directory inside the sandbox (env/remote_shell.h), so one exec call per command is
// enough: its output ends with the new working directory behind a per-session marker.
// Timeouts and cancellation: the service's own where it has them (ServiceEndsCalls), else a
// watcher thread that, at the deadline or on cancel, runs a second command killing the first
// one's process group; the first call then returns what was printed so far.
// Thread-safety: as env::Environment.
#pragma once

#include <memory>

#include "sandboxes/sandbox_api.h"
#include "talaria/env/environment.h"

namespace talaria::sandboxes {

// Creates the sandbox through `api` and prepares the session. Errors as OpenSandboxService's.
Result<std::shared_ptr<env::Environment>> OpenRemoteEnvironment(std::unique_ptr<SandboxApi> api,
                                                                std::string initial_cwd);

}  // namespace talaria::sandboxes
