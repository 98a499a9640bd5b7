// terminal.backend: pool end to end: config.yaml's terminal section read as the CLI reads it,
// Session::Open placing each session on one of several real sshd instances on loopback ports
// (tests/support/sshd_server.h), and the terminal tool running there. The hosts are all this
// machine, so a command tells which one it runs on by $SSH_CONNECTION's server port.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/sshd_server.h"
#include "support/temp_dir.h"
#include "talaria/core/config.h"
#include "talaria/core/dispatcher.h"
#include "talaria/tools/session.h"
#include "talaria/tools/session_services.h"
#include "tools/terminal_backends.h"

namespace talaria::tools {
namespace {

class PoolSession : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const std::string reason = test_support::SshdUnavailableReason(); !reason.empty()) {
      GTEST_SKIP() << "no sshd to test against: " << reason;
    }
    // The sessions' ssh control sockets live under TALARIA_HOME; keep them out of the user's.
    if (const char* old = std::getenv("TALARIA_HOME"); old != nullptr) saved_home_ = old;
    ::setenv("TALARIA_HOME", home_.path().c_str(), 1);
    std::filesystem::create_directories(home_ / "ws/remote");
    for (int i = 0; i < 3; ++i) {
      auto sshd = test_support::SshdServer::Start();
      ASSERT_TRUE(sshd) << sshd.error().ToString();
      sshds_.push_back(std::move(*sshd));
    }
    // One identity for the whole pool, as a real one has: the first server's client key.
    for (size_t i = 1; i < sshds_.size(); ++i) {
      ASSERT_TRUE(sshds_[i]->AuthorizeKey(sshds_[0]->client_key() + ".pub").ok());
    }
  }

  void TearDown() override {
    sessions_.clear();  // the sessions end before their servers
    sshds_.clear();
    if (saved_home_.empty()) {
      ::unsetenv("TALARIA_HOME");
    } else {
      ::setenv("TALARIA_HOME", saved_home_.c_str(), 1);
    }
  }

  // The terminal section a user writes for this pool.
  std::string Yaml() const {
    std::string hosts;
    for (const auto& sshd : sshds_) {
      hosts += std::string(hosts.empty() ? "" : ", ") +
               "'127.0.0.1:" + std::to_string(sshd->port()) + "'";
    }
    return "terminal:\n"
           "  backend: pool\n"
           "  ssh: {identity_file: '" +
           sshds_[0]->client_key() + "', known_hosts_file: '" + (home_ / "known_hosts") +
           "', cwd: '" + (home_ / "ws/remote") +
           "'}\n"
           // No background probes: the servers end with the test, the process's pool does not.
           "  pool: {hosts: [" +
           hosts + "], health_interval_s: 86400}\n";
  }

  Result<SessionOptions> Options() const {
    auto config = ParseConfig(Yaml());
    if (!config) return Err(config.error());
    auto options = TALARIA_TRY(SessionOptionsFromConfig(*config));
    options.roots = {home_ / "ws"};
    options.audit = false;
    return options;
  }

  // Runs `command` with the terminal tool in `session`.
  ToolResult Run(const Session& session, const std::string& command) {
    ToolContext ctx = session.NewContext("call_" + std::to_string(++calls_));
    return dispatcher_.Dispatch("terminal", Json{{"command", command}}.dump(), ctx);
  }

  // The port of the sshd that serves `session`'s commands; -1 when the output names none.
  int HostPort(const Session& session) {
    const ToolResult r = Run(session, "set -- $SSH_CONNECTION; echo \"port=$4\"");
    EXPECT_TRUE(r.ok()) << r.text;
    const size_t at = r.text.find("port=");
    if (at == std::string::npos) return -1;
    return std::atoi(r.text.c_str() + at + 5);
  }

  test_support::TempDir home_;
  std::string saved_home_;
  std::vector<std::unique_ptr<test_support::SshdServer>> sshds_;
  std::vector<std::shared_ptr<Session>> sessions_;
  Dispatcher dispatcher_;
  int calls_ = 0;
};

TEST_F(PoolSession, ConfigPlacesEachSessionOnOneHostAndKeepsItThere) {
  auto options = Options();
  ASSERT_TRUE(options) << options.error().ToString();
  ASSERT_EQ(options->terminal.backend, "pool");
  EXPECT_EQ(options->terminal.ssh_known_hosts_file, home_ / "known_hosts");
  std::set<int> ports;
  for (const auto& sshd : sshds_) ports.insert(sshd->port());

  std::map<std::string, int> placed;  // session id -> sshd port
  for (const char* id : {"sess_a", "sess_b", "sess_c"}) {
    SessionOptions o = *options;
    o.session_id = id;
    auto session = Session::Open(o);
    ASSERT_TRUE(session) << session.error().ToString();
    EXPECT_EQ(EnvironmentOf((*session)->NewContext("kind"))->kind(), "pool");
    placed[id] = HostPort(**session);
    EXPECT_EQ(ports.count(placed[id]), 1U) << id << " on port " << placed[id];
    sessions_.push_back(*session);
  }
  // Three sessions, three idle hosts: one each (the fewest sessions breaks the tie).
  EXPECT_EQ(std::set<int>({placed["sess_a"], placed["sess_b"], placed["sess_c"]}), ports);

  // Sticky: later commands of a session run on its host, in its shell state.
  const Session& a = *sessions_[0];
  ToolResult r = Run(a, "mkdir -p sub && cd sub && export POOL_MARK=kept");
  ASSERT_TRUE(r.ok()) << r.text;
  r = Run(a, "pwd; echo \"mark=$POOL_MARK\"");
  ASSERT_TRUE(r.ok()) << r.text;
  EXPECT_NE(r.text.find((home_ / "ws/remote") + "/sub"), std::string::npos) << r.text;
  EXPECT_NE(r.text.find("mark=kept"), std::string::npos) << r.text;
  EXPECT_EQ(HostPort(a), placed["sess_a"]);

  // The pool the sessions share counts them per host.
  const std::vector<env::PoolHostStatus> hosts = PoolHostsOf(options->terminal);
  ASSERT_EQ(hosts.size(), 3U);
  for (const env::PoolHostStatus& h : hosts) {
    EXPECT_TRUE(h.healthy) << h.name << ": " << h.last_error;
    EXPECT_EQ(h.sessions, 1) << h.name;
    EXPECT_GE(h.commands_run, 1U) << h.name;
  }
}

TEST_F(PoolSession, ASessionOpenedAgainWithItsIdIsOnTheSameHost) {
  auto options = Options();
  ASSERT_TRUE(options) << options.error().ToString();
  SessionOptions o = *options;
  o.session_id = "sess_again";
  auto first = Session::Open(o);
  ASSERT_TRUE(first) << first.error().ToString();
  const int port = HostPort(**first);
  ASSERT_TRUE(Run(**first, "export AGAIN=1").ok());
  // Narrowed sessions (subagents) and a reopen while the first is held share its environment.
  auto again = Session::Open(o);
  ASSERT_TRUE(again) << again.error().ToString();
  EXPECT_EQ(HostPort(**again), port);
  const ToolResult r = Run(**again, "echo \"again=$AGAIN\"");
  EXPECT_NE(r.text.find("again=1"), std::string::npos) << r.text;
  sessions_ = {*first, *again};
}

TEST_F(PoolSession, NoHostThatTakesTheKeyIsAnErrorThatNamesEveryHost) {
  auto options = Options();
  ASSERT_TRUE(options) << options.error().ToString();
  SessionOptions o = *options;
  o.terminal.ssh_identity_file = sshds_[0]->other_key();  // accepted nowhere
  o.session_id = "sess_refused";
  auto session = Session::Open(o);
  ASSERT_FALSE(session);
  EXPECT_EQ(session.error().code(), StatusCode::kUnavailable) << session.error().ToString();
  for (const auto& sshd : sshds_) {
    EXPECT_NE(session.error().message().find(std::to_string(sshd->port())), std::string::npos)
        << session.error().ToString();
  }
}

}  // namespace
}  // namespace talaria::tools
