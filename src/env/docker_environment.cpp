// Docker: one hardened container per session (the docker CLI), kept running (`sleep infinity`)
// for the session; every command is one `docker exec` of the session's bash wrapper
// (exec_shell_environment.h: docker exec has an ssh channel's limits), removed with the session.
#include <unistd.h>

#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "env/docker_reaper.h"
#include "env/exec_shell_environment.h"
#include "talaria/base/file_io.h"
#include "talaria/base/log.h"
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

// Who owns a container: "<hostname>/<pid>:<start time in clock ticks>" of the talaria process
// that made it (the start time tells a reused pid apart).
std::string OwnerLabelOf(pid_t pid) {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) return "";
  auto stat = ReadWholeFile("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return "";
  const size_t paren = stat->rfind(')');  // the command name may hold spaces and parentheses
  if (paren == std::string::npos) return "";
  std::istringstream fields(stat->substr(paren + 1));
  std::string field;
  for (int i = 3; i <= 22 && fields >> field; ++i) {
    if (i == 22) return std::string(host) + "/" + std::to_string(pid) + ":" + field;
  }
  return "";
}

// Whether `owner` (an OwnerLabelOf value) names a process of this machine that no longer runs.
bool OwnerIsGone(std::string_view owner) {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) return false;
  const size_t slash = owner.find('/');
  const size_t colon = owner.rfind(':');
  if (slash == std::string_view::npos || colon == std::string_view::npos || colon < slash ||
      owner.substr(0, slash) != host) {
    return false;  // another machine's, or not ours to judge
  }
  const std::string_view pid_text = owner.substr(slash + 1, colon - slash - 1);
  if (pid_text.empty() || pid_text.size() > 9 ||
      pid_text.find_first_not_of("0123456789") != std::string_view::npos) {
    return false;
  }
  return OwnerLabelOf(static_cast<pid_t>(std::stoi(std::string(pid_text)))) != owner;
}

}  // namespace

Status ReapOrphanedContainers(const DockerOptions& options) {
  ProcessResult listed =
      TALARIA_TRY(Docker(options, {"ps", "-a", "--filter", "label=talaria.session=1", "--format",
                                   "{{.ID}}\t{{.Label \"talaria.owner\"}}"}));
  if (listed.exit_code != 0) {
    return UnavailableError("docker ps: " + std::string(Trim(listed.stderr_text)));
  }
  std::vector<std::string> orphans = {"rm", "-f"};
  std::istringstream lines(listed.stdout_text);
  std::string line;
  while (std::getline(lines, line)) {
    const size_t tab = line.find('\t');
    if (tab == std::string::npos || !OwnerIsGone(std::string_view(line).substr(tab + 1))) continue;
    orphans.push_back(line.substr(0, tab));
  }
  if (orphans.size() == 2) return Status::Ok();
  ProcessResult removed = TALARIA_TRY(Docker(options, std::move(orphans)));
  if (removed.exit_code != 0) {
    return UnavailableError("docker rm: " + std::string(Trim(removed.stderr_text)));
  }
  return Status::Ok();
}

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
  // The containers a killed talaria left behind on this engine go first (once per process
  // and engine), so none outlives its owner past the next session.
  {
    static std::mutex mu;
    static std::set<std::string> reaped;  // Guarded by mu.
    std::lock_guard lock(mu);
    if (reaped.insert(options.docker + "\n" + options.host).second) {
      if (Status s = ReapOrphanedContainers(options); !s.ok()) {
        LogWarn("docker: orphaned containers not reaped: " + s.message());
      }
    }
  }
  options.labels.push_back("talaria.owner=" + OwnerLabelOf(::getpid()));
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
    if (tty == ExecTty::kYes) argv.emplace_back("-t");
    for (const std::string& env : options.forward_env) argv.insert(argv.end(), {"-e", env});
    argv.push_back(name);
    return argv;
  };
  // Removing the container ends everything the session left running in it.
  client.teardown = [options, name] { (void)Docker(options, {"rm", "-f", name}); };
  return OpenExecShell(std::move(client), initial_cwd);
}

}  // namespace talaria::env
