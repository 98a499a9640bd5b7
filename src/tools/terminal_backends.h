// The terminal backends past one machine that Session::Open selects by `terminal.backend`:
// apptainer (an instance per session, the workspace bound at its own path) and pool (the session
// placed on one of `terminal.pool.hosts`, SSH machines shared by every session of this process).
// Thread-safety: thread-safe.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "talaria/base/status.h"
#include "talaria/env/environment.h"
#include "talaria/env/host_pool.h"
#include "talaria/tools/session.h"

namespace talaria::tools {

// REQUIRES: t.backend is "apptainer" or "pool". `roots` are the workspace roots (the first is
// where an apptainer session starts).
Result<std::shared_ptr<env::Environment>> OpenClusterBackend(const TerminalSettings& t,
                                                             const std::vector<std::string>& roots,
                                                             const std::string& session_id);

// The hosts of the pool `t` names (placement counts, health), as this process has used it so
// far; empty when no session of this process has been placed on it yet.
std::vector<env::PoolHostStatus> PoolHostsOf(const TerminalSettings& t);

// "user@host:port" (user and port optional) into `ssh`'s host, user and port.
// Errors: InvalidArgument.
Status ParsePoolHost(std::string_view spec, env::SshOptions& ssh);

}  // namespace talaria::tools
