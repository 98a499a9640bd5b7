// One behaviour, every backend: the same tests against the local environment, the bubblewrap
// sandbox (when bwrap works here), SSH to a real sshd on a loopback port, Docker on a real
// dockerd of the test's own (tests/support; `ctest -L docker`, which needs root), Apptainer
// (the real program where installed, else the stand-in on bubblewrap in tests/support) and the
// sandbox services (Modal's gateway, Daytona, E2B, Kubernetes agent-sandbox) against the fake
// control plane of tests/support, whose sandboxes are bubblewrap jails on this machine. The
// suite lives in the sandboxes module, the lowest that sees every backend.
// What only one backend does (the scrubbed local environment, the sandbox's walls, the ssh
// connection's life, a service's sandbox and file transfer) is tested in that backend's own file.
//
// Every backend's commands are processes on this machine (the ssh "remote" is loopback; the
// host sees into the sandbox's and the containers' PID namespaces; the services' jails share
// its PID namespace), so "nothing is left running" is checked with pgrep here. Each test's
// `sleep` has a duration of its own per backend (UniqueSleep), so tests running in parallel
// never see each other's processes.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <ostream>
#include <string>
#include <thread>

#include "support/apptainer_support.h"
#include "support/dockerd_server.h"
#include "support/env_helpers.h"
#include "support/sandbox_control_plane.h"
#include "support/sshd_server.h"
#include "support/wait_until.h"
#include "talaria/base/file_io.h"
#include "talaria/base/shell_words.h"
#include "talaria/base/spawn.h"
#include "talaria/env/environment.h"
#include "talaria/sandboxes/sandboxes.h"

namespace talaria::env {
namespace {

using namespace std::chrono_literals;
using test_support::NoProcessWithin;
using test_support::ProcessRunning;
using test_support::ReadUntilEof;
using test_support::WaitUntil;

enum class Backend {
  kLocal,
  kSandbox,
  kSsh,
  kDocker,
  kApptainer,
  kModal,
  kDaytona,
  kE2b,
  kKubernetes
};

// A sandbox service (through the fake control plane): JSON carries its commands and output.
bool IsService(Backend backend) {
  return backend == Backend::kModal || backend == Backend::kDaytona || backend == Backend::kE2b ||
         backend == Backend::kKubernetes;
}

std::string BackendName(Backend backend) {
  switch (backend) {
    case Backend::kLocal:
      return "local";
    case Backend::kSandbox:
      return "bwrap";
    case Backend::kSsh:
      return "ssh";
    case Backend::kDocker:
      return "docker";
    case Backend::kApptainer:
      return "apptainer";
    case Backend::kModal:
      return "modal";
    case Backend::kDaytona:
      return "daytona";
    case Backend::kE2b:
      return "e2b";
    case Backend::kKubernetes:
      return "kubernetes";
  }
  return "unknown";
}

// Test names and messages show the backend's name rather than the enum's bytes.
void PrintTo(Backend backend, std::ostream* os) { *os << BackendName(backend); }

// A `sleep` command line no other test or backend runs, and a pgrep pattern matching it but not
// the pattern's own text.
struct Sleeper {
  std::string command;
  std::string pattern;
};

// Everything `fd` gives until end of file, for at most 30 s (ReadUntilEof stops at 128 KB).
std::string ReadWholeOutput(int fd) {
  std::string out;
  char buf[65536];
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) out.append(buf, static_cast<size_t>(n));
    if (n == 0 || (n < 0 && errno == EIO)) break;
    if (n < 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return out;
}

std::string HexOf(std::string_view bytes) {
  std::string hex;
  char buf[3];
  for (const unsigned char c : bytes) {
    std::snprintf(buf, sizeof buf, "%02x", c);
    hex += buf;
  }
  return hex;
}

class EnvironmentConformance : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    switch (GetParam()) {
      case Backend::kLocal: {
        std::string tmpl = (std::filesystem::temp_directory_path() / "talaria-env-XXXXXX").string();
        ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
        scratch_ = std::filesystem::canonical(tmpl).string();
        work_ = scratch_;
        LocalOptions options;
        options.initial_cwd = work_;
        auto env = OpenLocal(options);
        ASSERT_TRUE(env) << env.error().ToString();
        env_ = *env;
        break;
      }
      case Backend::kSandbox: {
        scratch_ = test_support::MakeScratchOutsideTmp(TALARIA_BINARY_DIR, "talaria-sandbox");
        ASSERT_FALSE(scratch_.empty()) << "no writable directory outside /tmp and /var/tmp";
        work_ = scratch_ + "/ws";
        std::filesystem::create_directories(work_);
        SandboxOptions options;
        options.local.initial_cwd = work_;
        options.writable = {work_};
        auto env = OpenSandbox(options);
        if (!env && (env.error().code() == StatusCode::kNotFound ||
                     env.error().code() == StatusCode::kFailedPrecondition)) {
          GTEST_SKIP() << "bwrap does not work here: " << env.error().ToString();
        }
        ASSERT_TRUE(env) << env.error().ToString();
        env_ = *env;
        break;
      }
      case Backend::kSsh: {
        if (const std::string reason = test_support::SshdUnavailableReason(); !reason.empty()) {
          GTEST_SKIP() << "no sshd to test against: " << reason;
        }
        auto sshd = test_support::SshdServer::Start();
        ASSERT_TRUE(sshd) << sshd.error().ToString();
        sshd_ = std::move(*sshd);
        work_ = sshd_->work_dir();
        auto env = OpenSsh(sshd_->ClientOptions());
        ASSERT_TRUE(env) << env.error().ToString();
        env_ = *env;
        break;
      }
      case Backend::kDocker: {
        if (const std::string reason = test_support::DockerdUnavailableReason(); !reason.empty()) {
          GTEST_SKIP() << "no Docker engine to test against: " << reason;
        }
        auto dockerd = test_support::SharedDockerd();
        if (!dockerd) GTEST_SKIP() << "dockerd cannot start here: " << dockerd.error().ToString();
        // The workspace is bind-mounted at its own path, so the host's view (what the tests
        // create and check) and the container's are the same directory.
        scratch_ = test_support::MakeScratchOutsideTmp(TALARIA_BINARY_DIR, "talaria-docker");
        ASSERT_FALSE(scratch_.empty()) << "no writable directory outside /tmp and /var/tmp";
        work_ = scratch_;
        DockerOptions options = (*dockerd)->ClientOptions();
        options.mounts = {scratch_ + ":" + scratch_};
        options.initial_cwd = scratch_;
        auto env = OpenDocker(options);
        ASSERT_TRUE(env) << env.error().ToString();
        env_ = *env;
        break;
      }
      case Backend::kApptainer: {
        const test_support::ApptainerForTests apptainer = test_support::FindApptainerForTests();
        if (apptainer.program.empty()) GTEST_SKIP() << apptainer.skip_reason;
        scratch_ = test_support::MakeScratchOutsideTmp(TALARIA_BINARY_DIR, "talaria-apptainer");
        ASSERT_FALSE(scratch_.empty()) << "no writable directory outside /tmp and /var/tmp";
        work_ = scratch_ + "/ws";
        std::filesystem::create_directories(work_);
        ApptainerOptions options;
        options.program = apptainer.program;
        options.cache_dir = scratch_ + "/cache";
        options.binds = {work_ + ":" + work_};
        options.initial_cwd = work_;
        auto env = OpenApptainer(options);
        ASSERT_TRUE(env) << env.error().ToString();
        env_ = *env;
        break;
      }
      case Backend::kModal:
      case Backend::kDaytona:
      case Backend::kE2b:
      case Backend::kKubernetes: {
        scratch_ = test_support::MakeScratchOutsideTmp(TALARIA_BINARY_DIR, "talaria-sbx");
        ASSERT_FALSE(scratch_.empty()) << "no writable directory outside /tmp and /var/tmp";
        work_ = scratch_ + "/ws";
        std::filesystem::create_directories(work_);
        test_support::SandboxControlPlaneOptions fake;
        fake.root = scratch_;
        fake.workspace = work_;
        plane_ = test_support::SandboxControlPlane::Start(fake);
        sandboxes::SandboxServiceOptions options;
        options.kind = BackendName(GetParam());
        options.base_url = plane_->url();
        options.api_key = "test-key";
        if (options.kind == "e2b" || options.kind == "kubernetes") {
          options.data_plane_url = plane_->url();
        }
        options.initial_cwd = work_;
        options.request_timeout = 30s;
        auto env = sandboxes::OpenSandboxService(options);
        ASSERT_TRUE(env) << env.error().ToString();
        env_ = *env;
        break;
      }
    }
  }

  void TearDown() override {
    env_.reset();  // before sshd and the plane: the session's end reaches the far side
    sshd_.reset();
    plane_.reset();
    if (!scratch_.empty()) {
      std::error_code ec;
      std::filesystem::remove_all(scratch_, ec);
    }
  }

  CommandOutcome Run(std::string_view command, CommandOptions options = {}) {
    auto r = env_->Run(command, options);
    EXPECT_TRUE(r) << r.error().ToString();
    return r ? *r : CommandOutcome{};
  }

  // `test` (1-99) tells the tests apart, the fraction the backends.
  Sleeper UniqueSleep(int test) const {
    const std::string seconds = std::to_string(100 + test);
    const std::string fraction = std::to_string(static_cast<int>(GetParam()) + 1) + "7";
    return {"sleep " + seconds + "." + fraction, "sleep " + seconds + "[.]" + fraction};
  }

  const std::string& work() const { return work_; }
  bool service() const { return IsService(GetParam()); }

  std::string scratch_;  // removed at the end; empty for ssh (the server removes its own)
  std::string work_;     // where the session starts
  std::unique_ptr<test_support::SshdServer> sshd_;
  std::unique_ptr<test_support::SandboxControlPlane> plane_;
  std::shared_ptr<Environment> env_;
};

TEST_P(EnvironmentConformance, RunsInTheInitialDirectoryMergesStderrAndReturnsTheExitCode) {
  EXPECT_EQ(env_->kind(), BackendName(GetParam()));
  EXPECT_EQ(env_->cwd(), work());
  CommandOutcome r = Run("pwd; echo oops >&2; echo after; exit 3");
  EXPECT_EQ(r.output, work() + "\noops\nafter\n");
  EXPECT_EQ(r.output_total_bytes, r.output.size());
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_FALSE(r.timed_out);
  EXPECT_FALSE(r.cancelled);
  // 255 is ssh's own failure code; a command exiting 255 is still an outcome.
  EXPECT_EQ(Run("echo x; exit 255").exit_code, 255);
  EXPECT_EQ(Run("true").exit_code, 0);
  EXPECT_EQ(Run("printf 'no newline'").output, "no newline");
  if (service()) {
    EXPECT_TRUE(env_->RunsScriptsRemotely());
  }
}

TEST_P(EnvironmentConformance, CwdAndExportsCarryOverToTheNextCommand) {
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

TEST_P(EnvironmentConformance, WorkdirOverridesTheSessionDirectoryForOneCommand) {
  std::filesystem::create_directories(work() + "/other/sub");
  CommandOptions options;
  options.workdir = work() + "/other";
  // The session's first command: no cwd has been saved yet.
  EXPECT_EQ(Run("pwd", options).output, work() + "/other\n");
  EXPECT_EQ(env_->cwd(), work());
  EXPECT_EQ(Run("pwd").output, work() + "\n");
  // Its exports carry over all the same.
  Run("export FROM_WORKDIR=yes", options);
  EXPECT_EQ(Run("pwd; echo $FROM_WORKDIR").output, work() + "\nyes\n");
  // A cd of its own does move the session.
  EXPECT_EQ(Run("cd sub && pwd", options).output, work() + "/other/sub\n");
  EXPECT_EQ(env_->cwd(), work() + "/other/sub");
  EXPECT_EQ(Run("pwd").output, work() + "/other/sub\n");
  // A workdir that is the session's own directory changes nothing either.
  options.workdir = work() + "/other/sub";
  EXPECT_EQ(Run("pwd", options).output, work() + "/other/sub\n");
  EXPECT_EQ(env_->cwd(), work() + "/other/sub");
}

TEST_P(EnvironmentConformance, ADeletedWorkingDirectoryFallsBackToItsNearestAncestor) {
  std::filesystem::create_directories(work() + "/gone/deep");
  Run("cd gone/deep");
  std::filesystem::remove_all(work() + "/gone");
  EXPECT_EQ(Run("pwd").output, work() + "\n");
}

TEST_P(EnvironmentConformance, CommandTextAndOutputRoundTripExactly) {
  EXPECT_EQ(Run("printf '%s\\n' \"it's \\$HOME\"").output, "it's $HOME\n");
  EXPECT_EQ(Run("echo 'single '\\''quoted'\\''' \"double \\\"quoted\\\"\" back\\\\slash").output,
            "single 'quoted' double \"quoted\" back\\slash\n");
  EXPECT_EQ(Run("echo '`not run` $(not run) ${HOME:+x}'; echo `echo ran`").output,
            "`not run` $(not run) ${HOME:+x}\nran\n");
  EXPECT_EQ(Run("echo one\necho 'two\nlines'\n\n# comment; echo no\n").output, "one\ntwo\nlines\n");
  EXPECT_EQ(Run("echo ünïcödé ✓ 日本 🚀").output, "ünïcödé ✓ 日本 🚀\n");
  EXPECT_EQ(Run("x='a;b|c&d>e' && echo \"$x\" '*' ~root/.. ; echo $((6*7))").output,
            "a;b|c&d>e * /root/..\n42\n");
  // A command printing the cwd marker's prefix does not confuse the cwd report.
  EXPECT_EQ(Run("echo __TALARIA_CWD_; cd /").output, "__TALARIA_CWD_\n");
  EXPECT_EQ(env_->cwd(), "/");
  Run("cd " + ShellQuote(work()));
  // Every byte but NUL, through the command text and back through stdout. The services carry
  // JSON text, so bytes that are not UTF-8 come back replaced: there they are checked through
  // their hex dump.
  std::string all_bytes;
  for (int c = 1; c < 256; ++c) all_bytes += static_cast<char>(c);
  if (service()) {
    EXPECT_EQ(
        Run("printf '%s' " + ShellQuote(all_bytes) + " | od -An -v -tx1 | tr -d ' \\n'").output,
        HexOf(all_bytes));
  } else {
    EXPECT_EQ(Run("printf '%s' " + ShellQuote(all_bytes)).output, all_bytes);
  }
  // And through stdin.
  CommandOptions options;
  options.stdin_data = "line 1\nit's $HOME\n" + all_bytes;
  if (service()) {
    EXPECT_EQ(Run("od -An -v -tx1 | tr -d ' \\n'", options).output, HexOf(options.stdin_data));
  } else {
    EXPECT_EQ(Run("cat", options).output, options.stdin_data);
  }
}

TEST_P(EnvironmentConformance, TimeoutKillsTheWholeGroupAndKeepsPartialOutput) {
  const Sleeper sleeper = UniqueSleep(1);
  // "before" must be printed before the deadline, so the deadline leaves room for what a
  // command takes to start here and now (an HTTP call and a jail's start for a service, a
  // `docker exec` that a loaded dockerd makes slow): a few times what `true` just took.
  const auto started = std::chrono::steady_clock::now();
  Run("true");
  const auto start_cost = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - started);
  CommandOptions options;
  options.timeout = 500ms + 4 * start_cost;
  CommandOutcome r =
      Run("echo before; " + sleeper.command + " & " + sleeper.command + "; echo never", options);
  EXPECT_TRUE(r.timed_out);
  EXPECT_FALSE(r.cancelled);
  EXPECT_EQ(r.exit_code, 124);
  EXPECT_EQ(r.output.rfind("before\n", 0), 0u) << r.output;  // bash may add "Terminated"
  EXPECT_EQ(r.output.find("never"), std::string::npos);
  // Both sleeps, the one in the background too.
  EXPECT_TRUE(NoProcessWithin(sleeper.pattern, 10s));
  EXPECT_EQ(Run("pgrep -f '" + sleeper.pattern + "' || echo none").output, "none\n");
  // The session goes on.
  EXPECT_EQ(Run("pwd").output, work() + "\n");
}

// Waiting for the holder to let go of the output instead would put "late" into it.
TEST_P(EnvironmentConformance, WhatStillHoldsTheOutputWhenTheCommandEndsIsKilled) {
  const Sleeper holder = UniqueSleep(2);
  CommandOutcome r = Run("{ " + holder.command + "; echo late; } & echo started");
  EXPECT_EQ(r.output, "started\n");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(NoProcessWithin(holder.pattern, 10s));
  // A job that let go of the output is left alone, except in the sandbox, whose PID namespace
  // (and everything in it) ends with the command. (A container's or an instance's ends with
  // the session.) What a service's exec leaves behind is the service's affair.
  if (service()) return;
  const Sleeper detached = UniqueSleep(3);
  Run("nohup " + detached.command + " >/dev/null 2>&1 &");
  if (GetParam() == Backend::kSandbox) {
    EXPECT_TRUE(NoProcessWithin(detached.pattern, 10s));
  } else {
    EXPECT_TRUE(ProcessRunning(detached.pattern));
  }
  SpawnOptions pkill;
  pkill.argv = {"pkill", "-f", detached.pattern};
  (void)RunProcess(pkill);
}

TEST_P(EnvironmentConformance, CancellationKillsTheCommandWith130) {
  const Sleeper sleeper = UniqueSleep(4);
  std::stop_source stop;
  CommandOptions options;
  options.cancel = stop.get_token();
  // Cancels once the sleep runs (it takes 100 s: only the cancel ends it sooner). Anchored: the
  // wrapping shell's and bwrap's command lines hold the pattern too, from the spawn on.
  std::thread canceller([&] {
    WaitUntil([&] { return ProcessRunning("^" + sleeper.pattern); }, 20s, 10ms);
    stop.request_stop();
  });
  CommandOutcome r = Run("echo before; " + sleeper.command + " & " + sleeper.command, options);
  canceller.join();
  EXPECT_TRUE(r.cancelled);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 130);
  EXPECT_EQ(r.output.rfind("before\n", 0), 0u) << r.output;
  EXPECT_TRUE(NoProcessWithin(sleeper.pattern, 10s));
  EXPECT_EQ(Run("echo still here").output, "still here\n");
}

TEST_P(EnvironmentConformance, HugeOutputIsBoundedHeadAndTail) {
  // Less over ssh, where every byte crosses the (encrypted) channel, and through the services'
  // JSON.
  const size_t bytes = GetParam() == Backend::kSsh || service() ? 5'000'000 : 50'000'000;
  CommandOptions options;
  options.max_output_bytes = 1000;
  CommandOutcome r = Run(
      "echo START; head -c " + std::to_string(bytes) + " /dev/zero | tr '\\0' x; echo; echo END",
      options);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.output_total_bytes, bytes + 6 + 1 + 4);
  EXPECT_LT(r.output.size(), 1200u);
  EXPECT_EQ(r.output.rfind("START\n", 0), 0u);
  EXPECT_NE(r.output.find("[OUTPUT TRUNCATED - "), std::string::npos);
  EXPECT_EQ(r.output.substr(r.output.size() - 4), "END\n");
  // The new cwd still arrives, and is not part of the output.
  EXPECT_EQ(Run("cd /; echo ok", options).output, "ok\n");
  EXPECT_EQ(env_->cwd(), "/");
}

TEST_P(EnvironmentConformance, StartRunsInTheBackgroundFromTheSessionState) {
  Run("export FROM_SESSION=yes; cd /");
  auto child = env_->Start("echo $FROM_SESSION; pwd; echo err >&2; export LEAK=1; cd /tmp", {}, {});
  ASSERT_TRUE(child) << child.error().ToString();
  const std::string out = ReadUntilEof(child->output.get());
  siginfo_t info{};
  ::waitid(P_PID, static_cast<id_t>(child->pid), &info, WEXITED);
  EXPECT_EQ(out, "yes\n/\nerr\n");
  EXPECT_EQ(info.si_code, CLD_EXITED);
  EXPECT_EQ(info.si_status, 0);
  // A background command's changes stay its own.
  EXPECT_EQ(Run("echo ${LEAK:-none}; pwd").output, "none\n/\n");
}

TEST_P(EnvironmentConformance, AStartedProcessesBytesAndExitCodeComeBackWhole) {
  // Bytes that are no UTF-8 (and, from a service, more than one poll's worth) survive.
  auto child = env_->Start(
      "printf 'a\\377b\\000c\\n'; head -c 600000 /dev/zero | tr '\\0' x; echo; exit 7", {}, {});
  ASSERT_TRUE(child) << child.error().ToString();
  const std::string out = ReadWholeOutput(child->output.get());
  siginfo_t info{};
  ::waitid(P_PID, static_cast<id_t>(child->pid), &info, WEXITED);
  EXPECT_EQ(out.substr(0, 6), std::string("a\377b\0c\n", 6));
  EXPECT_EQ(out.size(), 6u + 600000u + 1u);
  EXPECT_EQ(out.find_first_not_of('x', 6), 6u + 600000u);
  EXPECT_EQ(info.si_code, CLD_EXITED);
  EXPECT_EQ(info.si_status, 7);
}

TEST_P(EnvironmentConformance, StartedProcessRunsOnWhileTheSessionGoesOn) {
  const Sleeper sleeper = UniqueSleep(5);
  auto child = env_->Start("echo ready; " + sleeper.command + "; echo done", {}, {});
  ASSERT_TRUE(child) << child.error().ToString();
  // Its first output arrives while it still runs (a Start that waited for the command would
  // find it ended, below).
  std::string out;
  char buf[64];
  for (int i = 0; i < 1000 && out.find('\n') == std::string::npos; ++i) {
    const ssize_t n = ::read(child->output.get(), buf, sizeof buf);
    if (n > 0) out.append(buf, static_cast<size_t>(n));
    if (n <= 0) std::this_thread::sleep_for(10ms);
  }
  EXPECT_EQ(out, "ready\n");
  EXPECT_TRUE(WaitUntil([&] { return ProcessRunning(sleeper.pattern); }, 10s, 10ms));
  siginfo_t info{};
  EXPECT_EQ(::waitid(P_PID, static_cast<id_t>(child->pid), &info, WEXITED | WNOHANG), 0);
  EXPECT_EQ(info.si_pid, 0) << "the started process ended early";
  // Foreground commands run meanwhile.
  EXPECT_EQ(Run("echo meanwhile").output, "meanwhile\n");
  // Its owner ends its group; the session's end stops what it left on the far side. A service's
  // job goes with its local stand-in already.
  EXPECT_TRUE(TerminateProcessGroup(child->pid, child->pidfd.get(), 1s));
  ::waitid(P_PID, static_cast<id_t>(child->pid), &info, WEXITED);
  if (service()) {
    EXPECT_TRUE(NoProcessWithin(sleeper.pattern, 10s));
  }
  env_.reset();
  EXPECT_TRUE(NoProcessWithin(sleeper.pattern, 10s));
}

// Input arrives while the process runs (it answers each line before the next is written),
// in any bytes, and closing it gives end of file.
TEST_P(EnvironmentConformance, StartWithStdin) {
  StartOptions start;
  start.stdin_pipe = true;
  auto child = env_->Start("while read -r line; do echo \"got $line\"; done; echo eof", {}, start);
  ASSERT_TRUE(child) << child.error().ToString();
  std::string out;
  const auto read_until = [&](std::string_view want) {
    char buf[256];
    return WaitUntil(
        [&] {
          const ssize_t n = ::read(child->output.get(), buf, sizeof buf);
          if (n > 0) out.append(buf, static_cast<size_t>(n));
          return out.find(want) != std::string::npos;
        },
        30s, 5ms);
  };
  ASSERT_EQ(::write(child->input.get(), "hello\n", 6), 6);
  EXPECT_TRUE(read_until("got hello\n")) << out;
  ASSERT_EQ(::write(child->input.get(), "second\n", 7), 7);
  EXPECT_TRUE(read_until("got second\n")) << out;
  child->input.reset();
  EXPECT_TRUE(read_until("eof\n")) << out;
  siginfo_t info{};
  ::waitid(P_PID, static_cast<id_t>(child->pid), &info, WEXITED);
  EXPECT_EQ(info.si_status, 0);
  EXPECT_EQ(out, "got hello\ngot second\neof\n");

  // Bytes that are no UTF-8, more than one forwarded chunk of them, come through whole.
  std::string bytes;
  for (int i = 0; i < 120000; ++i) bytes += static_cast<char>(i % 256);
  child = env_->Start("od -An -v -tx1 | tr -d ' \\n'", {}, start);
  ASSERT_TRUE(child) << child.error().ToString();
  std::thread writer([&] {
    WriteWait wait;
    wait.deadline = std::chrono::steady_clock::now() + 60s;
    EXPECT_TRUE(WriteAllUntil(child->input.get(), bytes, wait).ok());
    child->input.reset();
  });
  const std::string hex = ReadWholeOutput(child->output.get());
  writer.join();
  ::waitid(P_PID, static_cast<id_t>(child->pid), &info, WEXITED);
  EXPECT_EQ(hex, HexOf(bytes));
}

TEST_P(EnvironmentConformance, StartWithATerminal) {
  if (service()) GTEST_SKIP() << "a service's background job gets no terminal";
  StartOptions start;
  start.pty = true;
  auto child =
      env_->Start("if [ -t 0 ] && [ -t 1 ]; then echo tty; else echo no-tty; fi", {}, start);
  ASSERT_TRUE(child) << child.error().ToString();
  const std::string out = ReadUntilEof(child->output.get());
  // "tty" on a line of its own; the line ends in \r\n or \n depending on which of the local and
  // remote terminals translated it (seen both ways over ssh -tt with a shared master).
  EXPECT_TRUE(out.find("tty\r\n") != std::string::npos || out.find("tty\n") != std::string::npos)
      << out;
  EXPECT_EQ(out.find("no-tty"), std::string::npos) << out;
  siginfo_t info{};
  ::waitid(P_PID, static_cast<id_t>(child->pid), &info, WEXITED);
}

INSTANTIATE_TEST_SUITE_P(, EnvironmentConformance,
                         ::testing::Values(Backend::kLocal, Backend::kSandbox, Backend::kSsh,
                                           Backend::kDocker, Backend::kApptainer, Backend::kModal,
                                           Backend::kDaytona, Backend::kE2b, Backend::kKubernetes),
                         [](const ::testing::TestParamInfo<Backend>& info) {
                           return BackendName(info.param);
                         });

}  // namespace
}  // namespace talaria::env
