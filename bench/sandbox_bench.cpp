// Sandbox services at scale against the fake control plane on loopback (issue 24), Daytona
// dialect. The fake runs commands as plain processes (the jail is its cost, not talaria's) and
// times its own share of each exec (the process run, RunIn); that share is subtracted from what
// the client saw to give talaria's. On this machine kind a process costs ~7-12 ms of CPU (its
// VM makes fork and exec dear) and an exec of talaria's session wrapper is three of them, so
// 10,000 real execs would be ~300 CPU-seconds of the fake's alone: the 10,000 run through
// talaria's whole path with the fake answering without a process, and the real processes'
// share is measured on a sample.
//   METRIC sandbox_exec_latency_us        one `true` exec, sequential, client wall (median)
//   METRIC sandbox_fake_exec_us           the fake's process run for that exec (median)
//   METRIC sandbox_client_overhead_us     talaria's share per exec: the median over execs of
//                                         (client wall - the fake's process run of that exec):
//                                         talaria's client + HTTP on loopback (goal <= 200)
//   METRIC sandbox_client_overhead_idle_fake_us the same with the fake waiting 20 ms instead
//                                         of running processes (no load from them)
//   METRIC sandbox_noop_exec_roundtrip_us an exec the fake answers without running anything:
//                                         talaria's client + JSON + HTTP on loopback, both ends
//   METRIC sandbox_open_1000_wall_ms      1,000 sandboxes opened by 16 threads (each a create and
//                                         the session's first command, run for real)
//   METRIC sandbox_live                   sandboxes open at once (goal 1000)
//   METRIC sandbox_exec_10000_wall_ms     10,000 `true` execs over those 1,000 sandboxes by 16
//                                         threads, the fake answering without a process
//   METRIC sandbox_exec_10000_client_us   per exec of those: client wall (mean), i.e. talaria +
//                                         HTTP + the fake's request handling, under that load
//   METRIC sandbox_exec_sample_480_wall_ms 480 real execs (16 threads x 30 over the 1,000)
//   METRIC sandbox_exec_sample_fake_share of the clients' summed wall, the part spent in the
//                                         fake's process runs (the rest: waiting for the CPU
//                                         the processes take, talaria, HTTP)
//   METRIC sandbox_fake_exec_cpu_ms       CPU of the fake's processes per real exec (sample)
//   METRIC sandbox_leaked_after_kill9     sandboxes left after kill -9 of an owner of 100 and
//                                         one ReapOrphanSandboxes by another process (goal 0)
// `sandbox_bench --child URL N` is the owner that gets killed. `--sandboxes N --execs M`
// scale the concurrent phases (a quick look; the figures above are for the defaults).
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "support/sandbox_control_plane.h"
#include "talaria/sandboxes/sandboxes.h"

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using talaria::sandboxes::OpenSandboxService;
using talaria::sandboxes::SandboxServiceOptions;

SandboxServiceOptions Options(const std::string& url) {
  SandboxServiceOptions o;
  o.kind = "daytona";
  o.base_url = url;
  o.data_plane_url = url;
  o.api_key = "test-key";
  return o;
}

int HoldSandboxes(const std::string& url, int n) {
  std::vector<std::shared_ptr<talaria::env::Environment>> envs;
  for (int i = 0; i < n; ++i) {
    auto env = OpenSandboxService(Options(url));
    if (!env) return 3;
    envs.push_back(*env);
  }
  std::printf("ready\n");
  std::fflush(stdout);
  for (;;) std::this_thread::sleep_for(1s);
}

double Us(Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

double MedianOf(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// CPU time (user + system) of the children this process has reaped: the fake's processes.
double ChildrenCpuMs() {
  rusage u{};
  ::getrusage(RUSAGE_CHILDREN, &u);
  const auto ms = [](const timeval& t) { return t.tv_sec * 1e3 + t.tv_usec / 1e3; };
  return ms(u.ru_utime) + ms(u.ru_stime);
}

double LoadAverage() {
  double load[1] = {0};
  return ::getloadavg(load, 1) == 1 ? load[0] : -1;
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // each figure as it comes
  if (argc == 4 && std::string(argv[1]) == "--child") {
    return HoldSandboxes(argv[2], std::atoi(argv[3]));
  }
  int sandboxes = 1000;
  int execs = 10000;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--sandboxes") sandboxes = std::max(1, std::atoi(argv[i + 1]));
    if (flag == "--execs") execs = std::max(1, std::atoi(argv[i + 1]));
  }
  std::string root = (std::filesystem::temp_directory_path() / "talaria-sbx-bench-XXXXXX").string();
  if (::mkdtemp(root.data()) == nullptr) return 1;
  talaria::test_support::SandboxControlPlaneOptions fake;
  fake.root = root;
  fake.jail = false;
  fake.threads = 64;
  auto plane = talaria::test_support::SandboxControlPlane::Start(fake);
  const std::string url = plane->url();
  const auto started = Clock::now();
  std::printf("# load average at start %.2f\n", LoadAverage());

  // Sequential: one `true` at a time, the client's wall and the fake's share of each.
  {
    auto env = OpenSandboxService(Options(url));
    if (!env) {
      std::fprintf(stderr, "open: %s\n", env.error().ToString().c_str());
      return 1;
    }
    for (int i = 0; i < 20; ++i) (void)(*env)->Run("true", {});  // warm up
    std::vector<double> client, fake_us, overhead;
    for (int i = 0; i < 200; ++i) {
      const auto fake_before = plane->exec_time();
      const auto t0 = Clock::now();
      auto r = (*env)->Run("true", {});
      const double wall = Us(Clock::now() - t0);
      const double in_fake = Us(plane->exec_time() - fake_before);
      if (!r || r->exit_code != 0) return 1;
      client.push_back(wall);
      fake_us.push_back(in_fake);
      overhead.push_back(wall - in_fake);
    }
    std::printf("METRIC sandbox_exec_latency_us %.1f us\n", MedianOf(client));
    std::printf("METRIC sandbox_fake_exec_us %.1f us\n", MedianOf(fake_us));
    std::printf("METRIC sandbox_client_overhead_us %.1f us\n", MedianOf(overhead));
  }

  // The same as the first, with the fake's 20 ms spent waiting instead of on processes: the
  // overhead without the machine loaded by them.
  {
    auto env = OpenSandboxService(Options(url));
    if (!env) return 1;
    plane->SetNoopExecs(true, std::chrono::milliseconds(20));
    std::vector<double> overhead;
    for (int i = 0; i < 200; ++i) {
      const auto fake_before = plane->exec_time();
      const auto t0 = Clock::now();
      auto r = (*env)->Run("true", {});
      const double wall = Us(Clock::now() - t0);
      if (!r) return 1;
      overhead.push_back(wall - Us(plane->exec_time() - fake_before));
    }
    plane->SetNoopExecs(false);
    std::printf("METRIC sandbox_client_overhead_idle_fake_us %.1f us\n", MedianOf(overhead));
  }

  // The same exchange with an exec that runs nothing: talaria's client, JSON and HTTP on
  // loopback (both ends), no process.
  {
    auto env = OpenSandboxService(Options(url));
    if (!env) return 1;
    plane->SetNoopExecs(true);
    for (int i = 0; i < 200; ++i) (void)(*env)->Run("true", {});
    std::vector<double> us;
    for (int i = 0; i < 5000; ++i) {
      const auto t0 = Clock::now();
      auto r = (*env)->Run("true", {});
      us.push_back(Us(Clock::now() - t0));
      if (!r) return 1;
    }
    plane->SetNoopExecs(false);
    std::sort(us.begin(), us.end());
    std::printf("METRIC sandbox_noop_exec_roundtrip_us %.1f us (median; p90 %.1f)\n",
                us[us.size() / 2], us[us.size() * 9 / 10]);
  }

  // `sandboxes` at once, then `execs` over them.
  const int kThreads = 16;
  std::vector<std::shared_ptr<talaria::env::Environment>> envs(static_cast<size_t>(sandboxes));
  std::atomic<int> next{0}, failures{0};
  auto t0 = Clock::now();
  {
    std::vector<std::jthread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&] {
        for (int i; (i = next++) < sandboxes;) {
          auto env = OpenSandboxService(Options(url));
          if (env) {
            envs[static_cast<size_t>(i)] = *env;
          } else {
            ++failures;
          }
        }
      });
    }
  }
  std::printf("METRIC sandbox_open_%d_wall_ms %.0f ms\n", sandboxes, Us(Clock::now() - t0) / 1e3);
  std::printf("METRIC sandbox_live %d\n", plane->counts().live);
  std::printf("# load average %.2f\n", LoadAverage());
  // Spreads `count` `true` execs over the open sandboxes, 16 threads; the sum of the
  // client walls (us).
  const auto exec_all = [&](int count) {
    std::atomic<int> at{0};
    std::mutex sum_mu;
    double client_sum_us = 0;
    std::vector<std::jthread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&] {
        double mine = 0;
        for (int i; (i = at++) < count;) {
          auto& env = envs[static_cast<size_t>(i % sandboxes)];
          if (!env) {
            ++failures;
            continue;
          }
          const auto start = Clock::now();
          auto r = env->Run("true", {});
          mine += Us(Clock::now() - start);
          if (!r || r->exit_code != 0) ++failures;
        }
        std::lock_guard lock(sum_mu);
        client_sum_us += mine;
      });
    }
    threads.clear();
    return client_sum_us;
  };
  plane->SetNoopExecs(true);
  t0 = Clock::now();
  const double noop_sum_us = exec_all(execs);
  std::printf("METRIC sandbox_exec_%d_wall_ms %.0f ms\n", execs, Us(Clock::now() - t0) / 1e3);
  std::printf("METRIC sandbox_exec_%d_client_us %.1f us\n", execs, noop_sum_us / execs);
  plane->SetNoopExecs(false);
  const int sample = kThreads * 30;
  const auto fake_before = plane->exec_time();
  const double cpu_before = ChildrenCpuMs();
  const auto sample_t0 = Clock::now();
  const double real_sum_us = exec_all(sample);
  const double fake_sum_us = Us(plane->exec_time() - fake_before);
  std::printf("METRIC sandbox_exec_sample_%d_wall_ms %.0f ms\n", sample,
              Us(Clock::now() - sample_t0) / 1e3);
  std::printf("METRIC sandbox_exec_sample_fake_share %.2f\n", fake_sum_us / real_sum_us);
  std::printf("METRIC sandbox_fake_exec_cpu_ms %.1f ms\n", (ChildrenCpuMs() - cpu_before) / sample);
  std::printf("METRIC sandbox_failures %d\n", failures.load());
  std::printf("# load average %.2f\n", LoadAverage());
  envs.clear();
  std::printf("METRIC sandbox_live_after_close %d\n", plane->counts().live);

  // kill -9 of an owner of 100 sandboxes, then the reaper.
  char exe[4096];
  const ssize_t len = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (len <= 0) return 1;
  exe[len] = '\0';
  int out[2];
  if (::pipe(out) != 0) return 1;
  const pid_t child = ::fork();
  if (child == 0) {
    ::dup2(out[1], 1);
    ::execl(exe, exe, "--child", url.c_str(), "100", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(out[1]);
  char buf[16] = {};
  if (::read(out[0], buf, sizeof buf) <= 0) return 1;
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  const int before = plane->counts().live;
  auto reaped = talaria::sandboxes::ReapOrphanSandboxes(Options(url));
  std::printf("METRIC sandbox_orphans_before_reap %d\n", before);
  std::printf("METRIC sandbox_reaped %d\n", reaped ? *reaped : -1);
  std::printf("METRIC sandbox_leaked_after_kill9 %d\n", plane->counts().live);
  std::printf("METRIC sandbox_bench_wall_s %.0f s\n", Us(Clock::now() - started) / 1e6);
  std::printf("# load average at end %.2f\n", LoadAverage());
  plane.reset();
  std::filesystem::remove_all(root);
  return 0;
}
