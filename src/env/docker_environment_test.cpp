// The Docker environment. Where no engine runs (this CI machine has the CLI but no daemon), the
// behaviour tests skip with that reason; the error paths are tested everywhere.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <sstream>
#include <string>

#include "talaria/base/subprocess.h"
#include "talaria/env/environment.h"

namespace talaria::env {
namespace {

// Empty when an engine answers, else why not.
std::string NoEngineReason() {
  SpawnOptions probe;
  probe.argv = {"docker", "info", "--format", "{{.ServerVersion}}"};
  probe.timeout = std::chrono::seconds(10);
  auto r = RunProcess(probe);
  if (!r) return "the docker CLI is not installed";
  if (r->exit_code != 0) return "no Docker engine answers: " + r->stderr_text.substr(0, 200);
  return "";
}

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

TEST(DockerEnvironment, MissingCliIsNotFound) {
  DockerOptions options;
  options.docker = "/nonexistent/docker";
  auto env = OpenDocker(options);
  ASSERT_FALSE(env);
  EXPECT_EQ(env.error().code(), StatusCode::kNotFound);
}

TEST(DockerEnvironment, NoEngineIsUnavailableWithTheReason) {
  const std::string reason = NoEngineReason();
  if (reason.empty()) GTEST_SKIP() << "an engine runs here; this test is about its absence";
  if (reason.starts_with("the docker CLI")) GTEST_SKIP() << reason;
  auto env = OpenDocker({});
  ASSERT_FALSE(env);
  EXPECT_EQ(env.error().code(), StatusCode::kUnavailable);
  EXPECT_NE(env.error().message().find("no Docker engine answers"), std::string::npos)
      << env.error().message();
}

TEST(DockerEnvironment, RunsCommandsWithShellStateInAHardenedContainer) {
  if (const std::string reason = NoEngineReason(); !reason.empty()) GTEST_SKIP() << reason;
  auto env = OpenDocker({});
  ASSERT_TRUE(env) << env.error().ToString();
  auto r = (*env)->Run("mkdir -p /tmp/w && cd /tmp/w && export X=1 && echo ok", {});
  ASSERT_TRUE(r) << r.error().ToString();
  EXPECT_EQ(r->output, "ok\n");
  r = (*env)->Run("pwd; echo $X; grep -E '^(CapEff|CapBnd|NoNewPrivs):' /proc/self/status", {});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->output.rfind("/tmp/w\n1\n", 0), 0u) << r->output;
  // Every capability dropped but CHOWN (bit 0), DAC_OVERRIDE (1) and FOWNER (3): the bounding
  // set holds exactly those, the effective set nothing else (nothing at all for a non-root
  // image user), and no privilege can be gained.
  const std::map<std::string, std::string> status = StatusFields(r->output);
  constexpr uint64_t kKept = (1u << 0) | (1u << 1) | (1u << 3);
  ASSERT_TRUE(status.contains("CapBnd") && status.contains("CapEff") &&
              status.contains("NoNewPrivs"))
      << r->output;
  EXPECT_EQ(std::stoull(status.at("CapBnd"), nullptr, 16), kKept) << r->output;
  EXPECT_EQ(std::stoull(status.at("CapEff"), nullptr, 16) & ~kKept, 0u) << r->output;
  EXPECT_EQ(status.at("NoNewPrivs"), "1") << r->output;
  CommandOptions quick;
  quick.timeout = std::chrono::milliseconds(500);
  r = (*env)->Run("sleep 30", quick);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->exit_code, 124);
  r = (*env)->Run("ps -eo args | grep -c '^sleep 30' || true", {});
  EXPECT_EQ(r->output, "0\n") << "the timed-out command must not survive in the container";
}

}  // namespace
}  // namespace talaria::env
