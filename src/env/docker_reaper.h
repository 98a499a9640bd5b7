// Reaping the containers of a talaria that died without its teardown (SIGKILL, a crash).
// Thread-safety: thread-safe.
#pragma once

#include "talaria/base/status.h"
#include "talaria/env/environment.h"

namespace talaria::env {

// Every container carries talaria.owner=<hostname>/<pid>:<start time> of the process that made
// it. Removes the engine's talaria containers whose owner ran on this machine and is gone (a
// talaria killed with SIGKILL never ran its teardown); OpenDocker calls it once per process and
// engine. Errors: Unavailable (docker ps or rm failed), NotFound (no docker CLI).
Status ReapOrphanedContainers(const DockerOptions& options);

}  // namespace talaria::env
