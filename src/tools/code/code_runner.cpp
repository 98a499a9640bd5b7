#include "tools/code/code_runner.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>

#include <nlohmann/json.hpp>

#include "talaria/audit/audit_log.h"
#include "talaria/base/file_io.h"
#include "talaria/base/json.h"
#include "talaria/base/log.h"
#include "talaria/base/sha256.h"
#include "talaria/base/subprocess.h"
#include "talaria/base/unique_fd.h"
#include "talaria/core/budget.h"
#include "talaria/tools/session_services.h"
#include "tools/code/interpreter.h"
#include "tools/code/pids_cgroup.h"
#include "tools/code/rpc_server.h"
#include "tools/code/script_call_screen.h"
#include "tools/code/script_run.h"
#include "tools/code/stub_module.h"
#include "tools/terminal/terminal_output.h"

namespace talaria::tools::code {
namespace {

using Clock = std::chrono::steady_clock;

// After SIGTERM on timeout or cancel: python dies at once unless the script traps the signal.
constexpr std::chrono::milliseconds kKillGrace{500};
// The RPC reader outlives the interpreter's deadline by this much (the kill and the reaping).
constexpr std::chrono::seconds kServerSlack{5};

// The private working directory, removed with everything in it when the call ends.
class WorkDir {
 public:
  static Result<WorkDir> Create(const std::string& parent) {
    std::string tmpl = parent;
    if (tmpl.empty()) {
      const char* tmp = std::getenv("TMPDIR");
      tmpl = tmp != nullptr && *tmp == '/' ? tmp : "/tmp";
    }
    tmpl += "/talaria-exec-XXXXXX";
    if (::mkdtemp(tmpl.data()) == nullptr) {
      return Err(InternalError("execute_code: cannot create a working directory under " + parent +
                               ": " + std::strerror(errno)));
    }
    return WorkDir(std::move(tmpl));
  }
  WorkDir(WorkDir&& other) noexcept : path_(std::exchange(other.path_, {})) {}
  WorkDir& operator=(WorkDir&&) = delete;
  ~WorkDir() {
    if (path_.empty()) return;
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  explicit WorkDir(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

Status WriteNewFile(const std::string& path, std::string_view content) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd)
    return InternalError("execute_code: cannot create " + path + ": " + std::strerror(errno));
  return WriteAll(fd.get(), content).WithContext("execute_code: writing " + path);
}

double Seconds(Clock::duration d) {
  return std::round(std::chrono::duration<double>(d).count() * 100.0) / 100.0;
}

ToolResult ErrorResult(std::string message, Clock::time_point started, int calls = 0) {
  Json body = Json::object();
  body["status"] = "error";
  body["error"] = std::move(message);
  body["tool_calls_made"] = calls;
  body["duration_seconds"] = Seconds(Clock::now() - started);
  return ToolResult::ErrorJson(std::move(body), CallStatus::kError, "execute_code_error");
}

// The original's hints for the commonest script mistakes.
std::optional<std::string> FailureHint(std::string_view stderr_text,
                                       const std::vector<std::string>& allowed) {
  for (const std::string& tool : allowed) {
    if (stderr_text.find("NameError: name '" + tool + "' is not defined") !=
        std::string_view::npos) {
      return "Import the tools first: from hermes_tools import " + tool;
    }
  }
  if (stderr_text.find("ModuleNotFoundError") != std::string_view::npos) {
    return "Only the Python standard library and hermes_tools are available; third-party modules "
           "are not installed "
           "in the sandbox.";
  }
  if (stderr_text.find("TypeError: string indices must be integers") != std::string_view::npos) {
    return "Tool functions return dicts parsed from the tool's JSON result, not strings.";
  }
  return std::nullopt;
}

// Wall-clock budget left before `deadline`, at least 1 ms.
std::chrono::milliseconds Left(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return std::max(left, std::chrono::milliseconds(1));
}

}  // namespace

CodeRunner::CodeRunner(const Dispatcher& dispatcher, CodeExecutionOptions options,
                       std::vector<std::string> allowed, std::string stub_source,
                       safety::GuardOptions guard)
    : dispatcher_(dispatcher),
      options_(std::move(options)),
      allowed_(std::move(allowed)),
      stub_source_(std::move(stub_source)),
      guard_(std::move(guard)) {}

namespace {

// A script is a command run too: one audit line before it starts, with its hash and its start
// (the whole code can be long; its hash ties the line to what ran).
void AuditScript(const ToolContext& ctx, const std::string& code, bool remote) {
  if (AuditLogOf(ctx) == nullptr) return;
  Json line = Json::object();
  line["time"] = safety::AuditTimestamp(std::chrono::system_clock::now());
  line["event"] = "execute_code";
  line["session"] = ctx.session_id;
  line["where"] = remote ? "remote" : "local";
  line["bytes"] = code.size();
  line["sha256"] = Sha256Hex(code);
  line["code_start"] = code.substr(0, 200);
  if (Status s = AuditLogOf(ctx)->AppendLine(DumpJson(line) + "\n"); !s.ok()) {
    LogWarn("execute_code not audited: " + s.message());
  }
}

}  // namespace

ToolResult CodeRunner::Run(const Json& args, ToolContext& ctx) const {
  const auto started = Clock::now();
  const std::string code = args.value("code", std::string());
  if (code.find_first_not_of(" \t\r\n") == std::string::npos)
    return ErrorResult("No code provided.", started);
  // A session whose terminal is a remote machine runs its scripts there too, over the exec
  // channel; its tools still run here, through the dispatcher.
  const bool remote = EnvironmentOf(ctx) && EnvironmentOf(ctx)->RunsScriptsRemotely();
  AuditScript(ctx, code, remote);

  // The interpreter's end (locally passed as fd 3; remotely the relay's end of the channel) and
  // ours. Both close-on-exec, so no other child of this process ever holds either.
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
    return ErrorResult(std::string("execute_code: socketpair: ") + std::strerror(errno), started);
  }
  UniqueFd host_end(pair[0]);
  UniqueFd script_end(pair[1]);

  const Clock::time_point deadline = std::min(
      ctx.deadline, started + std::chrono::duration_cast<Clock::duration>(options_.timeout));
  // Script calls stop when the caller cancels or when this execution ends (whichever first).
  std::stop_source calls_stop;
  std::stop_callback forward(ctx.cancel, [&calls_stop] { calls_stop.request_stop(); });
  ScreenOptions screen_options;
  screen_options.allowed = allowed_;
  screen_options.max_tool_calls = options_.max_tool_calls;
  screen_options.approvals = options_.approvals;
  screen_options.guard = guard_;
  ScriptCallScreen gate(dispatcher_, ctx, std::move(screen_options), calls_stop.get_token(),
                        deadline);
  auto server = RpcServer::Start(
      std::move(host_end),
      [&gate](const std::string& tool, Json call_args) {
        return gate.Call(tool, std::move(call_args));
      },
      deadline + kServerSlack);
  if (!server) return ErrorResult(server.error().message(), started);

  Result<ScriptRun> ran = remote ? RunRemote(code, std::move(script_end), **server, deadline, ctx)
                                 : RunLocal(code, std::move(script_end), **server, deadline, ctx);
  calls_stop.request_stop();
  (*server)->Stop();
  const RpcServerStats rpc = (*server)->stats();
  const int calls = gate.calls_made();
  if (!ran) return ErrorResult(ran.error().message(), started, calls);
  return Conclude(*ran, rpc, calls, started, deadline, ctx);
}

Result<ScriptRun> CodeRunner::RunLocal(const std::string& code, UniqueFd script_end,
                                       RpcServer& server, Clock::time_point deadline,
                                       ToolContext& ctx) const {
  auto work = WorkDir::Create(options_.temp_dir);
  if (!work) return Err(work.error());
  const std::string& dir = work->path();
  const std::string script = dir + "/script.py";
  const std::string hermes_module = HermesToolsModule();
  const std::pair<std::string, std::string_view> files[] = {
      {script, code},
      {dir + "/talaria_tools.py", stub_source_},
      {dir + "/hermes_tools.py", hermes_module}};
  for (const auto& [name, content] : files) TALARIA_RETURN_IF_ERROR(WriteNewFile(name, content));
  // The cgroup outlives the interpreter: its destructor kills whatever the script left in it.
  std::optional<PidsCgroup> cgroup;
  ProcessLimit limit;
  if (options_.pids_cgroup == "off") {
    limit.no_cgroup_reason = "code_execution.pids_cgroup is off";
  } else if (auto made = PidsCgroup::Create(options_.pids_cgroup, options_.max_processes)) {
    cgroup.emplace(std::move(*made));
    limit.cgroup_procs = cgroup->procs_path();
  } else {
    limit.no_cgroup_reason = made.error().message();
  }
  InterpreterPlan plan = TALARIA_TRY(PlanInterpreter(options_, dir, script, limit));

  ScriptRun run;
  SpawnOptions spawn;
  spawn.argv = std::move(plan.argv);
  spawn.env = std::move(plan.env);
  spawn.cwd = dir;
  spawn.stdin_data = std::move(plan.stdin_data);
  spawn.timeout = Left(deadline);
  spawn.cancel = ctx.cancel;
  spawn.max_output_bytes = options_.max_stdout_bytes;
  spawn.max_stderr_bytes = options_.max_stderr_bytes;
  spawn.kill_grace = kKillGrace;
  spawn.inherit_fd = script_end.get();
  spawn.on_spawn = [&](pid_t pid) {
    server.ExpectChild(pid);
    script_end.reset();  // the child has its copy; ours would keep the socket alive
  };
  spawn.on_stdout = [&](std::string_view chunk) {
    if (run.stdout_spill.size() < options_.max_spill_bytes) {
      run.stdout_spill.append(chunk.substr(0, options_.max_spill_bytes - run.stdout_spill.size()));
    }
  };
  auto done = RunProcess(spawn);
  if (!done) return Err(done.error().WithContext("execute_code: could not run the interpreter"));
  run.stdout_text = std::move(done->stdout_text);
  run.stdout_total_bytes = done->stdout_total_bytes;
  run.stderr_text = std::move(done->stderr_text);
  run.exit_code = done->exit_code;
  run.timed_out = done->timed_out;
  run.cancelled = done->cancelled;
  run.isolation = std::string(IsolationName(plan.isolation));
  run.isolation_note = std::move(plan.note);
  return run;
}

Result<ScriptRun> CodeRunner::RunRemote(const std::string& code, UniqueFd script_end,
                                        RpcServer& server, Clock::time_point deadline,
                                        ToolContext& ctx) const {
  // The frames reach the server written by this process (the relay loop), not by the remote
  // interpreter: the exec channel of the session's own connection is the boundary here.
  server.ExpectChild(::getpid());
  RemoteScript script;
  script.files = {{"script.py", code},
                  {"talaria_tools.py", stub_source_},
                  {"hermes_tools.py", HermesToolsModule()}};
  script.program = RemoteInterpreterProgram(options_);
  script.python = options_.remote_python;
  script.rpc_fd = script_end.get();
  script.deadline = deadline;
  script.cancel = ctx.cancel;
  script.max_stdout_bytes = options_.max_stdout_bytes;
  script.max_stderr_bytes = options_.max_stderr_bytes;
  script.max_spill_bytes = options_.max_spill_bytes;
  ScriptRun run = TALARIA_TRY(RunRemoteScript(*EnvironmentOf(ctx), script));
  run.isolation = "remote:" + std::string(EnvironmentOf(ctx)->kind());
  return run;
}

ToolResult CodeRunner::Conclude(const ScriptRun& ran, const RpcServerStats& rpc, int calls,
                                Clock::time_point started, Clock::time_point deadline,
                                ToolContext& ctx) const {
  Json body = Json::object();
  std::string status = "success";
  if (ran.timed_out) {
    status = "timeout";
  } else if (ran.cancelled) {
    status = "interrupted";
  } else if (ran.exit_code != 0) {
    status = "error";
  }
  body["status"] = status;
  std::string output = CleanOutput(ran.stdout_text);
  if (ran.timed_out) {
    const auto limit = std::chrono::duration_cast<std::chrono::seconds>(deadline - started).count();
    output += "\n\xE2\x8F\xB0 Script timed out after " + std::to_string(limit) +
              "s and was killed.";  // "⏰"
  } else if (ran.cancelled) {
    output += "\n[execution interrupted: the script was killed]";
  }
  body["output"] = std::move(output);
  if (ran.exit_code != 0 && !ran.timed_out && !ran.cancelled) body["exit_code"] = ran.exit_code;
  body["tool_calls_made"] = calls;
  body["duration_seconds"] = Seconds(Clock::now() - started);
  body["isolation"] = ran.isolation;
  if (!ran.isolation_note.empty()) body["isolation_note"] = ran.isolation_note;
  const bool truncated = ran.stdout_total_bytes > options_.max_stdout_bytes;
  const size_t captured = std::min(ran.stdout_total_bytes, options_.max_stdout_bytes);
  body["stdout_truncated"] = truncated;
  body["stdout_bytes_captured"] = captured;
  body["stdout_bytes_total"] = ran.stdout_total_bytes;
  body["stdout_bytes_omitted"] = ran.stdout_total_bytes - captured;
  if (truncated) {
    std::string spill_name = ctx.call_id.empty() ? std::string("execute_code") : ctx.call_id;
    spill_name += "-stdout";
    if (auto path = WriteSpillFile(dispatcher_.options().budget, spill_name,
                                   CleanOutput(ran.stdout_spill))) {
      body["stdout_spill_path"] = *path;
    }
  }
  const std::string stderr_text = CleanOutput(ran.stderr_text);
  if (!stderr_text.empty() && status != "error") body["stderr"] = stderr_text;
  if (rpc.rejected_frames > 0) {
    std::string warning = std::to_string(rpc.rejected_frames);
    warning += " write(s) to the RPC socket were refused: ";
    warning += rpc.rejection;
    body["warning"] = std::move(warning);
    body["rpc_rejected"] = rpc.rejected_frames;
  }
  if (status == "error") {
    std::string error = stderr_text;
    if (error.empty()) {
      error = "Script exited with code ";
      error += std::to_string(ran.exit_code);
    }
    body["error"] = std::move(error);
    if (auto hint = FailureHint(ran.stderr_text, allowed_)) body["hint"] = *hint;
  }
  ToolResult result;
  result.text = DumpJson(body);
  if (status == "success") return result;
  result.status = status == "timeout"       ? CallStatus::kTimedOut
                  : status == "interrupted" ? CallStatus::kCancelled
                                            : CallStatus::kError;
  result.error_type = status == "timeout"       ? "timeout"
                      : status == "interrupted" ? "cancelled"
                                                : "script_error";
  return result;
}

}  // namespace talaria::tools::code
