// talaria_docker_bench: per-command cost of the Docker environment, against a throwaway dockerd
// on a private socket (tests/support/dockerd_server.h; needs root). A command is one
// `docker exec` running the session's bash wrapper; the comparison is `docker exec` of `true`
// alone in the same running container (issue 24's goal: at most 1.2x).
//
//   METRIC docker_open_ms          OpenDocker: `docker run` of the container and the session state
//   METRIC docker_run_true_ms      Environment::Run("true"): median after a warmup
//   METRIC docker_exec_true_ms     `docker exec <container> true`, for comparison
//   METRIC docker_run_over_exec    the ratio of the two medians
//   METRIC docker_leaked_after_kill containers left of a talaria process that opened sessions
//                                   and was killed with SIGKILL, after a restart reaped (goal 0)
//
//   talaria_docker_bench [--quick]
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "env/docker_reaper.h"
#include "env_bench_util.h"
#include "support/dockerd_server.h"
#include "talaria/base/random.h"
#include "talaria/base/spawn.h"
#include "talaria/base/subprocess.h"
#include "talaria/env/environment.h"

namespace {

using Clock = std::chrono::steady_clock;
using talaria_bench::MsSince;
using talaria_bench::PrintMetric;

// The killed talaria: `--hold <n> <engine> <label>` opens n sessions (containers labelled
// `label`), says "ready" on stdout and waits to be killed.
int HoldSessions(int n, const std::string& host, const std::string& label) {
  talaria::env::DockerOptions options;
  options.image = talaria::test_support::DockerdServer::kImage;
  options.host = host;
  options.network = "none";
  options.pull = "never";
  options.labels = {label};
  std::vector<std::shared_ptr<talaria::env::Environment>> envs;
  for (int i = 0; i < n; ++i) {
    auto env = talaria::env::OpenDocker(options);
    if (!env) {
      std::fprintf(stderr, "hold: %s\n", env.error().ToString().c_str());
      return 1;
    }
    envs.push_back(*env);
  }
  std::printf("ready\n");
  std::fflush(stdout);
  ::pause();
  return 0;
}

// Containers carrying `label` (running or not).
int CountLabelled(const std::string& host, const std::string& label) {
  talaria::SpawnOptions ps;
  ps.argv = {"docker", "-H", host, "ps", "-aq", "--filter", "label=" + label};
  auto r = talaria::RunProcess(ps);
  if (!r || r->exit_code != 0) return -1;
  int count = 0;
  for (char c : r->stdout_text) count += c == '\n' ? 1 : 0;
  return count;
}

// Starts this program as a talaria holding `n` sessions, SIGKILLs it once they are open, then
// reaps as a restarted talaria does; returns the containers of the killed one left (-1: the
// run failed).
int LeakedAfterKill(int n, const std::string& host) {
  const std::string label = "talaria.bench.kill=" + talaria::RandomHex(6);
  talaria::SpawnOptions hold;
  hold.argv = {"/proc/self/exe", "--hold", std::to_string(n), host, label};
  auto child = talaria::StartProcess(hold, {});
  if (!child) return -1;
  std::string out;
  const auto deadline = Clock::now() + std::chrono::seconds(120);
  while (out.find("ready") == std::string::npos && Clock::now() < deadline) {
    char buf[256];
    const ssize_t got = ::read(child->output.get(), buf, sizeof buf);
    if (got > 0) out.append(buf, static_cast<size_t>(got));
    if (got == 0) break;
    if (got < 0) ::usleep(20'000);
  }
  ::kill(child->pid, SIGKILL);
  siginfo_t info{};
  ::waitid(P_PID, static_cast<id_t>(child->pid), &info, WEXITED);
  if (out.find("ready") == std::string::npos) {
    std::fprintf(stderr, "the holding process did not open its sessions: %s\n", out.c_str());
    return -1;
  }
  const int before = CountLabelled(host, label);
  std::printf("# killed a talaria holding %d containers\n", before);
  talaria::env::DockerOptions options;
  options.host = host;
  if (!talaria::env::ReapOrphanedContainers(options).ok()) return -1;
  return CountLabelled(host, label);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 5 && std::strcmp(argv[1], "--hold") == 0) {
    return HoldSessions(std::atoi(argv[2]), argv[3], argv[4]);
  }
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const int n = quick ? 20 : 200;
  const int warmup = quick ? 3 : 20;

  if (const std::string reason = talaria::test_support::DockerdUnavailableReason();
      !reason.empty()) {
    std::fprintf(stderr, "# %s: docker_run_true_ms not measured\n", reason.c_str());
    return 0;
  }
  auto dockerd = talaria::test_support::DockerdServer::Start();
  if (!dockerd) {
    std::fprintf(stderr, "cannot start dockerd: %s\n", dockerd.error().ToString().c_str());
    return 1;
  }

  // The session's container carries a label of this run, so the bare exec finds the same one.
  const std::string label = "talaria.bench=" + talaria::RandomHex(6);
  talaria::env::DockerOptions options = (*dockerd)->ClientOptions();
  options.labels = {label};
  const auto t0 = Clock::now();
  auto env = talaria::env::OpenDocker(options);
  if (!env) {
    std::fprintf(stderr, "cannot open the docker environment: %s\n",
                 env.error().ToString().c_str());
    return 1;
  }
  PrintMetric("docker_open_ms", MsSince(t0), "ms");

  talaria::SpawnOptions find;
  find.argv = {"docker", "-H", (*dockerd)->host(), "ps", "-q", "--filter", "label=" + label};
  auto found = talaria::RunProcess(find);
  if (!found || found->exit_code != 0 || found->stdout_text.size() < 2) {
    std::fprintf(stderr, "cannot find the session's container\n");
    return 1;
  }
  const std::string container = found->stdout_text.substr(0, found->stdout_text.find('\n'));
  talaria::SpawnOptions bare;
  bare.argv = {"docker", "-H", (*dockerd)->host(), "exec", "-i", container, "true"};
  const auto costs = talaria_bench::MeasureRunTrue(**env, bare, warmup, n);
  if (!costs) return 2;
  const double run = costs->run_ms;
  const double exec = costs->bare_ms;
  PrintMetric("docker_run_true_ms", run, "ms");
  PrintMetric("docker_exec_true_ms", exec, "ms");
  PrintMetric("docker_run_over_exec", run / exec, "x");

  env->reset();  // the container goes before the engine

  const int leaked = LeakedAfterKill(quick ? 2 : 10, (*dockerd)->host());
  if (leaked < 0) return 2;
  PrintMetric("docker_leaked_after_kill", leaked, "containers");
  return 0;
}
