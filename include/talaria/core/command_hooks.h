// External command hooks: adapts the `hooks` section of config (the shape other agent tools use
// in settings.json) into HookSet hooks that run a shell command per matching tool call.
//
//   {"PreToolUse": [{"matcher": "write_file|patch",
//                    "hooks": [{"type": "command", "command": "/x.sh --flag", "timeout": 10,
//                               "fail_closed": false}]}],
//    "PostToolUse": [...]}
//
// Each command runs as `/bin/sh -c <command>` in its own process group (RunProcess), with the
// event JSON on stdin: session_id, transcript_path (""), cwd, permission_mode ("default"),
// hook_event_name, tool_name, tool_input, tool_use_id, and for PostToolUse tool_response.
// The environment is inherited plus TALARIA_PROJECT_DIR and CLAUDE_PROJECT_DIR (= cwd), so hooks
// written for other agent tools find their project.
//
// PreToolUse (one pre hook per command, in config order; modifications chain). Every block's
// message starts "Blocked by PreToolUse hook hooks.PreToolUse[i].hooks[j]: ", then the reason:
//   exit 2                                        -> block; stderr (trimmed) is the reason
//   exit 0, stdout JSON:
//     "continue": false                           -> block with "stopReason"
//     hookSpecificOutput.permissionDecision deny  -> block with permissionDecisionReason
//     hookSpecificOutput.permissionDecision ask   -> block (no human is present: fail closed)
//     legacy top-level "decision": "block"        -> block with "reason"
//     hookSpecificOutput.updatedInput (object)    -> replace the arguments
//   exit 0 with empty stdout, "allow", "defer"    -> continue
// PostToolUse (one transform hook for all commands; runs only after a successful call):
//   exit 2 (stderr), top-level "decision": "block" + "reason", or
//   hookSpecificOutput.additionalContext          -> feedback; when the result text is a JSON
//   object the feedback is added to it as a "hook_feedback" string field.
// Anything else — another exit code (127: its program is missing), a timeout, a crash, a spawn
// failure, unparsable stdout — is logged and ignored: a broken hook never breaks or hangs a call.
// A PreToolUse entry with "fail_closed": true blocks the call instead (a check that cannot be
// made refuses). A hook that times out has its whole process group killed.
//
// Thread-safety: InstallCommandHooks is not thread-safe with respect to `hooks_config`; the
// installed hooks are thread-safe (immutable state) and may run concurrently.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "talaria/base/json.h"
#include "talaria/base/status.h"
#include "talaria/core/hooks.h"

namespace talaria {

struct CommandHookOptions {
  // Working directory of every hook and the event's "cwd"; empty means the current directory
  // at install time.
  std::string cwd;
  // Used when an entry has no "timeout" (seconds in config).
  std::chrono::milliseconds default_timeout{60000};
  // Per-stream cap on what a hook may print that is kept (head + tail).
  size_t max_output_bytes = 256 * 1024;
  // Receives warnings (ignored events, failed hooks). Must be thread-safe. Null: LogWarn.
  std::function<void(std::string_view)> warn;
  // Asked before every hook command runs (a trusted project config: are the files it runs
  // still the ones the user trusted?). An error keeps the command from running: a PreToolUse
  // hook then blocks the call with the message (the check the user trusted cannot be made),
  // a PostToolUse hook is skipped with a warning. Must be thread-safe. Null: always run.
  std::function<Status()> before_run;
};

// Validates `hooks_config` and registers its PreToolUse and PostToolUse commands with `hooks`.
// A null config installs nothing. Event names other than PreToolUse/PostToolUse are ignored
// with a warning. Returns InvalidArgument naming the entry (e.g. "hooks.PreToolUse[0].hooks[1]")
// for a config that is not an object, a non-array event list, a matcher that is not a valid RE2
// pattern, a missing or empty "command", a "type" other than "command", a timeout that is not
// a positive number, or a "fail_closed" that is not a boolean. Nothing is registered unless the
// whole config is valid. Matchers are RE2 full matches against the tool name; "" or "*" (or no
// matcher) match all.
Status InstallCommandHooks(const Json& hooks_config, HookSet& hooks,
                           const CommandHookOptions& options);

}  // namespace talaria
