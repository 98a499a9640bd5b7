// What only the SSH environment does, against a real sshd on a loopback port started per test
// (tests/support/sshd_server.h): the multiplexed connection, the remote session state, and
// connection failures. The "remote" machine is this one, so the tests look at the remote side
// directly (processes, files, TCP connections). Behaviour every backend shares is in
// src/sandboxes/environment_conformance_test.cpp.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <future>
#include <sstream>
#include <thread>
#include <vector>

#include "env/ssh_command.h"
#include "support/env_helpers.h"
#include "support/sshd_server.h"
#include "support/wait_until.h"
#include "talaria/base/spawn.h"
#include "talaria/base/subprocess.h"
#include "talaria/base/unique_fd.h"
#include "talaria/env/environment.h"

namespace talaria::env {
namespace {

using namespace std::chrono_literals;
using test_support::ProcessRunning;
using test_support::UnusedLoopbackPort;
using test_support::WaitUntil;

// Established TCP connections from this machine to 127.0.0.1:`port` (client side only).
int ConnectionsTo(int port) {
  std::ifstream in("/proc/net/tcp");
  std::string line;
  std::getline(in, line);  // header
  int count = 0;
  char port_hex[8];
  std::snprintf(port_hex, sizeof port_hex, "%04X", port);
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string slot, local, remote, state;
    fields >> slot >> local >> remote >> state;
    if (state == "01" && remote == std::string("0100007F:") + port_hex) ++count;
  }
  return count;
}

class SshEnv : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const std::string reason = test_support::SshdUnavailableReason(); !reason.empty()) {
      GTEST_SKIP() << "no sshd to test against: " << reason;
    }
    auto sshd = test_support::SshdServer::Start();
    ASSERT_TRUE(sshd) << sshd.error().ToString();
    sshd_ = std::move(*sshd);
    dir_ = sshd_->dir();
    port_ = sshd_->port();
    Open(Options());
  }

  void TearDown() override {
    env_.reset();  // before sshd: the session's end reaches the remote side
    sshd_.reset();
  }

  SshOptions Options() const { return sshd_->ClientOptions(); }

  void Open(const SshOptions& options) {
    auto env = OpenSsh(options);
    ASSERT_TRUE(env) << env.error().ToString();
    env_ = *env;
  }

  CommandOutcome Run(std::string_view command, CommandOptions options = {}) {
    auto r = env_->Run(command, options);
    EXPECT_TRUE(r) << r.error().ToString();
    return r ? *r : CommandOutcome{};
  }

  std::unique_ptr<test_support::SshdServer> sshd_;
  std::string dir_;
  int port_ = -1;
  std::shared_ptr<Environment> env_;
};

TEST_F(SshEnv, TheMultiplexedConnectionIsReused) {
  const std::string socket =
      Options().control_dir + "/" + ControlSocketName("", "127.0.0.1", port_);
  struct stat st {};
  ASSERT_EQ(::stat(socket.c_str(), &st), 0) << socket;
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(::stat(Options().control_dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(Run("true").exit_code, 0);
  // One TCP connection (the master's) carried all of them; a probe still closing may linger.
  EXPECT_TRUE(WaitUntil([&] { return ConnectionsTo(port_) == 1; }, 10s, 10ms))
      << "connections: " << ConnectionsTo(port_);
  // The environment's end closes the master connection: `ssh -O exit` asks the master to go,
  // which removes its socket as it exits, a moment after the request returns.
  env_.reset();
  EXPECT_TRUE(WaitUntil([&] { return ::stat(socket.c_str(), &st) != 0; }, 10s, 10ms))
      << "the master connection outlived the environment";
}

// sshd takes at most MaxSessions (10) channels per connection; a refused channel makes ssh fall
// back to a connection of its own (a key exchange per command, dropped by MaxStartups in a
// burst). Twelve sessions opened at once, each running a command while all the others run
// theirs, all open and run, on two masters.
TEST_F(SshEnv, SessionsBeyondOneConnectionsChannelsAllRunAtOnce) {
  constexpr int kSessions = 12;
  std::vector<std::future<Result<std::shared_ptr<Environment>>>> opening;
  for (int i = 0; i < kSessions; ++i) {
    opening.push_back(std::async(std::launch::async, [this] { return OpenSsh(Options()); }));
  }
  std::vector<std::shared_ptr<Environment>> envs;
  for (auto& f : opening) {
    auto env = f.get();
    ASSERT_TRUE(env) << env.error().ToString();  // no burst of masters for MaxStartups to drop
    envs.push_back(*env);
  }
  const std::string barrier = dir_ + "/barrier";
  std::filesystem::create_directories(barrier);
  // Each command marks itself and waits (20 s at most) until every one has: they overlap.
  std::vector<std::future<Result<CommandOutcome>>> running;
  for (int i = 0; i < kSessions; ++i) {
    const std::string command = "touch " + barrier + "/" + std::to_string(i) +
                                "; n=0; while [ $(ls " + barrier +
                                " | wc -l) -lt 12 ] && [ $n -lt 200 ]; do sleep 0.1; n=$((n+1)); "
                                "done; ls " +
                                barrier + " | wc -l";
    running.push_back(std::async(std::launch::async, [&envs, i, command] {
      return envs[static_cast<size_t>(i)]->Run(command, {});
    }));
  }
  for (auto& f : running) {
    auto r = f.get();
    ASSERT_TRUE(r) << r.error().ToString();
    EXPECT_EQ(r->exit_code, 0) << r->output;
    EXPECT_EQ(r->output, "12\n");
  }
  // Two masters: 8 sessions on the first, 4 on a second.
  EXPECT_EQ(ConnectionsTo(port_), 2);
}

TEST_F(SshEnv, TheSessionsEndRemovesItsRemoteStateAndStopsItsJobs) {
  const std::string state = Run("echo \"$__t_dir\"").output;  // the wrapper's variable
  ASSERT_GT(state.size(), 1u);
  const std::string state_dir = state.substr(0, state.size() - 1);
  struct stat st {};
  ASSERT_EQ(::stat(state_dir.c_str(), &st), 0) << state_dir;
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  auto job = env_->Start("sleep 34.5", {}, {});
  ASSERT_TRUE(job) << job.error().ToString();
  // Anchored: the local ssh client's command line holds "sleep 34.5" from the spawn on, before
  // the remote sleep runs.
  EXPECT_TRUE(WaitUntil([] { return ProcessRunning("^sleep 3[4][.]5"); }, 10s, 10ms));
  env_.reset();
  EXPECT_NE(::stat(state_dir.c_str(), &st), 0);
  EXPECT_FALSE(ProcessRunning("sleep 3[4][.]5"));
  siginfo_t info{};
  ::waitid(P_PID, static_cast<id_t>(job->pid), &info, WEXITED);
}

// Refused, not timed out: the refusal is reported as it comes.
TEST_F(SshEnv, AClosedPortIsUnavailableAsRefused) {
  SshOptions options = Options();
  options.port = UnusedLoopbackPort();
  auto env = OpenSsh(options);
  ASSERT_FALSE(env);
  EXPECT_EQ(env.error().code(), StatusCode::kUnavailable);
  EXPECT_NE(env.error().message().find("Connection refused"), std::string::npos)
      << env.error().message();
}

TEST_F(SshEnv, ConnectTimeoutIsHonoured) {
  // A listener that never answers: TCP connects, the SSH banner never comes.
  UniqueFd silent(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(silent.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(silent.get(), 8), 0);
  socklen_t len = sizeof addr;
  ASSERT_EQ(::getsockname(silent.get(), reinterpret_cast<sockaddr*>(&addr), &len), 0);
  SshOptions options = Options();
  options.port = ntohs(addr.sin_port);
  options.connect_timeout = 1s;
  const auto t0 = std::chrono::steady_clock::now();
  // Without the timeout ssh would wait for the banner forever: give it 10 s, then close the
  // listener (which resets the connection) so the test fails instead of hanging.
  auto opening = std::async(std::launch::async, [&options] { return OpenSsh(options); });
  const bool honoured = opening.wait_for(10s) == std::future_status::ready;
  if (!honoured) silent.reset();
  auto env = opening.get();
  ASSERT_TRUE(honoured) << "the connect timeout was not honoured";
  EXPECT_GE(std::chrono::steady_clock::now() - t0, 900ms);
  ASSERT_FALSE(env);
  EXPECT_EQ(env.error().code(), StatusCode::kUnavailable);
  EXPECT_NE(env.error().message().find("timed out"), std::string::npos) << env.error().message();
}

TEST_F(SshEnv, AWrongKeyIsUnavailableWithSshsMessage) {
  SshOptions options = Options();
  options.identity_file = sshd_->other_key();
  options.control_dir = dir_ + "/ctl2";  // not the working master of the fixture's session
  auto env = OpenSsh(options);
  ASSERT_FALSE(env);
  EXPECT_EQ(env.error().code(), StatusCode::kUnavailable);
  EXPECT_NE(env.error().message().find("Permission denied"), std::string::npos)
      << env.error().message();
}

TEST_F(SshEnv, AMissingInitialDirectoryIsNotFound) {
  SshOptions options = Options();
  options.initial_cwd = dir_ + "/no/such/dir";
  auto env = OpenSsh(options);
  ASSERT_FALSE(env);
  EXPECT_EQ(env.error().code(), StatusCode::kNotFound) << env.error().ToString();
}

TEST_F(SshEnv, NoSshClientIsNotFound) {
  const std::string path = std::getenv("PATH");
  ::setenv("PATH", (dir_ + "/work").c_str(), 1);
  auto env = OpenSsh(Options());
  ::setenv("PATH", path.c_str(), 1);
  ASSERT_FALSE(env);
  EXPECT_EQ(env.error().code(), StatusCode::kNotFound);
}

TEST_F(SshEnv, ALostConnectionIsUnavailable) {
  const std::string state = Run("echo \"$__t_dir\"").output;  // the wrapper's variable
  ASSERT_GT(state.size(), 1u);
  // sshd and the master gone: the next command cannot connect.
  sshd_->Stop();
  SpawnOptions exit;
  exit.argv = {
      "ssh",
      "-o",
      "ControlPath=" + Options().control_dir + "/" + ControlSocketName("", "127.0.0.1", port_),
      "-O",
      "exit",
      "127.0.0.1"};
  ASSERT_TRUE(RunProcess(exit));
  auto r = env_->Run("echo hi", {});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), StatusCode::kUnavailable);
  EXPECT_NE(r.error().message().find("Connection refused"), std::string::npos)
      << r.error().message();
  // The session's end cannot reach the remote side either; clean up for it.
  env_.reset();
  std::filesystem::remove_all(state.substr(0, state.size() - 1));
}

}  // namespace
}  // namespace talaria::env
