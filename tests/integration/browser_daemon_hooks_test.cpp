// `talaria call browser_*` through the browser daemon runs the caller's hooks in the caller:
// a trusted project config's PreToolUse hook blocks browser_navigate for calls made from that
// project and not for calls from elsewhere to the same daemon; the config's hooks see each
// caller's own cwd (not the daemon's first caller's); a caller whose provider environment
// differs from the one the browser was made with is refused, naming the variable; and a
// $TALARIA_HOME too deep for sun_path still reaches its daemon (through /proc/self/fd).
// Real binary, real Chromium, a 127.0.0.1 page. Skipped only without Chromium.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "browser_daemon_support.h"
#include "cli_harness.h"
#include "support/loopback_http.h"

namespace talaria::testing_cli {
namespace {

class BrowserDaemonHooks : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!ChromiumInstalled()) GTEST_SKIP() << "no Chromium installed (apt-get install chromium)";
    std::filesystem::create_directories(project_a() + "/.talaria");
    std::filesystem::create_directories(elsewhere());
    // Every navigate and snapshot notes the cwd its hook ran in.
    home_.WriteConfig(
        "browser:\n  allow_private: [\"127.0.0.1:" + std::to_string(site_.port()) +
        "\"]\nhooks:\n  PreToolUse:\n    - matcher: \"browser_navigate|browser_snapshot\""
        "\n      hooks:\n        - type: command\n          command: \"pwd >> " +
        cwd_log() + "\"\n");
    // Project A forbids browsing from it.
    std::ofstream(project_a() + "/.talaria/config.yaml")
        << "hooks:\n  PreToolUse:\n    - matcher: browser_navigate\n      hooks:\n"
           "        - type: command\n          command: \"echo 'no browsing from project A' >&2; "
           "exit 2\"\n";
  }
  void TearDown() override { EndBrowserDaemons(home_.talaria_home()); }

  std::string project_a() const { return home_.path() + "/project-a"; }
  std::string elsewhere() const { return home_.path() + "/elsewhere"; }
  std::string cwd_log() const { return home_.path() + "/cwds.log"; }
  CliRun Run(const std::string& cwd, const std::vector<std::string>& args,
             std::vector<std::string> env = {}) {
    CliInvocation how;
    how.home = home_.path();
    how.cwd = cwd;
    how.timeout = std::chrono::seconds(90);
    how.extra_env = std::move(env);
    return RunTalaria(how, args);
  }
  std::vector<std::string> CwdsSeen() const {
    std::ifstream in(cwd_log());
    std::vector<std::string> lines;
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    return lines;
  }

  talaria_test::LoopbackHttpServer site_{[](httplib::Server& s) {
    s.Get("/one", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("<!doctype html><title>One</title><h1>Page one</h1>", "text/html");
    });
    s.Get("/two", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("<!doctype html><title>Two</title><h1>Page two</h1>", "text/html");
    });
  }};
  TempHome home_;
};

TEST_F(BrowserDaemonHooks, AProjectHookBlocksNavigateForCallsFromItsProjectOnly) {
  CliRun trust = Run(project_a(), {"trust"});
  ASSERT_EQ(trust.exit_code, 0) << trust.out << trust.err;

  CliRun first = Run(elsewhere(), {"call", "browser_navigate", "url=" + site_.url("/one")});
  ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
  EXPECT_NE(first.out.find("Page one"), std::string::npos) << first.out;
  const pid_t daemon = DaemonPid(home_.talaria_home());
  ASSERT_TRUE(ProcessRuns(daemon));

  CliRun blocked = Run(project_a(), {"call", "browser_navigate", "url=" + site_.url("/two")});
  EXPECT_EQ(blocked.exit_code, 1) << blocked.out << blocked.err;
  EXPECT_NE(blocked.out.find("Blocked by PreToolUse hook"), std::string::npos) << blocked.out;
  EXPECT_NE(blocked.out.find("no browsing from project A"), std::string::npos) << blocked.out;

  // The daemon's page never moved, and another project's call still works on it.
  CliRun snap = Run(elsewhere(), {"call", "browser_snapshot"});
  ASSERT_EQ(snap.exit_code, 0) << snap.out << snap.err;
  EXPECT_NE(snap.out.find("Page one"), std::string::npos) << snap.out;
  EXPECT_EQ(DaemonPid(home_.talaria_home()), daemon) << "one daemon served all three";

  // The config's hook ran three times, each in its caller's cwd.
  const std::vector<std::string> cwds = CwdsSeen();
  ASSERT_EQ(cwds.size(), 3u);
  EXPECT_EQ(std::filesystem::canonical(cwds[0]), std::filesystem::canonical(elsewhere()));
  EXPECT_EQ(std::filesystem::canonical(cwds[1]), std::filesystem::canonical(project_a()));
  EXPECT_EQ(std::filesystem::canonical(cwds[2]), std::filesystem::canonical(elsewhere()));
}

TEST_F(BrowserDaemonHooks, ACallerWithAnotherProviderEnvironmentIsRefused) {
  CliRun first = Run(elsewhere(), {"call", "browser_navigate", "url=" + site_.url("/one")});
  ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
  CliRun other = Run(elsewhere(), {"call", "browser_snapshot"},
                     {"BROWSERBASE_API_KEY=another-key", "TALARIA_CHROMIUM=/nowhere"});
  EXPECT_EQ(other.exit_code, 1) << other.out << other.err;
  EXPECT_NE(other.out.find("BROWSERBASE_API_KEY, TALARIA_CHROMIUM"), std::string::npos)
      << other.out;
  EXPECT_EQ(other.out.find("another-key"), std::string::npos) << "values never travel";
  CliRun same = Run(elsewhere(), {"call", "browser_snapshot"});
  ASSERT_EQ(same.exit_code, 0) << same.out << same.err;
  EXPECT_NE(same.out.find("Page one"), std::string::npos) << same.out;
}

TEST_F(BrowserDaemonHooks, ASocketPathTooLongForSunPathStillReachesTheDaemon) {
  // $TALARIA_HOME/run/browser-cli.sock well past sun_path's 108 bytes.
  const std::string deep = home_.path() + "/" + std::string(60, 'd') + "/" + std::string(60, 'e');
  std::filesystem::create_directories(deep + "/.talaria");
  std::filesystem::copy_file(home_.config_path(), deep + "/.talaria/config.yaml");
  CliInvocation how;
  how.home = deep;
  how.cwd = elsewhere();
  how.timeout = std::chrono::seconds(90);
  const std::string socket = deep + "/.talaria/run/browser-cli.sock";
  ASSERT_GT(socket.size(), 108u);
  CliRun nav = RunTalaria(how, {"call", "browser_navigate", "url=" + site_.url("/one")});
  ASSERT_EQ(nav.exit_code, 0) << nav.out << nav.err;
  EXPECT_TRUE(std::filesystem::is_socket(socket));
  const pid_t daemon = DaemonPid(deep + "/.talaria");
  EXPECT_TRUE(ProcessRuns(daemon));
  CliRun snap = RunTalaria(how, {"call", "browser_snapshot"});
  ASSERT_EQ(snap.exit_code, 0) << snap.out << snap.err;
  EXPECT_NE(snap.out.find("Page one"), std::string::npos) << snap.out;
  EXPECT_EQ(DaemonPid(deep + "/.talaria"), daemon) << "the second call found the first's daemon";
  CliRun close = RunTalaria(how, {"call", "browser_close"});
  EXPECT_EQ(close.exit_code, 0) << close.out << close.err;
  EXPECT_TRUE(WaitFor([&] { return !ProcessRuns(daemon); }, std::chrono::seconds(30)));
  EndBrowserDaemons(deep + "/.talaria");
}

}  // namespace
}  // namespace talaria::testing_cli
