// Docker: one hardened container per session (the docker CLI), kept running (`sleep infinity`)
// for the session; every command is one `docker exec` of the session's bash wrapper
// (exec_shell_environment.h: docker exec has an ssh channel's limits), removed with the session.
#include <string>
#include <vector>

#include "env/exec_shell_environment.h"
#include "talaria/base/random.h"
#include "talaria/base/strings.h"
#include "talaria/base/subprocess.h"
#include "talaria/env/environment.h"

namespace talaria::env {
namespace {

using namespace std::chrono_literals;

constexpr auto kControlTimeout = 30s;

// The docker CLI's argv up to the subcommand: the program and the engine's address.
std::vector<std::string> CliArgv(const DockerOptions& o) {
  std::vector<std::string> argv = {o.docker};
  if (!o.host.empty()) argv.insert(argv.end(), {"-H", o.host});
  return argv;
}

// Runs a docker CLI command to completion (control operations, not user commands).
Result<ProcessResult> Docker(const DockerOptions& o, std::vector<std::string> args,
                             std::chrono::milliseconds timeout = kControlTimeout) {
  SpawnOptions spawn;
  spawn.argv = CliArgv(o);
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
  for (const std::string& label : o.labels) args.insert(args.end(), {"--label", label});
  if (!o.network.empty()) args.insert(args.end(), {"--network", o.network});
  if (!o.pull.empty()) args.insert(args.end(), {"--pull", o.pull});
  for (const std::string& m : o.mounts) args.insert(args.end(), {"-v", m});
  // Docker creates the working directory when the image lacks it, as the session expects.
  if (!o.initial_cwd.empty()) args.insert(args.end(), {"-w", o.initial_cwd});
  args.insert(args.end(), {o.image, "sleep", "infinity"});
  return args;
}

}  // namespace

Result<std::shared_ptr<Environment>> OpenDocker(DockerOptions options) {
  auto info = Docker(options, {"info", "--format", "{{.ServerVersion}}"}, 10s);
  if (!info) {
    if (info.error().code() == StatusCode::kNotFound) {
      return Err(
          NotFoundError("docker: the docker CLI ('" + options.docker + "') is not installed"));
    }
    return Err(info.error());
  }
  if (info->exit_code != 0) {
    return Err(UnavailableError("docker: no Docker engine answers (" +
                                std::string(Trim(info->stderr_text)) + ")"));
  }
  const std::string name = "talaria-" + RandomHex(6);
  auto started = Docker(options, RunArgs(options, name), 300s);
  if (!started) return Err(started.error());
  if (started->exit_code != 0) {
    return Err(UnavailableError("docker: could not start a container from " + options.image + ": " +
                                std::string(Trim(started->stderr_text))));
  }
  ExecClient client;
  client.kind = "docker";
  client.what = "docker: the container " + name + " (" + options.image + ")";
  std::string initial_cwd = options.initial_cwd;
  client.argv_prefix = [options, name](ExecTty tty) {
    std::vector<std::string> argv = CliArgv(options);
    argv.insert(argv.end(), {"exec", "-i"});
    if (tty == ExecTty::kYes) argv.push_back("-t");
    for (const std::string& env : options.forward_env) argv.insert(argv.end(), {"-e", env});
    argv.push_back(name);
    return argv;
  };
  // Removing the container ends everything the session left running in it.
  client.teardown = [options, name] { (void)Docker(options, {"rm", "-f", name}); };
  return OpenExecShell(std::move(client), std::move(initial_cwd));
}

}  // namespace talaria::env
