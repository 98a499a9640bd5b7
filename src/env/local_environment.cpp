// Environments whose commands are children of this process, in the session's shell state.
#include <filesystem>
#include <mutex>

#include "env/child_env.h"
#include "env/child_environment.h"
#include "env/foreground_run.h"
#include "env/shell_session.h"
#include "talaria/base/subprocess.h"

extern char** environ;

namespace talaria::env {
namespace {

// `dir` if it is a directory, else its nearest existing ancestor (a command may have deleted
// the directory it left the session in).
std::string ExistingDirectory(const std::string& dir) {
  std::error_code ec;
  std::filesystem::path p(dir);
  while (!p.empty() && !std::filesystem::is_directory(p, ec)) {
    if (p == p.parent_path()) break;
    p = p.parent_path();
  }
  return p.empty() ? std::string("/") : p.string();
}

class ChildProcessEnvironment final : public Environment {
 public:
  ChildProcessEnvironment(std::string kind, std::unique_ptr<ShellSession> shell,
                          std::vector<std::string> base_env, ArgvWrapper wrapper)
      : kind_(std::move(kind)),
        shell_(std::move(shell)),
        base_env_(std::move(base_env)),
        wrapper_(std::move(wrapper)) {}

  std::string_view kind() const override { return kind_; }
  std::string cwd() const override { return shell_->cwd(); }

  Result<CommandOutcome> Run(std::string_view command, const CommandOptions& options) override {
    // One command at a time: each must see the state the previous one saved.
    std::lock_guard lock(run_mu_);
    ProcessResult r = TALARIA_TRY(RunProcess(
        ForegroundSpawn(SpawnFor(command, options, /*persist=*/true, /*pty=*/false), options)));
    shell_->AdoptSavedState();
    return OutcomeOf(std::move(r));
  }

  Result<StartedProcess> Start(std::string_view command, const CommandOptions& options,
                               const StartOptions& start) override {
    return StartProcess(SpawnFor(command, options, /*persist=*/false, start.pty), start);
  }

 private:
  SpawnOptions SpawnFor(std::string_view command, const CommandOptions& options, bool persist,
                        bool pty) const {
    SpawnOptions spawn;
    spawn.cwd = ExistingDirectory(options.workdir.empty() ? shell_->cwd() : options.workdir);
    spawn.argv = shell_->Argv(command, persist,
                              options.workdir.empty() ? StartDir::kSession : StartDir::kOneOff);
    if (wrapper_) spawn.argv = wrapper_(std::move(spawn.argv), spawn.cwd, pty);
    spawn.env = base_env_;
    return spawn;
  }

  const std::string kind_;
  std::unique_ptr<ShellSession> shell_;
  const std::vector<std::string> base_env_;
  const ArgvWrapper wrapper_;
  std::mutex run_mu_;
};

}  // namespace

Result<std::shared_ptr<Environment>> OpenChildEnvironment(
    std::string kind, LocalOptions options,
    std::function<ArgvWrapper(const std::string& state_dir)> make_wrapper) {
  std::vector<std::string> base_env = env::ChildEnvironment(environ, options.env_passthrough);
  // The shell learns what its commands inherit (the wrapper must pass the environment on
  // unchanged, as bwrap does), so they need not re-export it.
  auto shell = TALARIA_TRY(
      ShellSession::Create(std::move(options.state_dir), std::move(options.initial_cwd), base_env));
  ArgvWrapper wrapper = make_wrapper ? make_wrapper(shell->state_dir()) : nullptr;
  return std::shared_ptr<Environment>(std::make_shared<ChildProcessEnvironment>(
      std::move(kind), std::move(shell), std::move(base_env), std::move(wrapper)));
}

Result<std::shared_ptr<Environment>> OpenLocal(LocalOptions options) {
  return OpenChildEnvironment("local", std::move(options), nullptr);
}

}  // namespace talaria::env
