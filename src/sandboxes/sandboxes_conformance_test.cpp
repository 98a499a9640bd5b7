// The environment behaviour every backend shares (src/sandboxes/environment_conformance_test.cpp),
// for each sandbox service against the fake control plane (tests/support), whose sandboxes are
// bubblewrap jails on this machine: "nothing is left running" is checked with pgrep here too.
// Background processes (Start) run detached in the sandbox, relayed to a local stand-in.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <ostream>
#include <string>
#include <thread>

#include "support/env_helpers.h"
#include "support/sandbox_control_plane.h"
#include "support/wait_until.h"
#include "talaria/base/shell_words.h"
#include "talaria/base/spawn.h"
#include "talaria/base/subprocess.h"
#include "talaria/sandboxes/file_sync.h"
#include "talaria/sandboxes/sandboxes.h"

namespace talaria::sandboxes {
namespace {

using namespace std::chrono_literals;
using test_support::NoProcessWithin;
using test_support::ProcessRunning;
using test_support::ReadUntilEof;
using test_support::WaitUntil;

// A scratch directory outside /tmp (the fake's jails have a private /tmp of their own).
std::string MakeScratch() {
  std::string tmpl = test_support::HostDirOutsideTmp(TALARIA_BINARY_DIR);
  if (tmpl.empty()) return "";
  tmpl += "/talaria-sbx-XXXXXX";
  if (::mkdtemp(tmpl.data()) == nullptr) return "";
  return std::filesystem::canonical(tmpl).string();
}

// Everything `fd` gives until end of file, for at most 30 s (ReadUntilEof stops at 128 KB).
std::string ReadAllOf(int fd) {
  std::string out;
  char buf[65536];
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (std::chrono::steady_clock::now() < deadline) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) out.append(buf, static_cast<size_t>(n));
    if (n == 0 || (n < 0 && errno == EIO)) break;
    if (n < 0) std::this_thread::sleep_for(10ms);
  }
  return out;
}

class SandboxConformance : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    scratch_ = MakeScratch();
    ASSERT_FALSE(scratch_.empty()) << "no writable directory outside /tmp";
    work_ = scratch_ + "/ws";
    std::filesystem::create_directories(work_);
    test_support::SandboxControlPlaneOptions fake;
    fake.root = scratch_;
    fake.workspace = work_;
    plane_ = test_support::SandboxControlPlane::Start(fake);
    auto env = OpenSandboxService(Options());
    ASSERT_TRUE(env) << env.error().ToString();
    env_ = *env;
  }

  void TearDown() override {
    env_.reset();
    plane_.reset();
    std::error_code ec;
    std::filesystem::remove_all(scratch_, ec);
  }

  SandboxServiceOptions Options() const {
    SandboxServiceOptions o;
    o.kind = GetParam();
    o.base_url = plane_->url();
    o.api_key = "test-key";
    if (o.kind == "e2b" || o.kind == "kubernetes") o.data_plane_url = plane_->url();
    o.initial_cwd = work_;
    o.request_timeout = 30s;
    return o;
  }

  env::CommandOutcome Run(std::string_view command, env::CommandOptions options = {}) {
    auto r = env_->Run(command, options);
    EXPECT_TRUE(r) << r.error().ToString();
    return r ? *r : env::CommandOutcome{};
  }

  // A `sleep` no other test or backend runs, and a pgrep pattern for it.
  struct Sleeper {
    std::string command;
    std::string pattern;
  };
  Sleeper UniqueSleep(int test) const {
    static const std::vector<std::string> kinds = {"modal", "daytona", "e2b", "kubernetes"};
    int index = 0;
    for (size_t i = 0; i < kinds.size(); ++i) {
      if (kinds[i] == GetParam()) index = static_cast<int>(i);
    }
    const std::string seconds = std::to_string(200 + test);
    const std::string fraction = std::to_string(index + 1) + "3";
    return {"sleep " + seconds + "." + fraction, "sleep " + seconds + "[.]" + fraction};
  }

  std::string scratch_;
  std::string work_;
  std::unique_ptr<test_support::SandboxControlPlane> plane_;
  std::shared_ptr<env::Environment> env_;
};

TEST_P(SandboxConformance, RunsInTheInitialDirectoryMergesStderrAndReturnsTheExitCode) {
  EXPECT_EQ(env_->kind(), GetParam());
  EXPECT_TRUE(env_->RunsScriptsRemotely());
  EXPECT_EQ(env_->cwd(), work_);
  env::CommandOutcome r = Run("pwd; echo oops >&2; echo after; exit 3");
  EXPECT_EQ(r.output, work_ + "\noops\nafter\n");
  EXPECT_EQ(r.output_total_bytes, r.output.size());
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_FALSE(r.timed_out);
  EXPECT_FALSE(r.cancelled);
  EXPECT_EQ(Run("echo x; exit 255").exit_code, 255);
  EXPECT_EQ(Run("true").exit_code, 0);
  EXPECT_EQ(Run("printf 'no newline'").output, "no newline");
}

TEST_P(SandboxConformance, CwdAndExportsCarryOverToTheNextCommand) {
  std::filesystem::create_directories(work_ + "/sub/deeper");
  Run("cd sub/deeper && export GREETING='hello world' && LOCAL_ONLY=1");
  EXPECT_EQ(env_->cwd(), work_ + "/sub/deeper");
  EXPECT_EQ(Run("pwd; echo \"$GREETING\"; echo \"${LOCAL_ONLY:-unset}\"").output,
            work_ + "/sub/deeper\nhello world\nunset\n");
  Run("cd ..; export LEVEL=2; exit 7");
  EXPECT_EQ(env_->cwd(), work_ + "/sub");
  EXPECT_EQ(Run("pwd; echo $LEVEL").output, work_ + "/sub\n2\n");
}

TEST_P(SandboxConformance, WorkdirOverridesTheSessionDirectoryForOneCommand) {
  std::filesystem::create_directories(work_ + "/other/sub");
  env::CommandOptions options;
  options.workdir = work_ + "/other";
  // The session's first command: no cwd has been saved yet.
  EXPECT_EQ(Run("pwd", options).output, work_ + "/other\n");
  EXPECT_EQ(env_->cwd(), work_);
  EXPECT_EQ(Run("pwd").output, work_ + "\n");
  // Its exports carry over all the same.
  Run("export FROM_WORKDIR=yes", options);
  EXPECT_EQ(Run("pwd; echo $FROM_WORKDIR").output, work_ + "\nyes\n");
  // A cd of its own does move the session.
  EXPECT_EQ(Run("cd sub && pwd", options).output, work_ + "/other/sub\n");
  EXPECT_EQ(env_->cwd(), work_ + "/other/sub");
  EXPECT_EQ(Run("pwd").output, work_ + "/other/sub\n");
  // A workdir that is the session's own directory changes nothing either.
  options.workdir = work_ + "/other/sub";
  EXPECT_EQ(Run("pwd", options).output, work_ + "/other/sub\n");
  EXPECT_EQ(env_->cwd(), work_ + "/other/sub");
}

TEST_P(SandboxConformance, ADeletedWorkingDirectoryFallsBackToItsNearestAncestor) {
  std::filesystem::create_directories(work_ + "/gone/deep");
  Run("cd gone/deep");
  std::filesystem::remove_all(work_ + "/gone");
  EXPECT_EQ(Run("pwd").output, work_ + "\n");
}

TEST_P(SandboxConformance, CommandTextAndOutputRoundTripExactly) {
  EXPECT_EQ(Run("printf '%s\\n' \"it's \\$HOME\"").output, "it's $HOME\n");
  EXPECT_EQ(Run("echo '`not run` $(not run) ${HOME:+x}'; echo `echo ran`").output,
            "`not run` $(not run) ${HOME:+x}\nran\n");
  EXPECT_EQ(Run("echo one\necho 'two\nlines'\n\n# comment; echo no\n").output, "one\ntwo\nlines\n");
  EXPECT_EQ(Run("echo ünïcödé ✓ 日本 🚀").output, "ünïcödé ✓ 日本 🚀\n");
  // A command printing the marker's prefix does not confuse the cwd report.
  EXPECT_EQ(Run("echo __TALARIA_CWD_; cd /").output, "__TALARIA_CWD_\n");
  EXPECT_EQ(env_->cwd(), "/");
  Run("cd " + ShellQuote(work_));
  std::string all_bytes;
  for (int c = 1; c < 256; ++c) all_bytes += static_cast<char>(c);
  // Every byte but NUL through the command text; JSON carries text, so bytes that are not
  // UTF-8 come back replaced: those are checked through their hex dump.
  EXPECT_EQ(Run("printf '%s' " + ShellQuote(all_bytes) + " | od -An -v -tx1 | tr -d ' \\n'").output,
            [&] {
              std::string hex;
              char buf[3];
              for (unsigned char c : all_bytes) {
                std::snprintf(buf, sizeof buf, "%02x", c);
                hex += buf;
              }
              return hex;
            }());
  env::CommandOptions options;
  options.stdin_data = "line 1\nit's $HOME\n" + all_bytes;
  EXPECT_EQ(
      Run("cat | sha256sum | cut -c1-16", options).output,
      Run("printf '%s' " + ShellQuote(options.stdin_data) + " | sha256sum | cut -c1-16").output);
}

TEST_P(SandboxConformance, TimeoutKillsTheWholeGroupAndKeepsPartialOutput) {
  const Sleeper sleeper = UniqueSleep(1);
  env::CommandOptions options;
  options.timeout = 1000ms;
  env::CommandOutcome r =
      Run("echo before; " + sleeper.command + " & " + sleeper.command + "; echo never", options);
  EXPECT_TRUE(r.timed_out);
  EXPECT_FALSE(r.cancelled);
  EXPECT_EQ(r.exit_code, 124);
  EXPECT_EQ(r.output.rfind("before\n", 0), 0u) << r.output;
  EXPECT_EQ(r.output.find("never"), std::string::npos);
  EXPECT_TRUE(NoProcessWithin(sleeper.pattern, 10s));
  EXPECT_EQ(Run("pwd").output, work_ + "\n");
}

TEST_P(SandboxConformance, WhatStillHoldsTheOutputWhenTheCommandEndsIsKilled) {
  const Sleeper holder = UniqueSleep(2);
  env::CommandOutcome r = Run("{ " + holder.command + "; echo late; } & echo started");
  EXPECT_EQ(r.output, "started\n");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(NoProcessWithin(holder.pattern, 10s));
}

TEST_P(SandboxConformance, CancellationKillsTheCommandWith130) {
  const Sleeper sleeper = UniqueSleep(4);
  std::stop_source stop;
  env::CommandOptions options;
  options.cancel = stop.get_token();
  std::thread canceller([&] {
    WaitUntil([&] { return ProcessRunning("^" + sleeper.pattern); }, 20s, 10ms);
    stop.request_stop();
  });
  env::CommandOutcome r = Run("echo before; " + sleeper.command + " & " + sleeper.command, options);
  canceller.join();
  EXPECT_TRUE(r.cancelled);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 130);
  EXPECT_EQ(r.output.rfind("before\n", 0), 0u) << r.output;
  EXPECT_TRUE(NoProcessWithin(sleeper.pattern, 10s));
  EXPECT_EQ(Run("echo still here").output, "still here\n");
}

TEST_P(SandboxConformance, HugeOutputIsBoundedHeadAndTail) {
  const size_t bytes = 5'000'000;
  env::CommandOptions options;
  options.max_output_bytes = 1000;
  env::CommandOutcome r = Run(
      "echo START; head -c " + std::to_string(bytes) + " /dev/zero | tr '\\0' x; echo; echo END",
      options);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.output_total_bytes, bytes + 6 + 1 + 4);
  EXPECT_LT(r.output.size(), 1200u);
  EXPECT_EQ(r.output.rfind("START\n", 0), 0u);
  EXPECT_NE(r.output.find("[OUTPUT TRUNCATED - "), std::string::npos);
  EXPECT_EQ(r.output.substr(r.output.size() - 4), "END\n");
  EXPECT_EQ(Run("cd /; echo ok", options).output, "ok\n");
  EXPECT_EQ(env_->cwd(), "/");
}

TEST_P(SandboxConformance, StartRunsInTheBackgroundFromTheSessionState) {
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

TEST_P(SandboxConformance, AStartedProcessesBytesAndExitCodeComeBackWhole) {
  // Bytes that are no UTF-8 (and more than one poll's worth) survive the services' JSON.
  auto child = env_->Start(
      "printf 'a\\377b\\000c\\n'; head -c 600000 /dev/zero | tr '\\0' x; echo; exit 7", {}, {});
  ASSERT_TRUE(child) << child.error().ToString();
  const std::string out = ReadAllOf(child->output.get());
  siginfo_t info{};
  ::waitid(P_PID, static_cast<id_t>(child->pid), &info, WEXITED);
  EXPECT_EQ(out.substr(0, 6), std::string("a\377b\0c\n", 6));
  EXPECT_EQ(out.size(), 6u + 600000u + 1u);
  EXPECT_EQ(out.find_first_not_of('x', 6), 6u + 600000u);
  EXPECT_EQ(info.si_code, CLD_EXITED);
  EXPECT_EQ(info.si_status, 7);
}

TEST_P(SandboxConformance, StartedProcessRunsOnWhileTheSessionGoesOnAndEndsWithItsOwner) {
  const Sleeper sleeper = UniqueSleep(5);
  auto child = env_->Start("echo ready; " + sleeper.command + "; echo done", {}, {});
  ASSERT_TRUE(child) << child.error().ToString();
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
  EXPECT_EQ(Run("echo meanwhile").output, "meanwhile\n");
  // Its owner ends the local process: the job in the sandbox goes too.
  EXPECT_TRUE(TerminateProcessGroup(child->pid, child->pidfd.get(), 1s));
  ::waitid(P_PID, static_cast<id_t>(child->pid), &info, WEXITED);
  EXPECT_TRUE(NoProcessWithin(sleeper.pattern, 10s));
}

TEST_P(SandboxConformance, ClosingTheSessionEndsItsBackgroundJobs) {
  const Sleeper sleeper = UniqueSleep(6);
  auto child = env_->Start(sleeper.command, {}, {});
  ASSERT_TRUE(child) << child.error().ToString();
  EXPECT_TRUE(WaitUntil([&] { return ProcessRunning(sleeper.pattern); }, 10s, 10ms));
  env_.reset();
  EXPECT_TRUE(NoProcessWithin(sleeper.pattern, 10s));
  // The stand-in ends too, with the status of a terminated job.
  EXPECT_EQ(ReadUntilEof(child->output.get()), "");
  siginfo_t info{};
  ::waitid(P_PID, static_cast<id_t>(child->pid), &info, WEXITED);
  EXPECT_EQ(info.si_code, CLD_EXITED);
  EXPECT_EQ(info.si_status, 143);
}

TEST_P(SandboxConformance, TheSandboxIsDeletedWithTheEnvironmentAndCarriesItsOwner) {
  EXPECT_EQ(plane_->counts().live, 1);
  if (GetParam() != "modal") {
    ASSERT_EQ(plane_->live_owners().size(), 1u);
    EXPECT_EQ(plane_->live_owners()[0].substr(0, 4), OwnerLabel().substr(0, 4));
  }
  env_.reset();
  EXPECT_EQ(plane_->counts().live, 0);
  EXPECT_EQ(plane_->counts().auth_failures, 0);
}

TEST_P(SandboxConformance, AWrongKeyIsRefusedWithTheServiceStatus) {
  SandboxServiceOptions o = Options();
  o.api_key = "wrong";
  auto env = OpenSandboxService(o);
  ASSERT_FALSE(env);
  EXPECT_EQ(env.error().code(), StatusCode::kPermissionDenied) << env.error().ToString();
  EXPECT_NE(env.error().message().find("401"), std::string::npos) << env.error().ToString();
  EXPECT_EQ(plane_->counts().live, 1);  // only the fixture's
}

TEST_P(SandboxConformance, FilesGoInAsOneTarStreamAndChangedFilesComeBack) {
  const std::string local = scratch_ + "/local";
  std::filesystem::create_directories(local + "/sub");
  std::filesystem::create_directories(local + "/.git");
  std::ofstream(local + "/a.txt") << "one";
  std::ofstream(local + "/sub/b.txt") << "two";
  std::ofstream(local + "/.git/HEAD") << "ref";
  ASSERT_TRUE(PushTree(*env_, local, "/tmp/proj", {}).ok());
  EXPECT_EQ(Run("cat /tmp/proj/a.txt /tmp/proj/sub/b.txt; ls -A /tmp/proj").output,
            "onetwoa.txt\nsub\n");
  Run("echo changed > /tmp/proj/a.txt; echo new > /tmp/proj/sub/c.txt");
  const std::string cwd = env_->cwd();
  auto changed = PullChanged(*env_, "/tmp/proj", local, {});
  ASSERT_TRUE(changed) << changed.error().ToString();
  EXPECT_EQ(env_->cwd(), cwd);  // the session's directory is left alone
  std::sort(changed->begin(), changed->end());
  EXPECT_EQ(*changed, (std::vector<std::string>{"a.txt", "sub/c.txt"}));
  std::ifstream a(local + "/a.txt");
  std::string text((std::istreambuf_iterator<char>(a)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "changed\n");
  EXPECT_TRUE(std::filesystem::exists(local + "/sub/b.txt"));
  // Nothing changed since: nothing comes back.
  changed = PullChanged(*env_, "/tmp/proj", local, {});
  ASSERT_TRUE(changed) << changed.error().ToString();
  EXPECT_TRUE(changed->empty());
  EXPECT_FALSE(PushTree(*env_, scratch_ + "/missing", "/tmp/x", {}).ok());
}

// A sandbox is not trusted: what it sends back is checked before anything is written here.
TEST_P(SandboxConformance, AHostileArchiveFromTheSandboxIsRefusedWhole) {
  const std::string evil = scratch_ + "/evil";
  std::filesystem::create_directories(evil + "/in");
  std::filesystem::create_symlink("/etc", evil + "/in/link");
  std::ofstream(evil + "/in/plain") << "x";
  SpawnOptions tar;
  tar.argv = {"tar", "-c", "-f", evil + "/links.tar", "-C", evil + "/in", "plain", "link"};
  ASSERT_EQ(RunProcess(tar)->exit_code, 0);
  tar.argv = {"tar",
              "-c",
              "-P",
              "-f",
              evil + "/dotdot.tar",
              "-C",
              evil + "/in",
              "--transform=s,^plain,../escaped,",
              "plain"};
  ASSERT_EQ(RunProcess(tar)->exit_code, 0);
  std::filesystem::remove_all(evil + "/in");
  ASSERT_TRUE(PushTree(*env_, evil, "/tmp/evil", {}).ok());
  const std::string local = scratch_ + "/pulled";
  std::filesystem::create_directories(local);
  for (const char* archive : {"links.tar", "dotdot.tar"}) {
    // The sandbox's own `tar` now answers with the hostile archive.
    Run("mkdir -p /tmp/bin && printf '#!/bin/sh\\ncat /tmp/evil/%s\\n' " + std::string(archive) +
        " > /tmp/bin/tar && chmod +x /tmp/bin/tar && export PATH=/tmp/bin:$PATH; touch "
        "/tmp/evil/x");
    auto pulled = PullChanged(*env_, "/tmp/evil", local, {});
    ASSERT_FALSE(pulled) << archive;
    EXPECT_EQ(pulled.error().code(), StatusCode::kInvalidArgument) << pulled.error().ToString();
    EXPECT_TRUE(std::filesystem::is_empty(local)) << archive;
    EXPECT_FALSE(std::filesystem::exists(scratch_ + "/escaped"));
  }
}

INSTANTIATE_TEST_SUITE_P(, SandboxConformance,
                         ::testing::Values("modal", "daytona", "e2b", "kubernetes"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

}  // namespace
}  // namespace talaria::sandboxes
