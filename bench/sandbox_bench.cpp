// Sandbox services at scale against the fake control plane on loopback (issue 24):
//   METRIC sandbox_open_1000_wall_ms     1,000 sandboxes opened by 16 threads (Daytona dialect)
//   METRIC sandbox_exec_10000_wall_ms    10,000 `true` execs over those sandboxes, 16 threads
//   METRIC sandbox_exec_latency_us       one `true` exec, sequential, client wall (median)
//   METRIC sandbox_fake_exec_us          the fake's own cost of that exec (its process run)
//   METRIC sandbox_client_overhead_us    the difference: talaria's client + HTTP on loopback
//   METRIC sandbox_noop_exec_roundtrip_us an exec the fake answers without running anything:
//                                        talaria's client + JSON + HTTP on loopback, both ends
//   METRIC sandbox_leaked_after_kill9    sandboxes left after kill -9 of an owner of 100 and
//                                        one ReapOrphanSandboxes (goal 0)
// The fake runs commands as plain processes here (no bwrap: the jail is the fake's cost, not
// talaria's). `sandbox_bench --child URL N` is the owner that gets killed.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
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

SandboxServiceOptions Options(const std::string& url, const std::string& kind) {
  SandboxServiceOptions o;
  o.kind = kind;
  o.base_url = url;
  o.data_plane_url = url;
  o.api_key = "test-key";
  return o;
}

int Child(const std::string& url, int n) {
  std::vector<std::shared_ptr<talaria::env::Environment>> envs;
  for (int i = 0; i < n; ++i) {
    auto env = OpenSandboxService(Options(url, "daytona"));
    if (!env) return 3;
    envs.push_back(*env);
  }
  std::printf("ready\n");
  std::fflush(stdout);
  for (;;) std::this_thread::sleep_for(1s);
}

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::string(argv[1]) == "--child") return Child(argv[2], std::atoi(argv[3]));
  std::string root = (std::filesystem::temp_directory_path() / "talaria-sbx-bench-XXXXXX").string();
  if (::mkdtemp(root.data()) == nullptr) return 1;
  talaria::test_support::SandboxControlPlaneOptions fake;
  fake.root = root;
  fake.jail = false;
  fake.threads = 64;
  auto plane = talaria::test_support::SandboxControlPlane::Start(fake);
  const std::string url = plane->url();

  // Sequential latency of one `true`, and the fake's own share.
  {
    auto env = OpenSandboxService(Options(url, "daytona"));
    if (!env) {
      std::fprintf(stderr, "open: %s\n", env.error().ToString().c_str());
      return 1;
    }
    for (int i = 0; i < 50; ++i) (void)(*env)->Run("true", {});  // warm up
    std::vector<double> client;
    const auto fake_before = plane->exec_time();
    const int n = 1000;
    for (int i = 0; i < n; ++i) {
      const auto t0 = Clock::now();
      auto r = (*env)->Run("true", {});
      client.push_back(Ms(Clock::now() - t0) * 1000);
      if (!r || r->exit_code != 0) return 1;
    }
    const double fake_us =
        std::chrono::duration<double, std::micro>(plane->exec_time() - fake_before).count() / n;
    std::sort(client.begin(), client.end());
    double mean = 0;
    for (double c : client) mean += c;
    mean /= n;
    std::printf("METRIC sandbox_exec_latency_us %.1f us\n", client[n / 2]);
    std::printf("METRIC sandbox_fake_exec_us %.1f us\n", fake_us);
    std::printf("METRIC sandbox_client_overhead_us %.1f us\n", mean - fake_us);
  }

  // The same exchange with an exec that runs nothing: talaria's client, JSON and HTTP on
  // loopback (both ends), no process.
  {
    auto env = OpenSandboxService(Options(url, "daytona"));
    if (!env) return 1;
    plane->SetNoopExecs(true);
    for (int i = 0; i < 200; ++i) (void)(*env)->Run("true", {});
    std::vector<double> us;
    for (int i = 0; i < 5000; ++i) {
      const auto t0 = Clock::now();
      auto r = (*env)->Run("true", {});
      us.push_back(Ms(Clock::now() - t0) * 1000);
      if (!r) return 1;
    }
    plane->SetNoopExecs(false);
    std::sort(us.begin(), us.end());
    std::printf("METRIC sandbox_noop_exec_roundtrip_us %.1f us (median; p90 %.1f)\n",
                us[us.size() / 2], us[us.size() * 9 / 10]);
  }

  // 1,000 sandboxes at once, then 10,000 execs over them.
  const int kSandboxes = 1000, kExecs = 10000, kThreads = 16;
  std::vector<std::shared_ptr<talaria::env::Environment>> envs(kSandboxes);
  std::atomic<int> next{0}, failures{0};
  auto t0 = Clock::now();
  {
    std::vector<std::jthread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&] {
        for (int i; (i = next++) < kSandboxes;) {
          auto env = OpenSandboxService(Options(url, "daytona"));
          if (env) {
            envs[static_cast<size_t>(i)] = *env;
          } else {
            ++failures;
          }
        }
      });
    }
  }
  std::printf("METRIC sandbox_open_1000_wall_ms %.0f ms\n", Ms(Clock::now() - t0));
  std::printf("METRIC sandbox_live %d\n", plane->counts().live);
  next = 0;
  t0 = Clock::now();
  {
    std::vector<std::jthread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&] {
        for (int i; (i = next++) < kExecs;) {
          auto& env = envs[static_cast<size_t>(i % kSandboxes)];
          if (!env) {
            ++failures;
            continue;
          }
          auto r = env->Run("true", {});
          if (!r || r->exit_code != 0) ++failures;
        }
      });
    }
  }
  std::printf("METRIC sandbox_exec_10000_wall_ms %.0f ms\n", Ms(Clock::now() - t0));
  std::printf("METRIC sandbox_failures %d\n", failures.load());
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
  auto reaped = talaria::sandboxes::ReapOrphanSandboxes(Options(url, "daytona"));
  std::fflush(stdout);
  std::printf("METRIC sandbox_orphans_before_reap %d\n", before);
  std::printf("METRIC sandbox_reaped %d\n", reaped ? *reaped : -1);
  std::printf("METRIC sandbox_leaked_after_kill9 %d\n", plane->counts().live);
  plane.reset();
  std::filesystem::remove_all(root);
  return 0;
}
