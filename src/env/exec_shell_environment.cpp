#include "env/exec_shell_environment.h"

#include <atomic>
#include <mutex>
#include <string>
#include <vector>

#include "env/foreground_run.h"
#include "env/remote_shell_scripts.h"
#include "env/ssh_command.h"
#include "talaria/base/random.h"
#include "talaria/base/strings.h"
#include "talaria/base/subprocess.h"

namespace talaria::env {
namespace {

using namespace std::chrono_literals;

constexpr auto kExecControlTimeout = 30s;

// docker exec sends its argv as JSON, which turns every byte that is not UTF-8 into U+FFFD. So
// the arguments travel as ASCII, other bytes (and backslash) as \0NNN, and this first line of
// every script decodes them (bash's printf %b; an argument cannot hold NUL anyway).
constexpr std::string_view kDecodeArgs =
    R"sh(__t_a=(); for __t_x; do printf -v __t_x '%b' "$__t_x"; __t_a+=("$__t_x"); done; set -- "${__t_a[@]}"; unset __t_a __t_x
)sh";

std::string EncodeArg(std::string_view arg) {
  std::string out;
  out.reserve(arg.size());
  for (const char ch : arg) {
    const auto c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += ch;
      continue;
    }
    constexpr char kOctal[] = "01234567";
    out += "\\0";
    out += kOctal[(c >> 6) & 7];
    out += kOctal[(c >> 3) & 7];
    out += kOctal[c & 7];
  }
  return out;
}

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

class ExecShellEnvironment final : public Environment {
 public:
  explicit ExecShellEnvironment(ExecClient client)
      : client_(std::move(client)), marker_("__TALARIA_CWD_" + RandomHex(8) + "__") {}

  ~ExecShellEnvironment() override {
    if (client_.teardown) client_.teardown();
  }

  ExecShellEnvironment(const ExecShellEnvironment&) = delete;
  ExecShellEnvironment& operator=(const ExecShellEnvironment&) = delete;

  Status Prepare(const std::string& initial_cwd) {
    SpawnOptions spawn;
    spawn.argv = Argv(kInitScript, {initial_cwd}, ExecTty::kNo);
    spawn.timeout = kExecControlTimeout;
    ProcessResult r = TALARIA_TRY(RunProcess(spawn));
    if (r.timed_out) return UnavailableError(client_.what + " does not answer");
    const std::vector<std::string_view> lines = SplitLines(r.stdout_text);
    const std::string err(Trim(r.stderr_text));
    if (r.exit_code == 0 && lines.size() == 3 && lines[0] == "talaria-ssh-ready" &&
        !lines[1].empty() && !lines[2].empty()) {
      state_dir_ = lines[1];
      std::lock_guard lock(mu_);
      cwd_ = lines[2];
      return Status::Ok();
    }
    if (r.exit_code == kExitNoInitialDir) {
      return NotFoundError(client_.what + ": working directory '" + initial_cwd +
                           "' does not exist");
    }
    if (r.exit_code == 126 || r.exit_code == 127) {
      return UnavailableError(client_.what + " runs no bash: " + err);
    }
    return UnavailableError(client_.what + " does not run commands (exit " +
                            std::to_string(r.exit_code) +
                            "): " + (err.empty() ? std::string("no message") : err));
  }

  std::string_view kind() const override { return client_.kind; }

  std::string cwd() const override {
    std::lock_guard lock(mu_);
    return cwd_;
  }

  Result<CommandOutcome> Run(std::string_view command, const CommandOptions& options) override {
    // One command at a time: each must see the state the previous one saved.
    std::lock_guard lock(run_mu_);
    const std::string id = "r" + std::to_string(++jobs_);
    SpawnOptions spawn;
    spawn.argv = Argv(kRunScript,
                      {state_dir_, id, marker_, StartDirectory(options), std::string(command),
                       options.workdir.empty() ? "0" : "1"},
                      ExecTty::kNo);
    spawn = ForegroundSpawn(std::move(spawn), options);
    spawn.merge_stderr = false;  // the script merges; the client's stderr carries the cwd report
    ProcessResult r = TALARIA_TRY(RunProcess(spawn));
    const std::string client_stderr = std::move(r.stderr_text);
    CommandOutcome out = OutcomeOf(std::move(r));
    if (out.timed_out || out.cancelled) {
      KillRun(id);
      return out;
    }
    CwdReport report = ExtractCwdReport(client_stderr, marker_);
    if (!report.found) {
      // The client failed (the container is gone) or the script was killed: say what it said.
      out.output += report.rest;
      return out;
    }
    if (!report.cwd.empty()) {
      std::lock_guard cwd_lock(mu_);
      cwd_ = std::move(report.cwd);
    }
    return out;
  }

  Result<StartedProcess> Start(std::string_view command, const CommandOptions& options,
                               const StartOptions& start) override {
    const std::string id = "b" + std::to_string(++jobs_);
    SpawnOptions spawn;
    spawn.argv = Argv(kStartScript, {state_dir_, id, StartDirectory(options), std::string(command)},
                      start.pty ? ExecTty::kYes : ExecTty::kNo);
    return StartProcess(spawn, start);
  }

 private:
  // The client running bash on `script` with `args` on the far side.
  std::vector<std::string> Argv(std::string_view script, std::vector<std::string> args,
                                ExecTty tty) const {
    std::vector<std::string> argv = client_.argv_prefix(tty);
    argv.insert(argv.end(), {"bash", "--noprofile", "--norc", "-c",
                             std::string(kDecodeArgs) + std::string(script), "talaria"});
    for (const std::string& arg : args) argv.push_back(EncodeArg(arg));
    return argv;
  }

  std::string StartDirectory(const CommandOptions& options) const {
    return options.workdir.empty() ? cwd() : options.workdir;
  }

  // The local client is gone, which ends the exec's streams but not the command.
  void KillRun(const std::string& id) {
    SpawnOptions kill;
    kill.argv = Argv(kKillScript, {state_dir_, id}, ExecTty::kNo);
    kill.timeout = kExecControlTimeout;
    (void)RunProcess(kill);
  }

  const ExecClient client_;
  const std::string marker_;
  std::string state_dir_;  // set once by Prepare
  std::atomic<uint64_t> jobs_{0};
  std::mutex run_mu_;
  mutable std::mutex mu_;
  std::string cwd_;  // Guarded by mu_.
};

}  // namespace

Result<std::shared_ptr<Environment>> OpenExecShell(ExecClient client, std::string initial_cwd) {
  // Owned from here: an error below runs the teardown.
  auto env = std::make_shared<ExecShellEnvironment>(std::move(client));
  TALARIA_RETURN_IF_ERROR(env->Prepare(initial_cwd));
  return std::shared_ptr<Environment>(std::move(env));
}

}  // namespace talaria::env
