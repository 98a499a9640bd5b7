// The `terminal` section of config.yaml.
#include <gtest/gtest.h>

#include "talaria/core/config.h"
#include "talaria/tools/session.h"

namespace talaria::tools {
namespace {

Result<SessionOptions> FromYaml(std::string_view yaml) {
  auto config = ParseConfig(yaml);
  if (!config) return Err(config.error());
  return SessionOptionsFromConfig(*config);
}

// The sandbox where it works (auto), with the network its backend defaults to (unset), and
// hard-linked files not read.
TEST(SessionConfig, DefaultsToTheSandboxWhereItWorks) {
  auto o = FromYaml("");
  ASSERT_TRUE(o);
  EXPECT_EQ(o->terminal.backend, "auto");
  EXPECT_FALSE(o->terminal.network.has_value());
  EXPECT_EQ(o->terminal.tmp_size_mb, 512u);
  EXPECT_TRUE(o->env_passthrough.empty());
  EXPECT_EQ(o->hard_link_reads, safety::HardLinkReads::kRefuse);
  auto local = FromYaml(
      "terminal: {backend: local, network: false, tmp_size_mb: 64}\nfiles: {read_hard_links: "
      "true}\n");
  ASSERT_TRUE(local);
  EXPECT_EQ(local->terminal.backend, "local");
  EXPECT_EQ(local->terminal.network, false);
  EXPECT_EQ(local->terminal.tmp_size_mb, 64u);
  EXPECT_EQ(local->hard_link_reads, safety::HardLinkReads::kAllow);
  EXPECT_FALSE(FromYaml("terminal: {backend: sandboxed}\n"));
  EXPECT_FALSE(FromYaml("files: {read_hard_links: maybe}\n"));
}

TEST(SessionConfig, ReadsEveryKey) {
  auto o = FromYaml(
      "terminal:\n"
      "  backend: ssh\n"
      "  env_passthrough: [GH_TOKEN]\n"
      "  network: true\n"
      "  ssh: {host: build1, port: 2222, user: ci, identity_file: /k, cwd: /srv}\n"
      "  docker: {image: 'alpine:3', forward_env: [LANG]}\n");
  ASSERT_TRUE(o) << o.error().ToString();
  EXPECT_EQ(o->terminal.backend, "ssh");
  EXPECT_EQ(o->env_passthrough, std::vector<std::string>{"GH_TOKEN"});
  EXPECT_EQ(o->terminal.network, true);
  EXPECT_EQ(o->terminal.ssh_host, "build1");
  EXPECT_EQ(o->terminal.ssh_port, 2222);
  EXPECT_EQ(o->terminal.ssh_user, "ci");
  EXPECT_EQ(o->terminal.ssh_identity_file, "/k");
  EXPECT_EQ(o->terminal.ssh_cwd, "/srv");
  EXPECT_EQ(o->terminal.docker_image, "alpine:3");
  EXPECT_EQ(o->terminal.docker_forward_env, std::vector<std::string>{"LANG"});
}

TEST(SessionConfig, ReadsTheApptainerAndPoolBackends) {
  auto o = FromYaml(
      "terminal:\n"
      "  backend: pool\n"
      "  apptainer: {image: 'docker://python:3.11-slim', program: singularity}\n"
      "  pool: {hosts: ['ci@build1:2222', build2], health_interval_s: 30}\n");
  ASSERT_TRUE(o) << o.error().ToString();
  EXPECT_EQ(o->terminal.backend, "pool");
  EXPECT_EQ(o->terminal.apptainer_image, "docker://python:3.11-slim");
  EXPECT_EQ(o->terminal.apptainer_program, "singularity");
  EXPECT_EQ(o->terminal.pool_hosts, (std::vector<std::string>{"ci@build1:2222", "build2"}));
  EXPECT_EQ(o->terminal.pool_health_interval_s, 30);
  EXPECT_TRUE(FromYaml("terminal: {backend: apptainer}\n"));
}

TEST(SessionConfig, BadValuesNameTheKey) {
  const std::pair<const char*, const char*> cases[] = {
      {"terminal: [1]\n", "terminal must be a mapping"},
      {"terminal: {backend: chroot}\n", "terminal.backend"},
      {"terminal: {network: maybe}\n", "terminal.network"},
      {"terminal: {env_passthrough: GH_TOKEN}\n", "terminal.env_passthrough"},
      {"terminal: {backend: ssh}\n", "terminal.ssh.host"},
      {"terminal: {ssh: {host: h, port: 70000}}\n", "terminal.ssh.port"},
      {"terminal: {backend: pool}\n", "terminal.pool.hosts"},
      {"terminal: {pool: {health_interval_s: 0}}\n", "terminal.pool.health_interval_s"},
  };
  for (const auto& [yaml, key] : cases) {
    auto o = FromYaml(yaml);
    ASSERT_FALSE(o) << yaml;
    EXPECT_NE(o.error().message().find(key), std::string::npos) << o.error().message();
  }
}

}  // namespace
}  // namespace talaria::tools
