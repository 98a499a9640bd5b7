// The Docker environment. DockerEnvironment.*: the error paths, everywhere. DockerEngine.*:
// behaviour against a real dockerd of the test's own (tests/support/dockerd_server.h; label
// `docker`), skipped only when dockerd cannot start here, with the reason. The behaviour every
// backend shares is in src/sandboxes/environment_conformance_test.cpp
// (EnvironmentConformance.*/docker).
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>

#include "env/docker_reaper.h"
#include "support/dockerd_server.h"
#include "talaria/base/random.h"
#include "talaria/base/spawn.h"
#include "talaria/base/subprocess.h"
#include "talaria/env/environment.h"

namespace talaria::env {
namespace {

// "Name:\tvalue" lines of /proc/<pid>/status, by name; other lines are skipped.
std::map<std::string, std::string> StatusFields(const std::string& text) {
  std::map<std::string, std::string> fields;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const size_t value = line.find_first_not_of(" \t", colon + 1);
    fields[line.substr(0, colon)] = value == std::string::npos ? "" : line.substr(value);
  }
  return fields;
}

// The test's dockerd, or the reason to skip in `skip`.
test_support::DockerdServer* Engine(std::string& skip) {
  if (std::string reason = test_support::DockerdUnavailableReason(); !reason.empty()) {
    skip = reason;
    return nullptr;
  }
  auto dockerd = test_support::SharedDockerd();
  if (!dockerd) {
    skip = "dockerd cannot start here: " + dockerd.error().ToString();
    return nullptr;
  }
  return *dockerd;
}

// The ids of the engine's containers (running or not) carrying `label`.
std::string ContainersLabelled(const test_support::DockerdServer& dockerd,
                               const std::string& label) {
  SpawnOptions ps;
  ps.argv = {"docker", "-H", dockerd.host(), "ps", "-aq", "--filter", "label=" + label};
  ps.timeout = std::chrono::seconds(30);
  auto r = RunProcess(ps);
  return r ? r->stdout_text : "docker ps failed: " + r.error().ToString();
}

TEST(DockerEnvironment, MissingCliIsNotFound) {
  DockerOptions options;
  options.docker = "/nonexistent/docker";
  auto env = OpenDocker(options);
  ASSERT_FALSE(env);
  EXPECT_EQ(env.error().code(), StatusCode::kNotFound);
}

TEST(DockerEnvironment, NoEngineIsUnavailableWithTheReason) {
  SpawnOptions probe;
  probe.argv = {"docker", "--version"};
  if (auto r = RunProcess(probe); !r || r->exit_code != 0) {
    GTEST_SKIP() << "the docker CLI is not installed";
  }
  DockerOptions options;
  options.host = "unix:///nonexistent/talaria/docker.sock";
  auto env = OpenDocker(options);
  ASSERT_FALSE(env);
  EXPECT_EQ(env.error().code(), StatusCode::kUnavailable);
  EXPECT_NE(env.error().message().find("no Docker engine answers"), std::string::npos)
      << env.error().message();
}

TEST(DockerEngine, RunsCommandsInAHardenedContainer) {
  std::string skip;
  test_support::DockerdServer* dockerd = Engine(skip);
  if (dockerd == nullptr) GTEST_SKIP() << skip;
  auto env = OpenDocker(dockerd->ClientOptions());
  ASSERT_TRUE(env) << env.error().ToString();
  EXPECT_EQ((*env)->cwd(), "/workspace");  // created by docker: the image has none
  auto r = (*env)->Run("grep -E '^(CapEff|CapBnd|NoNewPrivs):' /proc/self/status", {});
  ASSERT_TRUE(r) << r.error().ToString();
  // Every capability dropped but CHOWN (bit 0), DAC_OVERRIDE (1) and FOWNER (3): the bounding
  // set holds exactly those, the effective set nothing else, and no privilege can be gained.
  const std::map<std::string, std::string> status = StatusFields(r->output);
  constexpr uint64_t kKept = (1u << 0) | (1u << 1) | (1u << 3);
  ASSERT_TRUE(status.contains("CapBnd") && status.contains("CapEff") &&
              status.contains("NoNewPrivs"))
      << r->output;
  EXPECT_EQ(std::stoull(status.at("CapBnd"), nullptr, 16), kKept) << r->output;
  EXPECT_EQ(std::stoull(status.at("CapEff"), nullptr, 16) & ~kKept, 0u) << r->output;
  EXPECT_EQ(status.at("NoNewPrivs"), "1") << r->output;
  // A pid limit (fork bombs stay inside) and no network but loopback.
  r = (*env)->Run(
      "cat /sys/fs/cgroup/pids/pids.max /sys/fs/cgroup/pids.max 2>/dev/null; ls /sys/class/net",
      {});
  ASSERT_TRUE(r);
  EXPECT_NE(r->output.find("256\n"), std::string::npos) << r->output;
  EXPECT_NE(r->output.find("lo\n"), std::string::npos) << r->output;
  EXPECT_EQ(r->output.find("eth0"), std::string::npos) << r->output;
}

TEST(DockerEngine, TheContainerIsLabelledAndGoesWithTheSession) {
  std::string skip;
  test_support::DockerdServer* dockerd = Engine(skip);
  if (dockerd == nullptr) GTEST_SKIP() << skip;
  const std::string label = "talaria.test=" + RandomHex(6);
  DockerOptions options = dockerd->ClientOptions();
  options.labels = {label};
  auto env = OpenDocker(options);
  ASSERT_TRUE(env) << env.error().ToString();
  EXPECT_EQ(ContainersLabelled(*dockerd, label).size(), 13u);  // one id and a newline
  EXPECT_EQ(ContainersLabelled(*dockerd, "talaria.session=1").empty(), false);
  ASSERT_TRUE((*env)->Run("sleep 1000.5 >/dev/null 2>&1 &", {}));
  env->reset();
  EXPECT_EQ(ContainersLabelled(*dockerd, label), "");
}

// The owner label of a process that ran: "<hostname>/<pid>:<start time>".
std::string OwnerLabel(pid_t pid) {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::istringstream fields(stat.substr(stat.rfind(')') + 1));
  std::string field;
  for (int i = 3; i <= 22; ++i) fields >> field;
  return std::string(host) + "/" + std::to_string(pid) + ":" + field;
}

TEST(DockerEngine, ContainersOfATalariaThatDiedAreReaped) {
  std::string skip;
  test_support::DockerdServer* dockerd = Engine(skip);
  if (dockerd == nullptr) GTEST_SKIP() << skip;
  // A process that runs and then is killed, as a talaria hit by SIGKILL.
  SpawnOptions sleeper;
  sleeper.argv = {"sleep", "30"};
  auto dead = StartProcess(sleeper, {});
  ASSERT_TRUE(dead) << dead.error().ToString();
  const std::string dead_owner = OwnerLabel(dead->pid);
  TerminateProcessGroup(dead->pid, dead->pidfd.get(), std::chrono::milliseconds(0));
  siginfo_t info{};
  ::waitid(P_PID, static_cast<id_t>(dead->pid), &info, WEXITED);
  const std::string run = RandomHex(6);
  auto start = [&](const std::string& owner) {
    SpawnOptions docker;
    docker.argv = {"docker",
                   "-H",
                   dockerd->host(),
                   "run",
                   "-d",
                   "--network",
                   "none",
                   "--label",
                   "talaria.session=1",
                   "--label",
                   "talaria.owner=" + owner,
                   "--label",
                   "talaria.test=" + run,
                   test_support::DockerdServer::kImage,
                   "sleep",
                   "infinity"};
    docker.timeout = std::chrono::seconds(60);
    auto r = RunProcess(docker);
    return r && r->exit_code == 0;
  };
  ASSERT_TRUE(start(dead_owner));
  ASSERT_TRUE(start(OwnerLabel(::getpid())));  // this live process's: kept
  ASSERT_TRUE(start("elsewhere/1:1"));         // another machine's: not ours to judge
  ASSERT_EQ(ContainersLabelled(*dockerd, "talaria.test=" + run).size(), 3u * 13);
  DockerOptions options = dockerd->ClientOptions();
  ASSERT_TRUE(ReapOrphanedContainers(options).ok());
  EXPECT_EQ(ContainersLabelled(*dockerd, "talaria.owner=" + dead_owner), "");
  EXPECT_EQ(ContainersLabelled(*dockerd, "talaria.test=" + run).size(), 2u * 13);
  // A session's own container names this process as its owner.
  auto env = OpenDocker(options);
  ASSERT_TRUE(env) << env.error().ToString();
  EXPECT_EQ(ContainersLabelled(*dockerd, "talaria.owner=" + OwnerLabel(::getpid())).size(),
            2u * 13);
  SpawnOptions cleanup;
  cleanup.argv = {
      "sh", "-c",
      "docker -H \"$0\" rm -f $(docker -H \"$0\" ps -aq --filter label=talaria.test=" + run + ")",
      dockerd->host()};
  (void)RunProcess(cleanup);
}

TEST(DockerEngine, AMissingImageIsUnavailableAndSaysWhich) {
  std::string skip;
  test_support::DockerdServer* dockerd = Engine(skip);
  if (dockerd == nullptr) GTEST_SKIP() << skip;
  DockerOptions options = dockerd->ClientOptions();
  options.image = "talaria-test:absent";
  auto env = OpenDocker(options);
  ASSERT_FALSE(env);
  EXPECT_EQ(env.error().code(), StatusCode::kUnavailable);
  EXPECT_NE(env.error().message().find("talaria-test:absent"), std::string::npos)
      << env.error().message();
}

}  // namespace
}  // namespace talaria::env
