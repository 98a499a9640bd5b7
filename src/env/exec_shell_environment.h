// An Environment whose commands go through an exec client that cannot signal what it runs:
// `docker exec <container>`, `apptainer exec instance://<name>`. Killing the local client does
// not stop the command on the far side, and whatever holds the exec's output keeps it open, so
// every command runs the scripts of remote_shell_scripts.h (the SSH environment's): the command
// runs as a job whose process group is recorded in a private state directory on the far side
// (a timed-out or cancelled run is killed through a second exec), what still holds the output
// when it ends is killed, and the new cwd comes back on the client's stderr behind a random
// marker, so a command costs one exec.
// Thread-safety: the environment is thread-safe; Run calls are serialized.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "talaria/base/status.h"
#include "talaria/env/environment.h"

namespace talaria::env {

enum class ExecTty { kNo, kYes };

struct ExecClient {
  std::string kind;  // Environment::kind(): "docker", "apptainer"
  std::string what;  // for messages: "docker: the container talaria-ab12 (debian:12-slim)"
  // The client's argv up to the program to run on the far side, e.g. {"docker", "exec", "-i",
  // "-t", "<container>"} (kYes: with a terminal).
  std::function<std::vector<std::string>(ExecTty)> argv_prefix;
  // Run once when the environment goes (removes the container, stops the instance): it ends
  // everything the session left running there.
  std::function<void()> teardown;
};

// Creates the session's state directory on the far side and enters `initial_cwd` (empty: the
// client's default directory). On an error the teardown runs before returning.
// Errors: NotFound (initial_cwd missing there), Unavailable (the far side runs no bash or does
// not answer; the message says which, after `client.what`).
Result<std::shared_ptr<Environment>> OpenExecShell(ExecClient client,
                                                   const std::string& initial_cwd);

}  // namespace talaria::env
