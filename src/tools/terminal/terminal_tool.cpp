// terminal: run a shell command in the session's environment, in the foreground (bounded,
// cancellable, with a timeout) or in the background (tracked by the process tool).
#include <algorithm>
#include <chrono>
#include <string>

#include <nlohmann/json.hpp>

#include "talaria/base/subprocess.h"
#include "talaria/checkpoints/checkpoint_manager.h"
#include "talaria/confinement/workspace.h"
#include "talaria/core/tool_registration.h"
#include "talaria/env/environment.h"
#include "talaria/env/process_table.h"
#include "talaria/tools/session_services.h"
#include "tools/terminal/terminal_output.h"

namespace talaria::tools {
namespace {

constexpr std::string_view kTerminalSchema = R"json({
  "name": "terminal",
  "description": "Run a shell command (bash) and return its combined stdout/stderr and exit code. The working directory and exported variables carry over to the next command. Foreground commands time out (default 180 s, at most 600 s); for servers, watchers and long builds use background=true and manage them with the process tool. Output is limited to 50,000 characters (head and tail kept). Do not use it to read, write or search files: use read_file, write_file, patch and search_files.",
  "parameters": {
    "type": "object",
    "properties": {
      "command": {"type": "string", "description": "The command to run (bash syntax)."},
      "background": {"type": "boolean", "default": false, "description": "Start it in the background and return a session_id for the process tool."},
      "timeout": {"type": "integer", "minimum": 1, "description": "Seconds before a foreground command is killed (default 180, max 600)."},
      "workdir": {"type": "string", "description": "Directory to run in (absolute, or relative to the current directory); default: the current directory."},
      "pty": {"type": "boolean", "default": false, "description": "Run on a pseudo-terminal, for programs that need one (interactive tools, colour output)."},
      "notify_on_complete": {"type": "boolean", "default": false, "description": "Background only: report when the process finishes."},
      "watch_patterns": {"type": "array", "items": {"type": "string"}, "description": "Background only: report output lines matching these strings (exclusive with notify_on_complete)."}
    },
    "required": ["command"]
  }
})json";

constexpr int64_t kDefaultTimeoutS = 180;
constexpr int64_t kMaxForegroundTimeoutS = 600;
constexpr size_t kMaxOutputChars = 50'000;

Json TerminalFailure(std::string error) {
  Json body = Json::object();
  body["output"] = "";
  body["exit_code"] = -1;
  body["error"] = std::move(error);
  return body;
}

ToolResult FailureResult(std::string error) {
  return ToolResult::ErrorJson(TerminalFailure(std::move(error)), CallStatus::kError,
                               "terminal_refused");
}

// The original's workdir allowlist: letters, digits and / \ : _ - . ~ space + @ = ,
bool SafeWorkdir(std::string_view dir) {
  return std::all_of(dir.begin(), dir.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           std::string_view("/\\:_-.~ +@=,").find(c) != std::string_view::npos;
  });
}

// File tools resolve relative paths where the shell now is, when that is inside the workspace.
void FollowShellCwd(const ToolContext& ctx) {
  if (WorkspaceOf(ctx) == nullptr || EnvironmentOf(ctx) == nullptr) return;
  const std::string dir = EnvironmentOf(ctx)->cwd();
  if (dir != WorkspaceOf(ctx)->cwd()) (void)WorkspaceOf(ctx)->SetCwd(dir);
}

// checkpoints.enabled: the project as it was before a command that may destroy files. Only
// where the commands see this machine's files (not over SSH or in Docker).
void SnapshotIfDestructive(const ToolContext& ctx, const std::string& command,
                           const std::string& workdir) {
  checkpoints::CheckpointManager* checkpoints = CheckpointsOf(ctx);
  if (checkpoints == nullptr) return;
  const std::string_view kind = EnvironmentOf(ctx)->kind();
  if (kind == "ssh" || kind == "docker") return;
  std::string dir = EnvironmentOf(ctx)->cwd();
  if (!workdir.empty()) dir = workdir.front() == '/' ? workdir : dir + "/" + workdir;
  checkpoints->BeforeCommand(command, dir);
}

env::CommandOptions OptionsFor(const Json& args, const ToolContext& ctx, int64_t timeout_s) {
  env::CommandOptions options;
  std::string workdir = args.value("workdir", std::string());
  if (!workdir.empty() && workdir.front() != '/')
    workdir = EnvironmentOf(ctx)->cwd() + "/" + workdir;
  options.workdir = std::move(workdir);
  auto timeout = std::chrono::milliseconds(timeout_s * 1000);
  if (ctx.deadline != ToolContext::Deadline::max()) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        ctx.deadline - std::chrono::steady_clock::now());
    timeout = std::max(std::chrono::milliseconds(1), std::min(timeout, left));
  }
  options.timeout = timeout;
  options.cancel = ctx.cancel;
  options.max_output_bytes = kMaxOutputChars;
  return options;
}

ToolResult RunBackground(const std::string& command, const Json& args, ToolContext& ctx) {
  if (ProcessesOf(ctx) == nullptr)
    return FailureResult("background processes are not available in this session");
  const bool pty = args.value("pty", false);
  env::CommandOptions options = OptionsFor(args, ctx, kDefaultTimeoutS);
  auto child = EnvironmentOf(ctx)->Start(command, options, {.stdin_pipe = !pty, .pty = pty});
  if (!child) return FailureResult("Command execution failed: " + child.error().message());
  const pid_t pid = child->pid;
  env::WatchRequest watch;
  watch.notify_on_complete = args.value("notify_on_complete", false);
  if (auto it = args.find("watch_patterns"); it != args.end()) {
    for (const auto& p : *it) watch.patterns.push_back(p.get<std::string>());
  }
  const bool notifies = watch.notify_on_complete || !watch.patterns.empty();
  auto id = ProcessesOf(ctx)->Add(std::move(*child), command, pty, std::move(watch));
  if (!id) return FailureResult(id.error().message());
  Json body = Json::object();
  body["output"] = "Background process started";
  body["session_id"] = *id;
  body["pid"] = pid;
  body["exit_code"] = 0;
  body["error"] = nullptr;
  if (notifies) {
    body["note"] =
        "You will be told with a later tool result when it completes or prints a watched pattern; "
        "no "
        "need to poll.";
  } else {
    body["hint"] = "Check on it with process(action=\"poll\", session_id=\"" + *id +
                   "\"); wait for it with action=\"wait\". Start long jobs with "
                   "notify_on_complete=true to be told "
                   "when they finish instead of polling.";
  }
  return ToolResult::FromJson(body);
}

// A foreground command on a pseudo-terminal runs through the process table (which owns the
// terminal's master side) and is removed from it when done.
Result<env::CommandOutcome> RunOnPty(const std::string& command, const env::CommandOptions& options,
                                     ToolContext& ctx) {
  env::ProcessTable table({.max_processes = 1, .max_output_bytes = 4 * kMaxOutputChars});
  auto child =
      TALARIA_TRY(EnvironmentOf(ctx)->Start(command, options, {.stdin_pipe = false, .pty = true}));
  const std::string id = TALARIA_TRY(table.Add(std::move(child), command, true));
  env::ProcessSnapshot snap = TALARIA_TRY(table.Wait(id, options.timeout, options.cancel));
  env::CommandOutcome out;
  if (snap.running) {
    out.timed_out = !options.cancel.stop_requested();
    out.cancelled = !out.timed_out;
    snap = TALARIA_TRY(table.Kill(id));
  }
  out.exit_code = out.timed_out   ? kExitCodeTimedOut
                  : out.cancelled ? kExitCodeCancelled
                                  : snap.exit_code.value_or(-1);
  out.output = TruncateHeadTail(snap.output, options.max_output_bytes);
  out.output_total_bytes = snap.output_total_bytes;
  return out;
}

ToolResult Terminal(const Json& args, ToolContext& ctx) {
  if (EnvironmentOf(ctx) == nullptr)
    return FailureResult("no terminal environment is attached to this session");
  const std::string command = args["command"].get<std::string>();
  if (command.find_first_not_of(" \t\r\n") == std::string::npos)
    return FailureResult("command is empty");
  const bool background = args.value("background", false);
  const int64_t timeout_s = args.value("timeout", kDefaultTimeoutS);
  const std::string workdir = args.value("workdir", std::string());
  if (!workdir.empty() && !SafeWorkdir(workdir)) {
    Json body = TerminalFailure(
        "Blocked: workdir contains disallowed character(s); use letters, digits and / _ - . ~ "
        "only");
    body["status"] = "blocked";
    return ToolResult::ErrorJson(std::move(body), CallStatus::kBlocked, "workdir_blocked");
  }
  if (args.value("notify_on_complete", false) && args.contains("watch_patterns")) {
    return FailureResult(
        "notify_on_complete and watch_patterns cannot be used together; choose one");
  }
  SnapshotIfDestructive(ctx, command, workdir);
  if (background) return RunBackground(command, args, ctx);
  if (timeout_s > kMaxForegroundTimeoutS) {
    return FailureResult(
        "timeout " + std::to_string(timeout_s) + " exceeds the foreground maximum of " +
        std::to_string(kMaxForegroundTimeoutS) + " seconds; run it with background=true instead");
  }

  const env::CommandOptions options = OptionsFor(args, ctx, timeout_s);
  auto outcome = args.value("pty", false) ? RunOnPty(command, options, ctx)
                                          : EnvironmentOf(ctx)->Run(command, options);
  FollowShellCwd(ctx);
  if (!outcome) return FailureResult("Command execution failed: " + outcome.error().message());

  Json body = Json::object();
  body["output"] = CleanOutput(outcome->output);
  body["exit_code"] = outcome->exit_code;
  if (outcome->timed_out) {
    body["error"] =
        "Command timed out after " + std::to_string(options.timeout.count() / 1000) + " seconds";
    return ToolResult::ErrorJson(std::move(body), CallStatus::kError, "timeout");
  }
  if (outcome->cancelled) {
    body["error"] = "Command interrupted";
    return ToolResult::ErrorJson(std::move(body), CallStatus::kCancelled, "cancelled");
  }
  body["error"] = nullptr;
  if (auto meaning = ExitCodeMeaning(command, outcome->exit_code))
    body["exit_code_meaning"] = *meaning;
  return ToolResult::FromJson(body);
}

ToolSpec MakeTerminalSpec() {
  ToolSpec spec;
  spec.name = "terminal";
  spec.toolset = "terminal";
  spec.schema = kTerminalSchema;
  spec.handler = Terminal;
  spec.emoji = "\xF0\x9F\x92\xBB";  // "💻"
  spec.max_result_chars = 100'000;
  spec.parallel = ParallelClass::kNever;
  spec.annotations.destructive = true;
  spec.annotations.open_world = true;
  spec.command_arg = "command";
  return spec;
}

}  // namespace
}  // namespace talaria::tools

TALARIA_TOOL(Terminal, talaria::tools::MakeTerminalSpec());
