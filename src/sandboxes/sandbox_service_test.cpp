// What only the sandbox services do, for each against the fake control plane (tests/support),
// whose sandboxes are bubblewrap jails on this machine: the sandbox's life and owner label, the
// service's refusal of a wrong key, background jobs ended with the session, and files in and out
// as tar streams. What every backend shares is in environment_conformance_test.cpp.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
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

#include "support/bwrap_support.h"
#include "support/env_helpers.h"
#include "support/sandbox_control_plane.h"
#include "support/self_spawn.h"
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

class SandboxService : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    // Outside /tmp: the fake's jails have a private /tmp of their own.
    scratch_ = test_support::MakeScratchOutsideTmp(TALARIA_BINARY_DIR, "talaria-sbx");
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

TEST_P(SandboxService, ClosingTheSessionEndsItsBackgroundJobs) {
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

TEST_P(SandboxService, TheSandboxIsDeletedWithTheEnvironmentAndCarriesItsOwner) {
  EXPECT_EQ(plane_->counts().live, 1);
  if (GetParam() != "modal") {
    ASSERT_EQ(plane_->live_owners().size(), 1u);
    EXPECT_EQ(plane_->live_owners()[0].substr(0, 4), OwnerLabel().substr(0, 4));
  }
  env_.reset();
  EXPECT_EQ(plane_->counts().live, 0);
  EXPECT_EQ(plane_->counts().auth_failures, 0);
}

// persistent: Modal's gateway snapshots the filesystem on terminate and restores it for the
// same logical key; Daytona stops the sandbox and the next environment of the task finds it by
// its labels and starts it. Either way a file written in one environment is there in the next
// one of the same task, and only there.
TEST_P(SandboxService, APersistentTasksFilesComeBackInItsNextEnvironment) {
  const std::string kind = GetParam();
  if (kind != "modal" && kind != "daytona") GTEST_SKIP() << kind << " keeps no sandbox";
  // Unjailed, every fake sandbox is the machine itself: the file a fresh sandbox must not see
  // would be the machine's own /tmp/kept-file.
  TALARIA_SKIP_WITHOUT_BWRAP();
  env_.reset();
  SandboxServiceOptions o = Options();
  o.persistent = true;
  o.task_id = "session-kept-1";
  const auto run_in = [](env::Environment& env, const std::string& command) {
    auto r = env.Run(command, {});
    EXPECT_TRUE(r) << r.error().ToString();
    return r ? *r : env::CommandOutcome{};
  };
  {
    auto env = OpenSandboxService(o);
    ASSERT_TRUE(env) << env.error().ToString();
    EXPECT_EQ(run_in(**env, "echo kept > /tmp/kept-file && echo ok").output, "ok\n");
    if (kind == "daytona") {
      // A dead owner's running kept sandbox is stopped by the reaper, not deleted.
      auto reaped = ReapOrphanSandboxes(o, [](std::string_view) { return true; });
      ASSERT_TRUE(reaped) << reaped.error().ToString();
      EXPECT_EQ(*reaped, 1);
      EXPECT_EQ(plane_->counts().live, 1);
    }
  }
  const test_support::FakeSandboxCounts closed = plane_->counts();
  if (kind == "modal") {
    EXPECT_EQ(closed.snapshots, 1);
    EXPECT_EQ(closed.live, 0);
  } else {
    EXPECT_EQ(closed.live, 1);  // stopped, and left alone by the reaper from now on
    auto reaped = ReapOrphanSandboxes(o, [](std::string_view) { return true; });
    ASSERT_TRUE(reaped) << reaped.error().ToString();
    EXPECT_EQ(*reaped, 0);
    EXPECT_EQ(plane_->counts().live, 1);
  }
  {
    auto env = OpenSandboxService(o);
    ASSERT_TRUE(env) << env.error().ToString();
    EXPECT_EQ(run_in(**env, "cat /tmp/kept-file").output, "kept\n");
    if (kind == "modal") {
      EXPECT_EQ(plane_->counts().restores, 1);
    } else {
      EXPECT_EQ(plane_->counts().created, closed.created);  // the same sandbox, started again
      EXPECT_GE(plane_->counts().label_queries, 1);
      EXPECT_EQ(plane_->counts().label_updates, 2);  // released on closing, then taken over
      ASSERT_EQ(plane_->live_owners().size(), 1u);
      EXPECT_EQ(plane_->live_owners()[0], OwnerLabel());
    }
  }
  // Another task starts from nothing; so does the same task without persistence.
  for (const bool persistent : {true, false}) {
    SandboxServiceOptions other = o;
    other.task_id = persistent ? "session-other-2" : o.task_id;
    other.persistent = persistent;
    auto env = OpenSandboxService(other);
    ASSERT_TRUE(env) << env.error().ToString();
    EXPECT_NE(run_in(**env, "cat /tmp/kept-file").exit_code, 0) << persistent;
  }
  EXPECT_EQ(plane_->counts().auth_failures, 0);
}

// A talaria process of its own for the takeover test below: opens the persistent Daytona
// session TALARIA_SBX_TASK at TALARIA_SBX_URL, writes "won <owner>" or "refused <error>" as one
// line to fd 3, and holds the session until it is killed.
TEST(DaytonaSessionChild, HoldsThePersistentSession) {
  const char* url = std::getenv("TALARIA_SBX_URL");
  const char* task = std::getenv("TALARIA_SBX_TASK");
  if (url == nullptr || task == nullptr) GTEST_SKIP() << "started by the takeover test";
  SandboxServiceOptions o;
  o.kind = "daytona";
  o.base_url = url;
  o.api_key = "test-key";
  o.persistent = true;
  o.task_id = task;
  o.request_timeout = 30s;
  auto env = OpenSandboxService(o);
  const std::string line =
      (env ? "won " + OwnerLabel() : "refused " + env.error().ToString()) + "\n";
  ASSERT_EQ(::write(3, line.data(), line.size()), static_cast<ssize_t>(line.size()));
  ::close(3);
  if (env) ::pause();
}

// Two live talaria processes resuming one persistent Daytona session: one owns the sandbox and
// the other is told so (FailedPrecondition naming the owner) instead of sharing it; once the
// owner is gone the session is taken over, and of two resuming at the same moment exactly one
// wins while the sandbox stays one.
TEST_P(SandboxService, APersistentDaytonaSessionHasOneLiveOwner) {
  if (GetParam() != "daytona") GTEST_SKIP() << "only Daytona resumes a kept sandbox";
  struct Owner {
    pid_t pid = -1;
    int out = -1;
  };
  const std::string task = "session-shared-" + std::to_string(::getpid());
  const auto start_owner = [&] {
    int fds[2];
    EXPECT_EQ(::pipe2(fds, O_CLOEXEC), 0);
    Owner owner;
    owner.pid = test_support::SpawnSelf(
        {.test = "DaytonaSessionChild.HoldsThePersistentSession",
         .env = {{"TALARIA_SBX_URL", plane_->url()}, {"TALARIA_SBX_TASK", task}},
         .dup2s = {{fds[1], 3}}});
    ::close(fds[1]);
    owner.out = fds[0];
    return owner;
  };
  const auto answer = [](Owner& owner) {  // the child's line, once it closes its end
    std::string line;
    char buf[512];
    for (ssize_t n; (n = ::read(owner.out, buf, sizeof buf)) > 0;)
      line.append(buf, static_cast<size_t>(n));
    ::close(owner.out);
    return line;
  };
  const auto end = [](const Owner& owner) {
    ::kill(owner.pid, SIGKILL);
    ::waitpid(owner.pid, nullptr, 0);
  };
  SandboxServiceOptions o = Options();
  o.persistent = true;
  o.task_id = task;

  Owner first = start_owner();
  ASSERT_GT(first.pid, 0);
  const std::string first_said = answer(first);
  ASSERT_EQ(first_said.rfind("won ", 0), 0u) << first_said;
  const int created = plane_->counts().created;
  auto second = OpenSandboxService(o);
  ASSERT_FALSE(second);
  EXPECT_EQ(second.error().code(), StatusCode::kFailedPrecondition) << second.error().ToString();
  EXPECT_NE(second.error().message().find("in use by talaria " +
                                          first_said.substr(4, first_said.size() - 5)),
            std::string::npos)
      << second.error().ToString();
  end(first);  // killed: its session may be resumed now
  {
    auto resumed = OpenSandboxService(o);
    ASSERT_TRUE(resumed) << resumed.error().ToString();
    EXPECT_EQ((*resumed)->Run("true", {})->exit_code, 0);
    EXPECT_EQ(plane_->counts().created, created);  // the same sandbox
  }

  Owner racers[2] = {start_owner(), start_owner()};
  std::string said[2] = {answer(racers[0]), answer(racers[1])};
  for (const Owner& racer : racers) end(racer);
  const int won = (said[0].rfind("won ", 0) == 0) + (said[1].rfind("won ", 0) == 0);
  EXPECT_EQ(won, 1) << said[0] << said[1];
  for (const std::string& line : said) {
    if (line.rfind("refused ", 0) == 0) {
      EXPECT_NE(line.find("in use by talaria"), std::string::npos) << line;
    }
  }
  EXPECT_EQ(plane_->counts().created, created);
  EXPECT_EQ(plane_->counts().live, 2);  // the fixture's sandbox and the session's
}

// A key the service stops taking mid-session (expired, then refreshed) is asked for anew and
// the refused request sent once more, by every kind: Modal's exec, Daytona's and Kubernetes'
// control calls, E2B's delete (its exec goes to envd with the sandbox's own token). A renewal
// that brings nothing the service takes leaves the refusal standing.
TEST_P(SandboxService, ARefusedKeyIsRenewedOnceAndTheCallGoesThrough) {
  env_.reset();
  SandboxServiceOptions o = Options();
  int renewals = 0;
  o.renew_api_key = [&renewals]() -> Result<std::string> {
    ++renewals;
    return std::string("rotated-key");
  };
  auto env = OpenSandboxService(o);
  ASSERT_TRUE(env) << env.error().ToString();
  plane_->SetApiKey("rotated-key");
  auto r = (*env)->Run("echo after-rotation", {});
  ASSERT_TRUE(r) << r.error().ToString();
  EXPECT_EQ(r->output, "after-rotation\n");
  EXPECT_EQ((*env)->Run("true", {})->exit_code, 0);
  env->reset();  // deleted with the renewed key
  EXPECT_EQ(plane_->counts().live, 0);
  EXPECT_EQ(renewals, 1);  // the renewed key is kept for the calls after
  EXPECT_EQ(plane_->counts().auth_failures, 1);

  plane_->SetApiKey("yet-another-key");  // the renewal gives a key the service refuses too
  auto refused = OpenSandboxService(o);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), StatusCode::kPermissionDenied) << refused.error().ToString();
  EXPECT_EQ(renewals, 2);
  EXPECT_EQ(plane_->counts().live, 0);
}

// Kubernetes with its token in a file (terminal.kubernetes.token_file, or a pod's service
// account, which the kubelet rotates): a refused token is read from the file again.
TEST_P(SandboxService, AKubernetesTokenFileIsReadAgainWhenRefused) {
  if (GetParam() != "kubernetes") GTEST_SKIP() << "only Kubernetes reads its token from a file";
  env_.reset();
  const std::string token_file = scratch_ + "/token";
  std::ofstream(token_file) << "file-token-1\n";
  plane_->SetApiKey("file-token-1");
  SandboxServiceOptions o = Options();
  o.api_key.clear();
  o.token_file = token_file;
  auto env = OpenSandboxService(o);
  ASSERT_TRUE(env) << env.error().ToString();
  std::ofstream(token_file) << "file-token-2\n";
  plane_->SetApiKey("file-token-2");
  env->reset();
  EXPECT_EQ(plane_->counts().live, 0);
  EXPECT_EQ(plane_->counts().auth_failures, 1);
  o.token_file = scratch_ + "/missing-token";
  auto missing = OpenSandboxService(o);
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message().find("token file"), std::string::npos)
      << missing.error().ToString();
}

TEST_P(SandboxService, AWrongKeyIsRefusedWithTheServiceStatus) {
  SandboxServiceOptions o = Options();
  o.api_key = "wrong";
  auto env = OpenSandboxService(o);
  ASSERT_FALSE(env);
  EXPECT_EQ(env.error().code(), StatusCode::kPermissionDenied) << env.error().ToString();
  EXPECT_NE(env.error().message().find("401"), std::string::npos) << env.error().ToString();
  EXPECT_EQ(plane_->counts().live, 1);  // only the fixture's
}

TEST_P(SandboxService, FilesGoInAsOneTarStreamAndChangedFilesComeBack) {
  // Per service: unjailed (no bwrap), every fake sandbox is this machine, and the variants run
  // at once.
  const std::string proj = "/tmp/proj-" + GetParam();
  const std::string local = scratch_ + "/local";
  std::filesystem::create_directories(local + "/sub");
  std::filesystem::create_directories(local + "/.git");
  std::ofstream(local + "/a.txt") << "one";
  std::ofstream(local + "/sub/b.txt") << "two";
  std::ofstream(local + "/.git/HEAD") << "ref";
  ASSERT_TRUE(PushTree(*env_, local, proj, {}).ok());
  EXPECT_EQ(Run("cat " + proj + "/a.txt " + proj + "/sub/b.txt; ls -A " + proj).output,
            "onetwoa.txt\nsub\n");
  Run("echo changed > " + proj + "/a.txt; echo new > " + proj + "/sub/c.txt");
  const std::string cwd = env_->cwd();
  auto changed = PullChanged(*env_, proj, local, {});
  ASSERT_TRUE(changed) << changed.error().ToString();
  EXPECT_EQ(env_->cwd(), cwd);  // the session's directory is left alone
  std::sort(changed->begin(), changed->end());
  EXPECT_EQ(*changed, (std::vector<std::string>{"a.txt", "sub/c.txt"}));
  std::ifstream a(local + "/a.txt");
  std::string text((std::istreambuf_iterator<char>(a)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "changed\n");
  EXPECT_TRUE(std::filesystem::exists(local + "/sub/b.txt"));
  // Nothing changed since: nothing comes back.
  changed = PullChanged(*env_, proj, local, {});
  ASSERT_TRUE(changed) << changed.error().ToString();
  EXPECT_TRUE(changed->empty());
  EXPECT_FALSE(PushTree(*env_, scratch_ + "/missing", "/tmp/x", {}).ok());
}

// A sandbox is not trusted: what it sends back is checked before anything is written here.
TEST_P(SandboxService, AHostileArchiveFromTheSandboxIsRefusedWhole) {
  // Unjailed, every service's sandbox is the machine itself: the variants running at once
  // would swap each other's /tmp/bin/tar and /tmp/evil.
  TALARIA_SKIP_WITHOUT_BWRAP();
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

INSTANTIATE_TEST_SUITE_P(, SandboxService,
                         ::testing::Values("modal", "daytona", "e2b", "kubernetes"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

}  // namespace
}  // namespace talaria::sandboxes
