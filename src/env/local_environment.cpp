// The local machine: commands run as children of this process, in the session's shell state.
#include <sys/stat.h>

#include <filesystem>
#include <mutex>

#include "env/child_env.h"
#include "env/shell_session.h"
#include "talaria/base/subprocess.h"
#include "talaria/env/environment.h"

extern char** environ;

namespace talaria::env {
namespace {

// `dir` if it is a directory, else its nearest existing ancestor (a command may have deleted
// the directory it left the session in).
std::string ExistingDirectory(std::string dir) {
  std::error_code ec;
  std::filesystem::path p(dir);
  while (!p.empty() && !std::filesystem::is_directory(p, ec)) {
    if (p == p.parent_path()) break;
    p = p.parent_path();
  }
  return p.empty() ? std::string("/") : p.string();
}

class LocalEnvironment final : public Environment {
 public:
  LocalEnvironment(std::unique_ptr<ShellSession> shell, std::vector<std::string> base_env)
      : shell_(std::move(shell)), base_env_(std::move(base_env)) {}

  std::string_view kind() const override { return "local"; }
  std::string cwd() const override { return shell_->cwd(); }

  Result<CommandOutcome> Run(std::string_view command, const CommandOptions& options) override {
    // One command at a time: each must see the state the previous one saved.
    std::lock_guard lock(run_mu_);
    SpawnOptions spawn = SpawnFor(command, options, /*persist=*/true);
    spawn.timeout = options.timeout;
    spawn.cancel = options.cancel;
    spawn.max_output_bytes = options.max_output_bytes;
    spawn.stdin_data = options.stdin_data;
    spawn.merge_stderr = true;
    ProcessResult r = TALARIA_TRY(RunProcess(spawn));
    shell_->AdoptSavedCwd();
    CommandOutcome out;
    out.output = std::move(r.stdout_text);
    out.output_total_bytes = r.stdout_total_bytes;
    out.exit_code = r.exit_code;
    out.timed_out = r.timed_out;
    out.cancelled = r.cancelled;
    return out;
  }

  Result<StartedProcess> Start(std::string_view command, const CommandOptions& options,
                               const StartOptions& start) override {
    return StartProcess(SpawnFor(command, options, /*persist=*/false), start);
  }

 private:
  SpawnOptions SpawnFor(std::string_view command, const CommandOptions& options, bool persist) const {
    SpawnOptions spawn;
    spawn.argv = shell_->Argv(command, persist);
    spawn.env = base_env_;
    spawn.cwd = ExistingDirectory(options.workdir.empty() ? shell_->cwd() : options.workdir);
    return spawn;
  }

  std::unique_ptr<ShellSession> shell_;
  const std::vector<std::string> base_env_;
  std::mutex run_mu_;
};

}  // namespace

Result<std::shared_ptr<Environment>> OpenLocal(LocalOptions options) {
  auto shell = TALARIA_TRY(ShellSession::Create(std::move(options.state_dir), std::move(options.initial_cwd)));
  return std::shared_ptr<Environment>(
      std::make_shared<LocalEnvironment>(std::move(shell), ChildEnvironment(environ, options.env_passthrough)));
}

}  // namespace talaria::env
