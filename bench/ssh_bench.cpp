// talaria_ssh_bench: per-command cost of the SSH environment, against a throwaway sshd on a
// loopback port (tests/support/sshd_server.h). Every command after the first reuses the
// multiplexed connection (ControlMaster), so this is a local ssh start plus a new channel and
// the remote wrapper, not a key exchange.
//
//   METRIC ssh_open_ms      OpenSsh: the master connection and the remote session state
//   METRIC ssh_run_true_ms  Environment::Run("true"): median after a warmup
//   METRIC ssh_bare_true_ms `ssh host true` over the same master, interleaved with the runs,
//                           for comparison (what the environment adds is its remote wrapper
//                           and the shell state)
//
//   talaria_ssh_bench [--quick]
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "env/ssh_command.h"
#include "env_bench_util.h"
#include "support/sshd_server.h"
#include "talaria/base/subprocess.h"
#include "talaria/env/environment.h"

namespace {

using Clock = std::chrono::steady_clock;
using talaria_bench::MsSince;
using talaria_bench::PrintMetric;

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const int n = quick ? 20 : 200;
  const int warmup = quick ? 3 : 20;

  if (const std::string reason = talaria::test_support::SshdUnavailableReason(); !reason.empty()) {
    std::fprintf(stderr, "# %s: ssh_run_true_ms not measured\n", reason.c_str());
    return 0;
  }
  auto sshd = talaria::test_support::SshdServer::Start();
  if (!sshd) {
    std::fprintf(stderr, "cannot start sshd: %s\n", sshd.error().ToString().c_str());
    return 1;
  }

  const auto t0 = Clock::now();
  auto env = talaria::env::OpenSsh((*sshd)->ClientOptions());
  if (!env) {
    std::fprintf(stderr, "cannot open the ssh environment: %s\n", env.error().ToString().c_str());
    return 1;
  }
  PrintMetric("ssh_open_ms", MsSince(t0), "ms");

  const talaria::env::SshOptions options = (*sshd)->ClientOptions();
  talaria::SpawnOptions bare;
  bare.argv = {"ssh",
               "-o",
               "ControlPath=" + options.control_dir + "/" +
                   talaria::env::ControlSocketName("", options.host, options.port),
               "-o",
               "BatchMode=yes",
               "-p",
               std::to_string(options.port),
               options.host,
               "true"};
  const auto costs = talaria_bench::MeasureRunTrue(**env, bare, warmup, n);
  if (!costs) return 2;
  PrintMetric("ssh_run_true_ms", costs->run_ms, "ms");
  PrintMetric("ssh_bare_true_ms", costs->bare_ms, "ms");

  // The session's end closes the master connection before sshd and its directory go.
  env->reset();
  return 0;
}
