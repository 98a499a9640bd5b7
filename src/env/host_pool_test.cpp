// The host pool against real sshd instances (tests/support/sshd_server.h), each in a network
// namespace of its own where the machine allows, else on loopback ports: placement by running
// commands, sticky sessions, a host taken out (sshd stopped, or its network down) and its
// sessions told and moved. Each sshd's sessions start in its own work directory, so a session's cwd
// tells which host it is on.
#include "talaria/env/host_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "support/sshd_server.h"
#include "support/wait_until.h"
#include "talaria/env/environment.h"

namespace talaria::env {
namespace {

using namespace std::chrono_literals;

class HostPoolTest : public ::testing::Test {
 protected:
  // Each host in a network namespace of its own where the machine allows (plain loopback
  // ports otherwise).
  void StartHosts(int n) {
    if (const std::string reason = test_support::SshdUnavailableReason(); !reason.empty()) {
      GTEST_SKIP() << "no sshd to test against: " << reason;
    }
    for (int i = 0; i < n; ++i) {
      test_support::SshdServerOptions own;
      own.own_network = true;
      auto sshd = test_support::SshdServer::Start(own);
      ASSERT_TRUE(sshd) << sshd.error().ToString();
      sshds_.push_back(std::move(*sshd));
    }
  }

  // Host i of the pool: sessions share its master connection; the probe makes a connection of
  // its own (a master of its own control directory), so a host that takes no new connections
  // fails it even while old ones last.
  PoolHost Host(size_t i) const {
    const test_support::SshdServer* sshd = sshds_[i].get();
    PoolHost host;
    host.name = "h" + std::to_string(i);
    host.open = [sshd] { return OpenSsh(sshd->ClientOptions()); };
    host.probe = [sshd]() -> Status {
      SshOptions options = sshd->ClientOptions();
      options.control_dir = sshd->dir() + "/probe";
      auto env = OpenSsh(options);
      return env ? Status::Ok() : env.error();
    };
    return host;
  }

  // Which host a session is on: the index of the sshd whose work directory it is in.
  int HostOf(const Environment& env) const {
    for (size_t i = 0; i < sshds_.size(); ++i) {
      if (env.cwd().rfind(sshds_[i]->work_dir(), 0) == 0) return static_cast<int>(i);
    }
    return -1;
  }

  void TearDown() override {
    pool_.reset();  // the sessions end before their servers
    sshds_.clear();
  }

  std::vector<std::unique_ptr<test_support::SshdServer>> sshds_;
  std::shared_ptr<HostPool> pool_;
};

TEST_F(HostPoolTest, NewSessionsGoToTheLeastLoadedHostAndStayWhereTheyAre) {
  StartHosts(3);
  HostPoolOptions options;
  options.health_interval = 0ms;
  for (size_t i = 0; i < 3; ++i) options.hosts.push_back(Host(i));
  pool_ = *HostPool::Create(std::move(options));

  auto a = pool_->Acquire("a");
  ASSERT_TRUE(a) << a.error().ToString();
  const int host_a = HostOf(**a);
  ASSERT_GE(host_a, 0) << (*a)->cwd();
  // A command of session a runs until the flag file appears (at most 30 s).
  const std::string flag = sshds_[0]->dir() + "/flag";
  std::thread busy([&] {
    CommandOptions limit;
    limit.timeout = 30s;
    auto r = (*a)->Run("until [ -e '" + flag + "' ]; do sleep 0.02; done; echo done", limit);
    EXPECT_TRUE(r && r->output == "done\n") << (r ? r->output : r.error().ToString());
  });
  EXPECT_TRUE(test_support::WaitUntil(
      [&] { return pool_->Hosts()[static_cast<size_t>(host_a)].running == 1; }, 10s, 5ms));

  // Every later session avoids the host with the running command, though the other two then
  // hold more sessions than it does.
  std::vector<std::shared_ptr<Environment>> others;
  for (const char* id : {"b", "c", "d", "e"}) {
    auto env = pool_->Acquire(id);
    ASSERT_TRUE(env) << env.error().ToString();
    EXPECT_NE(HostOf(**env), host_a) << id;
    others.push_back(*env);
  }
  EXPECT_NE(HostOf(*others[0]), HostOf(*others[1]));  // then the fewest sessions
  // Sticky: the same session, the same environment, wherever the load is now.
  EXPECT_EQ(pool_->Acquire("a")->get(), a->get());
  EXPECT_EQ(pool_->Acquire("b")->get(), others[0].get());

  std::filesystem::create_directories(flag);
  busy.join();
  const std::vector<PoolHostStatus> hosts = pool_->Hosts();
  EXPECT_EQ(hosts[static_cast<size_t>(host_a)].running, 0);
  EXPECT_EQ(hosts[static_cast<size_t>(host_a)].commands_run, 1u);
  EXPECT_EQ(hosts[0].sessions + hosts[1].sessions + hosts[2].sessions, 5);
}

TEST_F(HostPoolTest, AFailedHostIsTakenOutAndItsSessionsAreToldThenMoved) {
  StartHosts(2);
  std::mutex mu;
  std::vector<std::string> lost;  // Guarded by mu.
  HostPoolOptions options;
  options.health_interval = 0ms;
  options.hosts = {Host(0), Host(1)};
  options.on_host_lost = [&](const std::string& host, const std::string& reason,
                             const std::vector<std::string>& sessions) {
    std::lock_guard lock(mu);
    lost.push_back(host + ":" + std::to_string(sessions.size()) + ":" +
                   (sessions.empty() ? "" : sessions[0]) + ":" +
                   (reason.empty() ? "no reason" : "reason"));
  };
  pool_ = *HostPool::Create(std::move(options));

  auto s = pool_->Acquire("s");
  ASSERT_TRUE(s) << s.error().ToString();
  const int first = HostOf(**s);
  ASSERT_GE(first, 0);
  ASSERT_TRUE((*s)->Run("export X=1", {}));
  pool_->CheckHealth();
  EXPECT_TRUE(lost.empty()) << "both hosts answer";

  sshds_[static_cast<size_t>(first)]->Stop();  // no new connections; the session's master lasts
  pool_->CheckHealth();
  {
    std::lock_guard lock(mu);
    EXPECT_EQ(lost, std::vector<std::string>{"h" + std::to_string(first) + ":1:s:reason"});
  }
  EXPECT_FALSE(pool_->Hosts()[static_cast<size_t>(first)].healthy);
  // The session is told once...
  auto r = (*s)->Run("echo ${X:-unset}", {});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), StatusCode::kUnavailable);
  EXPECT_NE(r.error().message().find("'h" + std::to_string(first) + "' was taken out"),
            std::string::npos)
      << r.error().message();
  // ...then continues on the other host, in a fresh shell.
  r = (*s)->Run("echo ${X:-unset}", {});
  ASSERT_TRUE(r) << r.error().ToString();
  EXPECT_EQ(r->output, "unset\n");
  EXPECT_EQ(HostOf(**s), 1 - first);
  // New sessions go only to the healthy host.
  auto t = pool_->Acquire("t");
  ASSERT_TRUE(t) << t.error().ToString();
  EXPECT_EQ(HostOf(**t), 1 - first);
}

// A host whose network fails (its namespace's loopback goes down: connections are refused, not
// answered late) fails its probe and is taken out; new sessions go to the other one.
TEST_F(HostPoolTest, AHostWhoseNetworkFailsIsTakenOut) {
  StartHosts(2);
  if (!sshds_[0]->own_network()) GTEST_SKIP() << "no network namespaces here";
  std::atomic<int> lost{0};
  HostPoolOptions options;
  options.health_interval = 0ms;
  options.hosts = {Host(0), Host(1)};
  options.on_host_lost = [&](const std::string&, const std::string&,
                             const std::vector<std::string>&) { ++lost; };
  pool_ = *HostPool::Create(std::move(options));
  auto s = pool_->Acquire("s");
  ASSERT_TRUE(s) << s.error().ToString();
  const int first = HostOf(**s);
  ASSERT_GE(first, 0);
  // The hosts are apart: each one's loopback is its own.
  EXPECT_EQ((*s)->Run("cat /proc/net/dev | grep -c :", {})->output, "1\n");

  ASSERT_TRUE(sshds_[static_cast<size_t>(first)]->SetNetworkUp(false).ok());
  pool_->CheckHealth();
  EXPECT_EQ(lost.load(), 1);
  EXPECT_FALSE(pool_->Hosts()[static_cast<size_t>(first)].healthy);
  EXPECT_TRUE(pool_->Hosts()[static_cast<size_t>(1 - first)].healthy);
  // Back up, so the lost session's end reaches its host; the pool keeps it out meanwhile.
  ASSERT_TRUE(sshds_[static_cast<size_t>(first)]->SetNetworkUp(true).ok());
  auto t = pool_->Acquire("t");
  ASSERT_TRUE(t) << t.error().ToString();
  EXPECT_EQ(HostOf(**t), 1 - first);
}

TEST_F(HostPoolTest, NoHostThatOpensIsUnavailableWithEveryReason) {
  HostPoolOptions options;
  options.health_interval = 0ms;
  for (const char* name : {"x", "y"}) {
    PoolHost host;
    host.name = name;
    host.open = [name]() -> Result<std::shared_ptr<Environment>> {
      return Err(UnavailableError(std::string("cannot reach ") + name));
    };
    options.hosts.push_back(std::move(host));
  }
  pool_ = *HostPool::Create(std::move(options));
  auto env = pool_->Acquire("s");
  ASSERT_FALSE(env);
  EXPECT_EQ(env.error().code(), StatusCode::kUnavailable);
  EXPECT_NE(env.error().message().find("x: cannot reach x"), std::string::npos);
  EXPECT_NE(env.error().message().find("y: cannot reach y"), std::string::npos);
}

TEST_F(HostPoolTest, RejectsAPoolWithoutHostsOrWithTwoOfOneName) {
  EXPECT_EQ(HostPool::Create({}).error().code(), StatusCode::kInvalidArgument);
  HostPoolOptions options;
  PoolHost host;
  host.name = "same";
  host.open = [] { return OpenLocal({}); };
  options.hosts = {host, host};
  EXPECT_EQ(HostPool::Create(std::move(options)).error().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace talaria::env
