// The shell session of an environment whose commands run through a remote API that takes one
// command line and answers with its output (a sandbox service's exec call): the same state rules
// as every other environment (see environment.h), kept in a state directory on the far side,
// and the command's new working directory reported at the end of its output behind a marker,
// so one call per command is enough.
//
//   std::string line = RemoteShellCommandLine(state, cwd, marker, token, command, true);
//   ... the service runs `bash -c line` ...
//   RemoteShellReport r = SplitRemoteShellOutput(std::move(output), marker);
//
// Thread-safety: pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace talaria::env {

// Where a command starts: in the session's cwd, or in a one-off directory (its workdir), which
// becomes the session's only when the command `cd`s away from it (a workdir that stuck is the
// original's bug, hermes-agent#73683).
enum class StartDir : unsigned char { kSession, kOneOff };

// A bash script that enters `cwd` (its nearest existing ancestor when it is gone), runs
// `command` in the session whose exports and cwd live in `state_dir` (`persist`: what it
// changes is saved; with StartDir::kOneOff, `cwd` is a command's workdir, which becomes the
// session's cwd only when the command moves away from it), writes "<token> <pid>" to
// `state_dir`/exec.pid first (so a second call can end it: KillRemoteShellCommandLine) and
// prints "\n<marker><cwd>" last.
std::string RemoteShellCommandLine(std::string_view state_dir, std::string_view cwd,
                                   std::string_view marker, std::string_view token,
                                   std::string_view command, bool persist, StartDir start_dir);

// A bash script that enters `cwd` (its nearest existing ancestor) and runs `command` in the
// session of `state_dir` without saving what it changes (a background command: it starts from
// the session's state, its own changes do not carry back).
std::string RemoteShellBackgroundCommandLine(std::string_view state_dir, std::string_view cwd,
                                             std::string_view command);

// A bash script that sends SIGKILL to the process group of the command `token` names (waiting
// up to ~5 s for it to have started); a no-op when it already ended.
std::string KillRemoteShellCommandLine(std::string_view state_dir, std::string_view token);

// A bash script that creates the state directory (0700) and prints the physical `cwd` (its
// nearest existing ancestor; the home directory when empty).
std::string PrepareRemoteShellCommandLine(std::string_view state_dir, std::string_view cwd);

struct RemoteShellReport {
  std::string output;  // without the report
  bool found = false;  // false: the command was killed before it could report
  std::string cwd;
};
// Splits what a RemoteShellCommandLine printed at its last marker.
RemoteShellReport SplitRemoteShellOutput(std::string output, std::string_view marker);

}  // namespace talaria::env
