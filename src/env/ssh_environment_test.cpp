// The SSH environment against a real sshd on a loopback port, started per test as the current
// user with throwaway host and client keys. The "remote" machine is this one, so the tests can
// look at the remote side directly (processes, files, TCP connections).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "env/ssh_command.h"
#include "talaria/base/spawn.h"
#include "talaria/base/subprocess.h"
#include "talaria/base/unique_fd.h"
#include "talaria/env/environment.h"

namespace talaria::env {
namespace {

using namespace std::chrono_literals;

// A port nobody listens on (bound, then released).
int UnusedPort() {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) return -1;
  socklen_t len = sizeof addr;
  if (::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0) return -1;
  return ntohs(addr.sin_port);
}

bool AcceptsConnections(int port) {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  return ::connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
}

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

ProcessResult RunLocal(std::vector<std::string> argv) {
  SpawnOptions spawn;
  spawn.argv = std::move(argv);
  spawn.timeout = 20s;
  auto r = RunProcess(spawn);
  EXPECT_TRUE(r) << r.error().ToString();
  return r ? *r : ProcessResult{};
}

// Whether a process whose command line matches the extended regex `pattern` runs here.
bool ProcessRunning(const std::string& pattern) {
  return RunLocal({"pgrep", "-f", pattern}).exit_code == 0;
}

std::string ReadAll(int fd) {
  std::string out;
  char buf[256];
  for (int i = 0; i < 500; ++i) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) out.append(buf, static_cast<size_t>(n));
    if (n == 0 || (n < 0 && errno == EIO)) break;  // EIO: a terminal whose other side closed
    if (n < 0) std::this_thread::sleep_for(10ms);
  }
  return out;
}

class SshEnv : public ::testing::Test {
 protected:
  void SetUp() override {
    // Short: the control socket path must fit in a sockaddr_un.
    std::string tmpl = "/tmp/tssh-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = std::filesystem::canonical(tmpl).string();
    std::filesystem::create_directories(dir_ + "/work");
    for (const char* key : {"host_key", "client_key", "other_key"}) {
      ProcessResult r =
          RunLocal({"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", dir_ + "/" + key});
      ASSERT_EQ(r.exit_code, 0) << "ssh-keygen: " << r.stderr_text << r.stdout_text;
    }
    std::filesystem::copy_file(dir_ + "/client_key.pub", dir_ + "/authorized_keys");
    port_ = UnusedPort();
    ASSERT_GT(port_, 0);
    {
      std::ofstream config(dir_ + "/sshd_config");
      config << "ListenAddress 127.0.0.1\n"
             << "Port " << port_ << "\n"
             << "HostKey " << dir_ << "/host_key\n"
             << "AuthorizedKeysFile " << dir_ << "/authorized_keys\n"
             << "PidFile " << dir_ << "/sshd.pid\n"
             << "StrictModes no\nUsePAM no\nPermitRootLogin yes\nPasswordAuthentication no\n"
             << "KbdInteractiveAuthentication no\nLogLevel ERROR\n"
             // bash sources ~/.bashrc for commands sshd starts unless SHLVL says it is nested;
             // this machine's root .bashrc (pyenv init) takes over a second.
             << "SetEnv SHLVL=1\n";
    }
    ::mkdir("/run/sshd", 0755);  // privilege separation directory
    SpawnOptions spawn;
    spawn.argv = {"/usr/sbin/sshd", "-D", "-e", "-f", dir_ + "/sshd_config"};
    auto sshd = StartProcess(spawn, {});
    ASSERT_TRUE(sshd) << "cannot start sshd: " << sshd.error().ToString();
    sshd_ = std::move(*sshd);
    bool up = false;
    for (int i = 0; i < 250 && !up; ++i) {
      up = AcceptsConnections(port_);
      if (!up) std::this_thread::sleep_for(20ms);
    }
    ASSERT_TRUE(up) << "sshd does not listen on port " << port_ << ": "
                    << ReadAll(sshd_.output.get());
    Open(Options());
  }

  void TearDown() override {
    env_.reset();
    if (sshd_.pid > 0) {
      TerminateProcessGroup(sshd_.pid, sshd_.pidfd.get(), 1s);
      siginfo_t info{};
      ::waitid(P_PID, static_cast<id_t>(sshd_.pid), &info, WEXITED);
    }
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  SshOptions Options() const {
    SshOptions o;
    o.host = "127.0.0.1";
    o.port = port_;
    o.identity_file = dir_ + "/client_key";
    o.known_hosts_file = dir_ + "/known_hosts";
    o.control_dir = dir_ + "/ctl";
    o.initial_cwd = dir_ + "/work";
    o.connect_timeout = 5s;
    return o;
  }

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

  std::string work() const { return dir_ + "/work"; }

  std::string dir_;
  int port_ = -1;
  StartedProcess sshd_;
  std::shared_ptr<Environment> env_;
};

TEST_F(SshEnv, RunsInTheInitialDirectoryMergesStderrAndReturnsTheExitCode) {
  EXPECT_EQ(env_->kind(), "ssh");
  EXPECT_EQ(env_->cwd(), work());
  CommandOutcome r = Run("pwd; echo oops >&2; echo after; exit 3");
  EXPECT_EQ(r.output, work() + "\noops\nafter\n");
  EXPECT_EQ(r.output_total_bytes, r.output.size());
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_FALSE(r.timed_out);
  // 255 is ssh's own failure code; a command exiting 255 is still an outcome.
  EXPECT_EQ(Run("echo x; exit 255").exit_code, 255);
  EXPECT_EQ(Run("true").exit_code, 0);
}

TEST_F(SshEnv, CwdAndExportsCarryOverToTheNextCommand) {
  std::filesystem::create_directories(work() + "/sub/deeper");
  Run("cd sub/deeper && export GREETING='hello world' && LOCAL_ONLY=1");
  EXPECT_EQ(env_->cwd(), work() + "/sub/deeper");
  EXPECT_EQ(Run("pwd; echo \"$GREETING\"; echo \"${LOCAL_ONLY:-unset}\"").output,
            work() + "/sub/deeper\nhello world\nunset\n");
  // A failing command (and `exit`) still saves what it changed before.
  Run("cd ..; export LEVEL=2; exit 7");
  EXPECT_EQ(env_->cwd(), work() + "/sub");
  EXPECT_EQ(Run("pwd; echo $LEVEL").output, work() + "/sub\n2\n");
}

TEST_F(SshEnv, WorkdirOverridesTheSessionDirectoryForOneCommand) {
  std::filesystem::create_directories(work() + "/other");
  CommandOptions options;
  options.workdir = work() + "/other";
  EXPECT_EQ(Run("pwd", options).output, work() + "/other\n");
}

TEST_F(SshEnv, ADeletedWorkingDirectoryFallsBackToItsNearestAncestor) {
  std::filesystem::create_directories(work() + "/gone/deep");
  Run("cd gone/deep");
  std::filesystem::remove_all(work() + "/gone");
  EXPECT_EQ(Run("pwd").output, work() + "\n");
}

TEST_F(SshEnv, CommandTextAndOutputRoundTripExactly) {
  EXPECT_EQ(Run("printf '%s\\n' \"it's \\$HOME\"").output, "it's $HOME\n");
  EXPECT_EQ(Run("echo 'single '\\''quoted'\\''' \"double \\\"quoted\\\"\" back\\\\slash").output,
            "single 'quoted' double \"quoted\" back\\slash\n");
  EXPECT_EQ(Run("echo '`not run` $(not run) ${HOME:+x}'; echo `echo ran`").output,
            "`not run` $(not run) ${HOME:+x}\nran\n");
  EXPECT_EQ(Run("echo one\necho 'two\nlines'\n\n# comment; echo no\n").output, "one\ntwo\nlines\n");
  EXPECT_EQ(Run("echo ünïcödé ✓ 日本 🚀").output, "ünïcödé ✓ 日本 🚀\n");
  EXPECT_EQ(Run("x='a;b|c&d>e' && echo \"$x\" '*' ~root/.. ; echo $((6*7))").output,
            "a;b|c&d>e * /root/..\n42\n");
  // Every byte but NUL, through the command text and back through stdout.
  std::string all_bytes;
  for (int c = 1; c < 256; ++c) all_bytes += static_cast<char>(c);
  CommandOutcome r = Run("printf '%s' " + ShellQuote(all_bytes));
  EXPECT_EQ(r.output, all_bytes);
  // And through stdin.
  CommandOptions options;
  options.stdin_data = "line 1\nit's $HOME\n" + all_bytes;
  EXPECT_EQ(Run("cat", options).output, options.stdin_data);
}

TEST_F(SshEnv, TimeoutKillsTheRemoteCommand) {
  CommandOptions options;
  options.timeout = 500ms;
  const auto t0 = std::chrono::steady_clock::now();
  CommandOutcome r = Run("echo before; sleep 31.5 & sleep 31.5; echo never", options);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 8s);
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.exit_code, 124);
  EXPECT_EQ(r.output.rfind("before\n", 0), 0u) << r.output;
  EXPECT_EQ(r.output.find("never"), std::string::npos);
  // "3[1]" matches "31" but not the pattern's own text in a command line.
  EXPECT_FALSE(ProcessRunning("sleep 3[1][.]5"));
  EXPECT_EQ(Run("pgrep -f 'sleep 3[1][.]5' || echo none").output, "none\n");
  // The session goes on.
  EXPECT_EQ(Run("pwd").output, work() + "\n");
}

TEST_F(SshEnv, WhatStillHoldsTheOutputAfterTheCommandIsKilledAsLocally) {
  // Over ssh a job holding stdout would keep the channel, and the Run, open until it exits.
  const auto t0 = std::chrono::steady_clock::now();
  CommandOutcome r = Run("sleep 35.5 & echo started");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
  EXPECT_EQ(r.output, "started\n");
  EXPECT_FALSE(ProcessRunning("sleep 3[5][.]5"));
  // A job that let go of the output is left alone.
  Run("nohup sleep 36.5 >/dev/null 2>&1 &");
  EXPECT_TRUE(ProcessRunning("sleep 3[6][.]5"));
  RunLocal({"pkill", "-f", "sleep 3[6][.]5"});
}

TEST_F(SshEnv, CancellationKillsTheRemoteCommandWith130) {
  std::stop_source stop;
  CommandOptions options;
  options.cancel = stop.get_token();
  std::thread canceller([&] {
    std::this_thread::sleep_for(500ms);
    stop.request_stop();
  });
  CommandOutcome r = Run("sleep 33.5", options);
  canceller.join();
  EXPECT_TRUE(r.cancelled);
  EXPECT_EQ(r.exit_code, 130);
  EXPECT_FALSE(ProcessRunning("sleep 3[3][.]5"));
}

TEST_F(SshEnv, HugeOutputIsBoundedHeadAndTail) {
  CommandOptions options;
  options.max_output_bytes = 1000;
  CommandOutcome r =
      Run("echo START; head -c 5000000 /dev/zero | tr '\\0' x; echo; echo END", options);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.output_total_bytes, 5'000'000u + 6 + 1 + 4);
  EXPECT_LT(r.output.size(), 1200u);
  EXPECT_EQ(r.output.rfind("START\n", 0), 0u);
  EXPECT_NE(r.output.find("[OUTPUT TRUNCATED - "), std::string::npos);
  EXPECT_EQ(r.output.substr(r.output.size() - 4), "END\n");
  // The cwd report is not part of the output and still arrives.
  EXPECT_EQ(Run("cd /; echo ok", options).output, "ok\n");
  EXPECT_EQ(env_->cwd(), "/");
}

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
  int connections = ConnectionsTo(port_);
  for (int i = 0; i < 100 && connections != 1; ++i) {
    std::this_thread::sleep_for(10ms);
    connections = ConnectionsTo(port_);
  }
  EXPECT_EQ(connections, 1);
  // The environment's end closes the master connection.
  env_.reset();
  EXPECT_NE(::stat(socket.c_str(), &st), 0);
}

TEST_F(SshEnv, StartRunsInTheBackgroundFromTheSessionState) {
  Run("export FROM_SESSION=yes; cd /");
  auto child = env_->Start("echo $FROM_SESSION; pwd; echo err >&2; export LEAK=1; cd /tmp", {}, {});
  ASSERT_TRUE(child) << child.error().ToString();
  const std::string out = ReadAll(child->output.get());
  siginfo_t info{};
  ::waitid(P_PID, static_cast<id_t>(child->pid), &info, WEXITED);
  EXPECT_EQ(out, "yes\n/\nerr\n");
  EXPECT_EQ(info.si_status, 0);
  // A background command's changes stay its own.
  EXPECT_EQ(Run("echo ${LEAK:-none}; pwd").output, "none\n/\n");
}

TEST_F(SshEnv, StartWithStdinAndATerminal) {
  StartOptions start;
  start.stdin_pipe = true;
  auto child = env_->Start("read -r line; echo \"got $line\"", {}, start);
  ASSERT_TRUE(child) << child.error().ToString();
  ASSERT_EQ(::write(child->input.get(), "hello\n", 6), 6);
  child->input.reset();
  EXPECT_EQ(ReadAll(child->output.get()), "got hello\n");
  siginfo_t info{};
  ::waitid(P_PID, static_cast<id_t>(child->pid), &info, WEXITED);

  start = {};
  start.pty = true;
  child = env_->Start("if [ -t 0 ] && [ -t 1 ]; then echo tty; else echo no-tty; fi", {}, start);
  ASSERT_TRUE(child) << child.error().ToString();
  const std::string out = ReadAll(child->output.get());
  EXPECT_NE(out.find("tty\r\n"), std::string::npos) << out;
  EXPECT_EQ(out.find("no-tty"), std::string::npos) << out;
  ::waitid(P_PID, static_cast<id_t>(child->pid), &info, WEXITED);
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
  for (int i = 0; i < 200 && !ProcessRunning("sleep 3[4][.]5"); ++i)
    std::this_thread::sleep_for(10ms);
  EXPECT_TRUE(ProcessRunning("sleep 3[4][.]5"));
  env_.reset();
  EXPECT_NE(::stat(state_dir.c_str(), &st), 0);
  EXPECT_FALSE(ProcessRunning("sleep 3[4][.]5"));
  siginfo_t info{};
  ::waitid(P_PID, static_cast<id_t>(job->pid), &info, WEXITED);
}

TEST_F(SshEnv, AClosedPortIsUnavailableQuickly) {
  SshOptions options = Options();
  options.port = UnusedPort();
  const auto t0 = std::chrono::steady_clock::now();
  auto env = OpenSsh(options);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 3s);
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
  auto env = OpenSsh(options);
  const auto elapsed = std::chrono::steady_clock::now() - t0;
  EXPECT_GE(elapsed, 900ms);
  EXPECT_LT(elapsed, 5s);
  ASSERT_FALSE(env);
  EXPECT_EQ(env.error().code(), StatusCode::kUnavailable);
  EXPECT_NE(env.error().message().find("timed out"), std::string::npos) << env.error().message();
}

TEST_F(SshEnv, AWrongKeyIsUnavailableWithSshsMessage) {
  SshOptions options = Options();
  options.identity_file = dir_ + "/other_key";
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
  TerminateProcessGroup(sshd_.pid, sshd_.pidfd.get(), 1s);
  siginfo_t info{};
  ::waitid(P_PID, static_cast<id_t>(sshd_.pid), &info, WEXITED);
  sshd_.pid = -1;
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
