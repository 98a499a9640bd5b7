#include "env/remote_script_session.h"

#include "env/foreground_run.h"
#include "env/remote_shell_scripts.h"
#include "env/ssh_command.h"
#include "talaria/base/random.h"

namespace talaria::env {
namespace {

std::vector<std::string_view> SplitLines(std::string_view text) {
  std::vector<std::string_view> lines;
  for (size_t start = 0; start < text.size();) {
    const size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) break;
    lines.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  return lines;
}

}  // namespace

RemoteScriptSession::RemoteScriptSession(ScriptArgv argv, std::chrono::milliseconds control_timeout)
    : argv_(std::move(argv)),
      control_timeout_(control_timeout),
      marker_("__TALARIA_CWD_" + RandomHex(8) + "__") {}

Result<InitAnswer> RemoteScriptSession::Init(const std::string& initial_cwd,
                                             std::chrono::milliseconds timeout) {
  SpawnOptions spawn;
  spawn.argv = Argv(kInitScript, {initial_cwd});
  spawn.timeout = timeout;
  InitAnswer answer;
  answer.result = TALARIA_TRY(RunProcess(spawn));
  const ProcessResult& r = answer.result;
  const std::vector<std::string_view> lines = SplitLines(r.stdout_text);
  if (!r.timed_out && r.exit_code == 0 && lines.size() == 3 && lines[0] == "talaria-ssh-ready" &&
      !lines[1].empty() && !lines[2].empty()) {
    state_dir_ = std::string(lines[1]);
    std::lock_guard lock(mu_);
    cwd_ = std::string(lines[2]);
    answer.ready = true;
  }
  return answer;
}

std::string RemoteScriptSession::cwd() const {
  std::lock_guard lock(mu_);
  return cwd_;
}

std::string RemoteScriptSession::StartDirectory(const CommandOptions& options) const {
  return options.workdir.empty() ? cwd() : options.workdir;
}

Result<CommandOutcome> RemoteScriptSession::Run(
    std::string_view command, const CommandOptions& options,
    const std::function<Result<CommandOutcome>(int, const std::string&, CommandOutcome)>&
        no_report) {
  // One command at a time: each must see the state the previous one saved.
  std::lock_guard lock(run_mu_);
  const std::string id = "r" + std::to_string(++jobs_);
  SpawnOptions spawn;
  spawn.argv = Argv(kRunScript, {state_dir_, id, marker_, StartDirectory(options),
                                 std::string(command), options.workdir.empty() ? "0" : "1"});
  spawn = ForegroundSpawn(std::move(spawn), options);
  spawn.merge_stderr = false;  // the script merges; the client's stderr carries the cwd report
  ProcessResult r = TALARIA_TRY(RunProcess(spawn));
  const pid_t client_pid = r.pid;
  const int client_exit = r.exit_code;
  std::string client_stderr = std::move(r.stderr_text);
  CommandOutcome out = OutcomeOf(std::move(r));
  if (out.timed_out || out.cancelled) {
    // The local client is gone, which ends the call's streams but not the command.
    if (client_pid > 0) KillRun(id);
    return out;
  }
  CwdReport report = ExtractCwdReport(client_stderr, marker_);
  if (!report.found) {
    if (no_report) return no_report(client_exit, report.rest, std::move(out));
    out.output += report.rest;  // the far side ended before reporting: show what it said
    return out;
  }
  if (!report.cwd.empty()) {
    std::lock_guard cwd_lock(mu_);
    cwd_ = std::move(report.cwd);
  }
  return out;
}

Result<StartedProcess> RemoteScriptSession::Start(std::string_view command,
                                                  const CommandOptions& options,
                                                  const StartOptions& start) {
  const std::string id = "b" + std::to_string(++jobs_);
  SpawnOptions spawn;
  spawn.argv = Argv(kStartScript, {state_dir_, id, StartDirectory(options), std::string(command)},
                    start.pty);
  return StartProcess(spawn, start);
}

void RemoteScriptSession::KillRun(const std::string& id) {
  SpawnOptions kill;
  kill.argv = Argv(kKillScript, {state_dir_, id});
  kill.timeout = control_timeout_;
  (void)RunProcess(kill);
}

void RemoteScriptSession::Cleanup() {
  if (state_dir_.empty()) return;
  SpawnOptions cleanup;
  cleanup.argv = Argv(kCleanupScript, {state_dir_});
  cleanup.timeout = control_timeout_;
  (void)RunProcess(cleanup);
}

}  // namespace talaria::env
