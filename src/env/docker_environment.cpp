// Docker: one hardened container per session (the docker CLI), commands run with docker exec
// in the session's shell state, which lives inside the container.

#include <mutex>
#include <string>
#include <vector>

#include "env/foreground_run.h"
#include "env/shell_session.h"
#include "talaria/base/random.h"
#include "talaria/base/subprocess.h"
#include "talaria/env/environment.h"

namespace talaria::env {
namespace {

constexpr std::string_view kStateDir = "/tmp/.talaria-shell";
constexpr auto kControlTimeout = std::chrono::seconds(30);

std::string StatePath(std::string_view leaf) {
  std::string path(kStateDir);
  path += '/';
  path += leaf;
  return path;
}

std::string Trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

// Runs a docker CLI command to completion (control operations, not user commands).
Result<ProcessResult> Docker(const std::string& docker, std::vector<std::string> args,
                             std::chrono::seconds timeout = kControlTimeout) {
  SpawnOptions spawn;
  spawn.argv.push_back(docker);
  spawn.argv.insert(spawn.argv.end(), std::make_move_iterator(args.begin()),
                    std::make_move_iterator(args.end()));
  spawn.timeout = timeout;
  return RunProcess(spawn);
}

// The original's hardening: capabilities dropped but the three file-ownership ones, no
// privilege gain, a pid limit, small tmpfs mounts, cpu and memory caps.
std::vector<std::string> RunArgs(const DockerOptions& o, const std::string& name) {
  std::vector<std::string> args = {"run",
                                   "-d",
                                   "--rm",
                                   "--name",
                                   name,
                                   "--cap-drop",
                                   "ALL",
                                   "--cap-add",
                                   "DAC_OVERRIDE",
                                   "--cap-add",
                                   "CHOWN",
                                   "--cap-add",
                                   "FOWNER",
                                   "--security-opt",
                                   "no-new-privileges",
                                   "--pids-limit",
                                   "256",
                                   "--tmpfs",
                                   "/tmp:rw,nosuid,size=512m",
                                   "--tmpfs",
                                   "/var/tmp:rw,noexec,nosuid,size=256m",
                                   "--tmpfs",
                                   "/run:rw,noexec,nosuid,size=64m",
                                   "--cpus",
                                   std::to_string(o.cpus),
                                   "--memory",
                                   std::to_string(o.memory_mb) + "m",
                                   "--label",
                                   "talaria.session=1"};
  for (const std::string& m : o.mounts) args.insert(args.end(), {"-v", m});
  args.insert(args.end(), {"-w", o.initial_cwd, o.image, "sleep", "infinity"});
  return args;
}

class DockerEnvironment final : public Environment {
 public:
  DockerEnvironment(DockerOptions options, std::string container)
      : options_(std::move(options)),
        container_(std::move(container)),
        cwd_(options_.initial_cwd) {}

  ~DockerEnvironment() override { (void)Docker(options_.docker, {"rm", "-f", container_}); }

  std::string_view kind() const override { return "docker"; }
  std::string cwd() const override {
    std::lock_guard lock(mu_);
    return cwd_;
  }

  Result<CommandOutcome> Run(std::string_view command, const CommandOptions& options) override {
    std::lock_guard run(run_mu_);
    SpawnOptions spawn;
    spawn.argv = ExecArgv(command, options, /*persist=*/true, /*tty=*/false);
    ProcessResult r = TALARIA_TRY(RunProcess(ForegroundSpawn(std::move(spawn), options)));
    if (r.timed_out || r.cancelled) {
      // Killing `docker exec` leaves the command running in the container: end its group there.
      std::string kill = "kill -KILL -- -\"$(cat ";
      kill += StatePath("pid");
      kill += ")\" 2>/dev/null";
      (void)Docker(options_.docker, {"exec", container_, "sh", "-c", kill});
    }
    const std::string cwd_file = StatePath("cwd");
    if (auto cwd = Docker(options_.docker, {"exec", container_, "cat", cwd_file});
        cwd && cwd->exit_code == 0 && !Trimmed(cwd->stdout_text).empty()) {
      std::lock_guard lock(mu_);
      cwd_ = Trimmed(std::move(cwd->stdout_text));
    }
    return OutcomeOf(std::move(r));
  }

  Result<StartedProcess> Start(std::string_view command, const CommandOptions& options,
                               const StartOptions& start) override {
    SpawnOptions spawn;
    spawn.argv = ExecArgv(command, options, /*persist=*/false, start.pty);
    return StartProcess(spawn, start);
  }

 private:
  std::vector<std::string> ExecArgv(std::string_view command, const CommandOptions& options,
                                    bool persist, bool tty) const {
    std::vector<std::string> argv = {options_.docker, "exec", "-i"};
    if (tty) argv.push_back("-t");
    for (const std::string& name : options_.forward_env) argv.insert(argv.end(), {"-e", name});
    argv.insert(argv.end(), {"-w", options.workdir.empty() ? cwd() : options.workdir, container_,
                             "setsid", "-w"});  // its own process group, killable by the pid file
    for (std::string& a : ShellSession::ArgvFor("bash", std::string(kStateDir), command, persist)) {
      argv.push_back(std::move(a));
    }
    return argv;
  }

  const DockerOptions options_;
  const std::string container_;
  mutable std::mutex mu_;
  std::string cwd_;  // Guarded by mu_.
  std::mutex run_mu_;
};

}  // namespace

Result<std::shared_ptr<Environment>> OpenDocker(DockerOptions options) {
  auto info =
      Docker(options.docker, {"info", "--format", "{{.ServerVersion}}"}, std::chrono::seconds(10));
  if (!info) {
    if (info.error().code() == StatusCode::kNotFound) {
      return Err(
          NotFoundError("docker: the docker CLI ('" + options.docker + "') is not installed"));
    }
    return Err(info.error());
  }
  if (info->exit_code != 0) {
    return Err(
        UnavailableError("docker: no Docker engine answers (" + Trimmed(info->stderr_text) + ")"));
  }
  const std::string name = "talaria-" + RandomHex(6);
  auto started = Docker(options.docker, RunArgs(options, name), std::chrono::seconds(300));
  if (!started) return Err(started.error());
  if (started->exit_code != 0) {
    return Err(UnavailableError("docker: could not start a container from " + options.image + ": " +
                                Trimmed(started->stderr_text)));
  }
  auto env = std::make_shared<DockerEnvironment>(options, name);
  std::string prepare = "mkdir -p ";
  prepare += kStateDir;
  prepare += " && chmod 700 ";
  prepare += kStateDir;
  auto prepared = Docker(options.docker, {"exec", name, "sh", "-c", prepare});
  if (!prepared || prepared->exit_code != 0) {
    return Err(
        UnavailableError("docker: the container " + name + " does not run commands (no sh?)"));
  }
  return std::shared_ptr<Environment>(std::move(env));
}

}  // namespace talaria::env
