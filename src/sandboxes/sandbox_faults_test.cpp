// What the services do wrong, injected by the fake control plane: a create that fails after it
// created (the retry with the same idempotency key must find that one sandbox), 409 while a
// sandbox builds, 404 and cut connections while polling, slow claims, idle reaping; and the
// reaping of a killed talaria's sandboxes by their owner label.
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>

#include "support/env_helpers.h"
#include "support/sandbox_control_plane.h"
#include "support/self_spawn.h"
#include "support/wait_until.h"
#include "talaria/base/subprocess.h"
#include "talaria/sandboxes/sandboxes.h"

namespace talaria::sandboxes {
namespace {

using namespace std::chrono_literals;
using test_support::SandboxControlPlane;
using test_support::SandboxControlPlaneOptions;
using test_support::WaitUntil;

class SandboxFaults : public ::testing::Test {
 protected:
  void SetUp() override {
    scratch_ = test_support::MakeScratchOutsideTmp(TALARIA_BINARY_DIR, "talaria-sbxf");
    ASSERT_FALSE(scratch_.empty());
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(scratch_, ec);
  }

  std::unique_ptr<SandboxControlPlane> Plane(SandboxControlPlaneOptions o = {}) {
    o.root = scratch_;
    return SandboxControlPlane::Start(o);
  }
  static SandboxServiceOptions Options(const SandboxControlPlane& plane, std::string kind) {
    SandboxServiceOptions o;
    o.kind = std::move(kind);
    o.base_url = plane.url();
    o.api_key = "test-key";
    if (o.kind == "e2b" || o.kind == "kubernetes") o.data_plane_url = plane.url();
    o.request_timeout = 30s;
    return o;
  }

  std::string scratch_;
};

TEST_F(SandboxFaults, ARetriedModalCreateWithTheSameIdempotencyKeyMakesOneSandbox) {
  SandboxControlPlaneOptions fake;
  fake.create_failures_after_create = 2;  // two 503s after creating; the third attempt succeeds
  auto plane = Plane(fake);
  auto env = OpenSandboxService(Options(*plane, "modal"));
  ASSERT_TRUE(env) << env.error().ToString();
  EXPECT_EQ(plane->counts().create_requests, 3);
  EXPECT_EQ(plane->counts().created, 1);
  EXPECT_EQ(plane->counts().live, 1);
  EXPECT_EQ((*env)->Run("echo ok", {})->output, "ok\n");
}

TEST_F(SandboxFaults, ModalWaitsOutABuildingSandboxAndLostOrCutPolls) {
  SandboxControlPlaneOptions fake;
  fake.modal_build_409s = 3;
  fake.modal_poll_404s = 2;
  fake.modal_poll_drops = 2;
  fake.modal_exec_wait = 0ms;  // every exec is polled
  auto plane = Plane(fake);
  auto env = OpenSandboxService(Options(*plane, "modal"));
  ASSERT_TRUE(env) << env.error().ToString();
  auto r = (*env)->Run("echo polled; exit 4", {});
  ASSERT_TRUE(r) << r.error().ToString();
  EXPECT_EQ(r->output, "polled\n");
  EXPECT_EQ(r->exit_code, 4);
}

TEST_F(SandboxFaults, ModalGivesUpOnAnExecThatStaysLost) {
  SandboxControlPlaneOptions fake;
  fake.modal_poll_404s = 100;
  fake.modal_exec_wait = 0ms;
  auto plane = Plane(fake);
  auto env = OpenSandboxService(Options(*plane, "modal"));
  // Prepare's own exec is lost too: the open fails, saying so, and deletes the sandbox.
  ASSERT_FALSE(env);
  EXPECT_NE(env.error().message().find("not found"), std::string::npos) << env.error().ToString();
  EXPECT_EQ(plane->counts().live, 0);
}

TEST_F(SandboxFaults, SlowClaimsAreWaitedForUntilReady) {
  SandboxControlPlaneOptions fake;
  fake.claim_delay = 2500ms;  // the agent-sandbox report's claims take 2-6 s
  auto plane = Plane(fake);
  for (const char* kind : {"daytona", "kubernetes"}) {
    auto env = OpenSandboxService(Options(*plane, kind));
    ASSERT_TRUE(env) << kind << ": " << env.error().ToString();
    EXPECT_EQ((*env)->Run("echo ready", {})->output, "ready\n") << kind;
  }
  SandboxServiceOptions impatient = Options(*plane, "kubernetes");
  impatient.ready_timeout = 300ms;
  auto env = OpenSandboxService(impatient);
  ASSERT_FALSE(env);
  EXPECT_EQ(env.error().code(), StatusCode::kDeadlineExceeded) << env.error().ToString();
  EXPECT_EQ(plane->counts().live, 0);  // the one that never got ready is deleted
}

// agent-sandbox's SandboxClaim: a pre-warmed sandbox handed over by the warm pool's controller
// (here after a slow claim), its claim deleted with the session and found by label for reaping.
TEST_F(SandboxFaults, AWarmPoolClaimIsWaitedOnUsedAndDeletedWithItsSession) {
  SandboxControlPlaneOptions fake;
  fake.claim_delay = 2000ms;
  auto plane = Plane(fake);
  SandboxServiceOptions o = Options(*plane, "kubernetes");
  o.k8s_warm_pool = "talaria-pool";
  o.k8s_namespace = "agents";
  auto env = OpenSandboxService(o);
  ASSERT_TRUE(env) << env.error().ToString();
  EXPECT_EQ(plane->counts().claims, 1);
  EXPECT_EQ(plane->live_namespaces(), std::vector<std::string>{"agents"});
  EXPECT_EQ((*env)->Run("echo claimed", {})->output, "claimed\n");
  env->reset();
  EXPECT_EQ(plane->counts().live, 0);
  // A second claim, reaped through its label as a dead talaria's would be.
  auto again = OpenSandboxService(o);
  ASSERT_TRUE(again) << again.error().ToString();
  auto reaped = ReapOrphanSandboxes(o, [](std::string_view) { return true; });
  ASSERT_TRUE(reaped) << reaped.error().ToString();
  EXPECT_EQ(*reaped, 1);
  EXPECT_EQ(plane->counts().live, 0);
  again->reset();  // its claim is gone already: not an error
  // A pool the cluster does not have is refused with the API server's message.
  o.k8s_warm_pool = "no-such-pool";
  auto refused = OpenSandboxService(o);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message().find("no-such-pool"), std::string::npos)
      << refused.error().ToString();
  EXPECT_EQ(plane->counts().auth_failures, 0);
}

TEST_F(SandboxFaults, AnIdleSandboxIsReapedAndItsSessionSaysSo) {
  SandboxControlPlaneOptions fake;
  fake.idle_reap = 300ms;
  auto plane = Plane(fake);
  auto env = OpenSandboxService(Options(*plane, "daytona"));
  ASSERT_TRUE(env) << env.error().ToString();
  ASSERT_TRUE(WaitUntil([&] { return plane->counts().reaped_idle == 1; }, 10s, 20ms));
  auto r = (*env)->Run("echo gone?", {});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), StatusCode::kNotFound) << r.error().ToString();
}

TEST_F(SandboxFaults, OwnerLabelsTellALiveOwnerFromAGoneOne) {
  EXPECT_FALSE(OwnerIsGone(OwnerLabel()));
  SpawnOptions child;
  child.argv = {"sh", "-c", "exit 0"};
  pid_t pid = -1;
  child.on_spawn = [&](pid_t p) { pid = p; };
  ASSERT_TRUE(RunProcess(child));
  const std::string mine = OwnerLabel();
  const std::string host = mine.substr(0, mine.rfind('.', mine.rfind('.') - 1));
  EXPECT_TRUE(OwnerIsGone(host + "." + std::to_string(pid) + ".12345"));
  // Our own pid with another start time: a reused pid is not the owner.
  EXPECT_TRUE(OwnerIsGone(host + "." + std::to_string(::getpid()) + ".1"));
  EXPECT_FALSE(OwnerIsGone("another-host.1.1"));
  EXPECT_FALSE(OwnerIsGone("garbage"));
}

// Opens a sandbox and waits to be killed (SandboxFaults.AKilledTalariasSandboxesAreReaped).
TEST(SandboxFaultsChild, OpenAndHang) {
  const char* url = std::getenv("TALARIA_SBX_URL");
  const char* kind = std::getenv("TALARIA_SBX_KIND");
  if (url == nullptr || kind == nullptr) GTEST_SKIP() << "run by another test";
  SandboxServiceOptions o;
  o.kind = kind;
  o.base_url = url;
  o.data_plane_url = url;
  o.api_key = "test-key";
  auto env = OpenSandboxService(o);
  if (!env) std::_Exit(3);
  for (;;) std::this_thread::sleep_for(1s);
}

TEST_F(SandboxFaults, AKilledTalariasSandboxesAreFoundByLabelAndReaped) {
  auto plane = Plane();
  for (const char* kind : {"daytona", "e2b", "kubernetes"}) {
    const pid_t child = test_support::SpawnSelf(
        {.test = "SandboxFaultsChild.OpenAndHang",
         .env = {{"TALARIA_SBX_URL", plane->url()}, {"TALARIA_SBX_KIND", kind}}});
    ASSERT_GT(child, 0);
    const int before = plane->counts().live;
    ASSERT_TRUE(WaitUntil([&] { return plane->counts().live == before + 1; }, 20s, 10ms)) << kind;
    // Our own sandbox, alive, must survive the reaping.
    auto mine = OpenSandboxService(Options(*plane, kind));
    ASSERT_TRUE(mine) << mine.error().ToString();
    // Give the child time to finish preparing its session, then kill -9 it.
    std::this_thread::sleep_for(200ms);
    ASSERT_EQ(::kill(child, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    EXPECT_EQ(plane->counts().live, before + 2);
    auto reaped = ReapOrphanSandboxes(Options(*plane, kind));
    ASSERT_TRUE(reaped) << reaped.error().ToString();
    EXPECT_EQ(*reaped, 1) << kind;
    EXPECT_EQ(plane->counts().live, before + 1) << kind;
    EXPECT_EQ((*mine)->Run("echo alive", {})->output, "alive\n");
    mine->reset();
    EXPECT_EQ(plane->counts().live, before) << kind;
  }
  EXPECT_EQ(plane->counts().live, 0);
}

}  // namespace
}  // namespace talaria::sandboxes
