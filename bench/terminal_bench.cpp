// talaria_terminal_bench: the cost of the terminal tool over a bare spawn, memory while a
// command prints 1 GB, and per-command cost of the sandboxed backend.
//
//   METRIC spawn_bash_true_us       RunProcess of `bash -c true` (posix_spawn, pipes, reaping)
//   METRIC spawn_wrapper_true_us    the same with the session's state-keeping bash wrapper
//   METRIC terminal_true_us         terminal {"command": "true"} through the whole pipeline
//   METRIC terminal_overhead_ratio  the two above (target <= 1.3)
//   METRIC terminal_bwrap_true_us   the same in the bubblewrap sandbox (when bwrap works)
//   METRIC terminal_guarded_local_true_us  as a user runs it on the local backend: the guard's
//                                   policy judging the command and the audit line written
//   METRIC terminal_guarded_default_true_us  the same on the default backend (auto: the
//                                   sandbox with credential stores hidden, where bwrap works)
//   METRIC terminal_default_vs_local_ratio  the two above
//   METRIC terminal_1gb_output_s    a command printing 1 GB: wall time
//   METRIC terminal_1gb_rss_growth_mb  peak RSS growth of this process meanwhile (flat = ~0)
//
//   talaria_terminal_bench [--quick]
#include <stdlib.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench_util.h"
#include "env/shell_session.h"
#include "talaria/base/subprocess.h"
#include "talaria/core/config.h"
#include "talaria/core/dispatcher.h"
#include "talaria/tools/command_policy.h"
#include "talaria/tools/session.h"

namespace {

using Clock = std::chrono::steady_clock;
using talaria::Json;

using talaria_bench::Median;
using talaria_bench::PrintMetric;

template <typename Body>
double MedianUs(int n, Body&& body) {
  std::vector<double> us;
  for (int i = -n / 10; i < n; ++i) {
    const auto t0 = Clock::now();
    body();
    if (i >= 0) us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
  }
  return Median(std::move(us));
}

double PeakRssMb() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;
}

std::shared_ptr<talaria::tools::Session> OpenSession(const std::string& root,
                                                     const std::string& backend,
                                                     bool audit = false) {
  talaria::tools::SessionOptions options;
  options.roots = {root};
  options.audit = audit;
  options.audit_log_path = root + "/audit.jsonl";
  options.terminal.backend = backend;
  auto session = talaria::tools::Session::Open(options);
  return session ? *session : nullptr;
}

void Check(const talaria::ToolResult& r) {
  if (!r.ok() || r.text.find("\"exit_code\":0") == std::string::npos) {
    std::fprintf(stderr, "terminal call failed: %.300s\n", r.text.c_str());
    std::exit(2);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const int n = quick ? 20 : 300;
  std::string tmpl =
      (std::filesystem::temp_directory_path() / "talaria-terminal-bench-XXXXXX").string();
  if (::mkdtemp(tmpl.data()) == nullptr) return 1;
  const std::string root = tmpl;

  talaria::SpawnOptions bare;
  bare.argv = {"bash", "-c", "true"};
  const double spawn_us = MedianUs(n, [&] {
    if (!talaria::RunProcess(bare)) std::exit(2);
  });
  PrintMetric("spawn_bash_true_us", spawn_us, "us");

  // The session's bash wrapper alone (state sourced and saved), spawned the same bare way: the
  // part of the terminal's cost that is bash's, as opposed to talaria's own.
  auto shell = talaria::env::ShellSession::Create("", root);
  if (!shell) return 1;
  talaria::SpawnOptions wrapped;
  wrapped.argv = (*shell)->Argv("true", /*persist=*/true);
  wrapped.cwd = root;
  PrintMetric("spawn_wrapper_true_us",
              MedianUs(n,
                       [&] {
                         if (!talaria::RunProcess(wrapped)) std::exit(2);
                       }),
              "us");

  const talaria::Dispatcher dispatcher;
  const std::string true_args = Json{{"command", "true"}}.dump();
  auto local = OpenSession(root, "local");
  if (!local) return 1;
  talaria::ToolContext ctx = local->NewContext("bench");
  const double terminal_us =
      MedianUs(n, [&] { Check(dispatcher.Dispatch("terminal", true_args, ctx)); });
  PrintMetric("terminal_true_us", terminal_us, "us");
  PrintMetric("terminal_overhead_ratio", terminal_us / spawn_us, "x");

  if (auto sandbox = OpenSession(root, "bwrap")) {
    talaria::ToolContext sctx = sandbox->NewContext("bench");
    PrintMetric("terminal_bwrap_true_us",
                MedianUs(n, [&] { Check(dispatcher.Dispatch("terminal", true_args, sctx)); }),
                "us");
  } else {
    std::fprintf(stderr, "# bwrap sandbox unavailable: terminal_bwrap_true_us not measured\n");
  }

  // As a user runs commands: the command policy (guard + approvals) installed and every command
  // audited, on the local backend and on the default one.
  talaria::Dispatcher guarded;
  auto config = talaria::ParseConfig("");
  if (!config || !talaria::tools::InstallCommandPolicy(guarded, *config, nullptr).ok()) return 1;
  double guarded_us[2] = {0, 0};
  const char* backends[2] = {"local", "auto"};
  for (int b = 0; b < 2; ++b) {
    auto session = OpenSession(root, backends[b], /*audit=*/true);
    if (!session) return 1;
    talaria::ToolContext gctx = session->NewContext("bench");
    guarded_us[b] = MedianUs(n, [&] { Check(guarded.Dispatch("terminal", true_args, gctx)); });
  }
  PrintMetric("terminal_guarded_local_true_us", guarded_us[0], "us");
  PrintMetric("terminal_guarded_default_true_us", guarded_us[1], "us");
  PrintMetric("terminal_default_vs_local_ratio", guarded_us[1] / guarded_us[0], "x");

  const double rss_before = PeakRssMb();
  const std::string gigabyte = Json{
      {"command",
       std::string("head -c ") + (quick ? "100000000" : "1000000000") + " /dev/zero | tr '\\0' a"},
      {"timeout", 600}}.dump();
  const auto t0 = Clock::now();
  Check(dispatcher.Dispatch("terminal", gigabyte, ctx));
  PrintMetric("terminal_1gb_output_s", std::chrono::duration<double>(Clock::now() - t0).count(),
              "s");
  PrintMetric("terminal_1gb_rss_growth_mb", PeakRssMb() - rss_before, "MB");

  std::error_code ec;
  std::filesystem::remove_all(root, ec);
  return 0;
}
