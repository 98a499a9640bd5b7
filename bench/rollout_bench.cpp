// talaria_rollout_bench: an RL-style rollout over `terminal.backend: pool` (issue 24). N scripted
// agent sessions (the scripted model server of tests/support) of T terminal turns each, all at
// once, spread by the pool over H real sshd instances on loopback ports; then the same sessions
// one after another on a pool of one host. Each session is a real Agent with the real session
// store, reading the pool from config.yaml as the CLI does; every tool turn is one command on the
// session's host.
//
//   METRIC rollout_parallel_s          wall time of the N sessions at once over H hosts
//   METRIC rollout_sequential_s        the same sessions one after another on one host
//   METRIC rollout_speedup             sequential / parallel
//   METRIC rollout_commands_per_s      terminal commands per second, all at once
//   METRIC rollout_host_imbalance      max/min commands per host (goal <= 1.2)
//   METRIC rollout_failed_sessions     sessions that did not end with the scripted answer
//
//   talaria_rollout_bench [--quick]     (--quick: 20 sessions of 5 turns)
//   talaria_rollout_bench [--sessions N] [--turns T] [--hosts H]
//
// The hosts are all this machine (2 shared cores here): the parallel figure measures placement
// and overlap of the commands' waits, not more hardware.
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench_util.h"
#include "support/fake_llm_server.h"
#include "support/sshd_server.h"
#include "support/temp_dir.h"
#include "talaria/agent/agent.h"
#include "talaria/core/config.h"
#include "talaria/store/session_store.h"
#include "talaria/tools/session.h"
#include "tools/terminal_backends.h"

namespace {

using Clock = std::chrono::steady_clock;
using talaria_bench::PrintMetric;

struct Shape {
  int sessions = 100;
  int turns = 10;
  int hosts = 4;
};

// Every session's script is the same chain: the first request (last message the user's) gets
// step 1's command; a request whose last message is step k's output gets step k+1's; step T's
// output gets the answer. Sessions take whichever unused turn matches, so the N copies serve N
// sessions in any interleaving.
std::string Script(const Shape& shape) {
  nlohmann::ordered_json turns = nlohmann::ordered_json::array();
  for (int s = 0; s < shape.sessions; ++s) {
    for (int k = 0; k <= shape.turns; ++k) {
      nlohmann::ordered_json turn;
      if (k == 0) {
        turn["match"] = {{"last_role", "user"}};
      } else {
        turn["match"] = {{"last_role", "tool"},
                         {"last_content_contains", "rollout-step=" + std::to_string(k) + "."}};
      }
      if (k < shape.turns) {
        const std::string next = std::to_string(k + 1);
        turn["tool_calls"] = nlohmann::ordered_json::array(
            {{{"name", "terminal"},
              {"arguments", {{"command", "echo rollout-step=" + next + ". && true"}}}}});
      } else {
        turn["text"] = "rollout done";
      }
      turns.push_back(turn);
    }
  }
  return nlohmann::ordered_json{{"turns", turns}}.dump();
}

struct RunResult {
  double seconds = 0;
  int failed = 0;
  std::vector<talaria::env::PoolHostStatus> hosts;
  std::string problems;
};

// Runs shape.sessions agent sessions against `pool_yaml`, `parallel` at a time.
RunResult Rollout(const Shape& shape, const std::string& home, const std::string& pool_yaml,
                  int parallel) {
  RunResult result;
  const std::string config_path = home + "/config.yaml";
  std::ofstream(config_path) << pool_yaml;
  std::string error;
  auto server = talaria::test_support::FakeLlmServer::FromScript(Script(shape), &error);
  if (!server || !server->Start(&error)) {
    std::fprintf(stderr, "fake server: %s\n", error.c_str());
    std::exit(1);
  }
  auto store = talaria::store::SessionStore::Open(home + "/sessions.db");
  if (!store) {
    std::fprintf(stderr, "store: %s\n", store.error().ToString().c_str());
    std::exit(1);
  }
  std::shared_ptr<talaria::store::SessionStore> shared_store = std::move(*store);
  talaria::agent::ModelSettings model;
  model.base_url = server->base_url();
  model.model = "fake-model";
  talaria::agent::AgentOptions options;
  options.roots = {home + "/ws"};
  options.toolsets = {"terminal"};
  options.config_path = config_path;
  options.load_context_files = false;
  options.enable_code_execution = false;

  std::atomic<int> next{0};
  std::atomic<int> failed{0};
  const auto worker = [&] {
    for (int i = next++; i < shape.sessions; i = next++) {
      auto agent = talaria::agent::Agent::Open(options, model, shared_store);
      if (!agent) {
        std::fprintf(stderr, "session %d: %s\n", i, agent.error().ToString().c_str());
        ++failed;
        continue;
      }
      const talaria::agent::TurnResult r = (*agent)->RunTurn("run the rollout", nullptr, {});
      if (r.exit != talaria::agent::TurnExit::kAnswered || r.text != "rollout done") {
        std::fprintf(stderr, "session %d ended %d: %s %s\n", i, static_cast<int>(r.exit),
                     r.error.c_str(), r.text.c_str());
        ++failed;
      }
    }
  };
  const auto t0 = Clock::now();
  {
    std::vector<std::jthread> workers;
    for (int w = 0; w < parallel; ++w) workers.emplace_back(worker);
  }
  result.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  result.failed = failed.load();
  result.problems = server->ProblemsText();
  auto config = talaria::ParseConfig(pool_yaml);
  if (config) {
    auto session_options = talaria::tools::SessionOptionsFromConfig(*config);
    if (session_options) result.hosts = talaria::tools::PoolHostsOf(session_options->terminal);
  }
  return result;
}

std::string PoolYaml(const std::vector<std::unique_ptr<talaria::test_support::SshdServer>>& sshds,
                     size_t count, const std::string& home) {
  std::string hosts;
  for (size_t i = 0; i < count; ++i) {
    hosts += std::string(hosts.empty() ? "" : ", ") +
             "'127.0.0.1:" + std::to_string(sshds[i]->port()) + "'";
  }
  return "terminal:\n  backend: pool\n  ssh: {identity_file: '" + sshds[0]->client_key() +
         "', known_hosts_file: '" + home + "/known_hosts', cwd: '" + home +
         "/ws'}\n  pool: {hosts: [" + hosts + "], health_interval_s: 86400}\n";
}

}  // namespace

int main(int argc, char** argv) {
  Shape shape;
  for (int i = 1; i < argc; ++i) {
    const auto number = [&](int& out) {
      if (i + 1 < argc) out = std::max(1, std::atoi(argv[++i]));
    };
    if (std::strcmp(argv[i], "--quick") == 0) {
      shape.sessions = 20;
      shape.turns = 5;
    } else if (std::strcmp(argv[i], "--sessions") == 0) {
      number(shape.sessions);
    } else if (std::strcmp(argv[i], "--turns") == 0) {
      number(shape.turns);
    } else if (std::strcmp(argv[i], "--hosts") == 0) {
      number(shape.hosts);
    }
  }
  if (const std::string reason = talaria::test_support::SshdUnavailableReason(); !reason.empty()) {
    std::fprintf(stderr, "# %s: the rollout is not measured\n", reason.c_str());
    return 0;
  }
  talaria::test_support::TempDir home;
  ::setenv("TALARIA_HOME", home.path().c_str(), 1);
  std::filesystem::create_directories(home / "ws");
  std::vector<std::unique_ptr<talaria::test_support::SshdServer>> sshds;
  for (int i = 0; i < shape.hosts; ++i) {
    auto sshd = talaria::test_support::SshdServer::Start();
    if (!sshd) {
      std::fprintf(stderr, "cannot start sshd: %s\n", sshd.error().ToString().c_str());
      return 1;
    }
    sshds.push_back(std::move(*sshd));
    if (i > 0 && !sshds.back()->AuthorizeKey(sshds[0]->client_key() + ".pub").ok()) return 1;
  }
  std::printf("# %d sessions x %d terminal turns, %d sshd hosts on loopback\n", shape.sessions,
              shape.turns, shape.hosts);

  const RunResult parallel =
      Rollout(shape, home.path(), PoolYaml(sshds, sshds.size(), home.path()), shape.sessions);
  uint64_t most = 0;
  uint64_t least = UINT64_MAX;
  uint64_t commands = 0;
  for (const auto& h : parallel.hosts) {
    std::printf("# host %s: %llu commands\n", h.name.c_str(),
                static_cast<unsigned long long>(h.commands_run));
    most = std::max(most, h.commands_run);
    least = std::min(least, h.commands_run);
    commands += h.commands_run;
  }
  // The sequential run: the same sessions on a pool of the first host alone.
  const RunResult sequential = Rollout(shape, home.path(), PoolYaml(sshds, 1, home.path()), 1);

  PrintMetric("rollout_parallel_s", parallel.seconds, "s");
  PrintMetric("rollout_sequential_s", sequential.seconds, "s");
  PrintMetric("rollout_speedup", sequential.seconds / std::max(parallel.seconds, 1e-9), "x");
  PrintMetric("rollout_commands_per_s",
              static_cast<double>(commands) / std::max(parallel.seconds, 1e-9), "1/s");
  PrintMetric("rollout_host_imbalance",
              least == 0 || least == UINT64_MAX
                  ? 0
                  : static_cast<double>(most) / static_cast<double>(least),
              "x");
  PrintMetric("rollout_failed_sessions", parallel.failed + sequential.failed, "sessions");
  for (const RunResult* r : {&parallel, &sequential}) {
    if (!r->problems.empty())
      std::fprintf(stderr, "scripted server problems:\n%s", r->problems.c_str());
  }
  return parallel.failed + sequential.failed == 0 ? 0 : 1;
}
