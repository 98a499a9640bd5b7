// A cloud browser session whose talaria was SIGKILLed is released by the next talaria, for each
// of the three REST providers: `talaria call browser_navigate` (through its browser daemon)
// creates a session at the local fake of the provider's API (which hands out a real Chromium's
// CDP URL), the daemon is killed with SIGKILL (it cannot release anything), and the next call's
// daemon finds the record under $TALARIA_HOME/run/cloud-browsers and releases that session
// before making its own. Skipped only without Chromium.
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <string>
#include <vector>

#include "browser_daemon_support.h"
#include "cli_harness.h"
#include "support/fake_browser_cloud.h"
#include "support/local_chromium.h"
#include "support/loopback_http.h"

namespace talaria::testing_cli {
namespace {

using namespace std::chrono_literals;

class BrowserCloudLeftovers : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (!ChromiumInstalled()) GTEST_SKIP() << "no Chromium installed (apt-get install chromium)";
    std::string why;
    chromium_ = talaria_test::LocalChromium::Start(why);
    ASSERT_TRUE(chromium_) << why;
    cloud_ = std::make_unique<talaria_test::FakeBrowserCloud>(
        talaria_test::FakeCloudOptions{.cdp_url = chromium_->browser_ws_url()});
    home_.WriteConfig("browser:\n  provider: " + GetParam() +
                      "\n  allow_private: [\"127.0.0.1:" + std::to_string(site_.port()) + "\"]\n");
  }
  void TearDown() override { EndBrowserDaemons(home_.talaria_home()); }

  std::vector<std::string> ProviderEnv() const {
    const std::string p = GetParam();
    if (p == "browserbase") {
      return {"BROWSERBASE_API_KEY=bb-test-key", "BROWSERBASE_PROJECT_ID=proj-test",
              "BROWSERBASE_BASE_URL=" + cloud_->url()};
    }
    if (p == "browser-use") {
      return {"BROWSER_USE_API_KEY=bu-test-key",
              "BROWSER_USE_BASE_URL=" + cloud_->url() + "/api/v3"};
    }
    return {"FIRECRAWL_API_KEY=fc-test-key", "FIRECRAWL_API_URL=" + cloud_->url()};
  }
  CliRun Call(const std::vector<std::string>& args) {
    CliInvocation how;
    how.home = home_.path();
    how.timeout = std::chrono::seconds(90);
    how.extra_env = ProviderEnv();
    std::vector<std::string> full = {"call"};
    full.insert(full.end(), args.begin(), args.end());
    return RunTalaria(how, full);
  }
  std::vector<std::string> Records() const {
    std::vector<std::string> names;
    std::error_code ec;
    for (const auto& e :
         std::filesystem::directory_iterator(home_.talaria_home() + "/run/cloud-browsers", ec)) {
      names.push_back(e.path().filename());
    }
    return names;
  }

  talaria_test::LoopbackHttpServer site_{[](httplib::Server& s) {
    s.Get("/", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("<!doctype html><title>Shop</title><h1>Shop</h1>", "text/html");
    });
  }};
  TempHome home_;
  std::unique_ptr<talaria_test::LocalChromium> chromium_;
  std::unique_ptr<talaria_test::FakeBrowserCloud> cloud_;
};

TEST_P(BrowserCloudLeftovers, ASigkilledOwnersSessionIsReleasedByTheNextStart) {
  const std::string provider = GetParam();
  CliRun first = Call({"browser_navigate", "url=" + site_.url("/")});
  ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
  EXPECT_NE(first.out.find("Shop"), std::string::npos) << first.out;
  ASSERT_EQ(cloud_->live_sessions(provider), 1);
  const std::vector<std::string> recorded = Records();
  ASSERT_EQ(recorded.size(), 1u) << "the session is on record while its owner runs";
  EXPECT_TRUE(recorded[0].starts_with(provider + ".")) << recorded[0];

  const pid_t daemon = DaemonPid(home_.talaria_home());
  ASSERT_TRUE(ProcessRuns(daemon));
  ASSERT_EQ(::kill(daemon, SIGKILL), 0);
  ASSERT_TRUE(WaitFor([&] { return !ProcessRuns(daemon); }, 30s));
  EXPECT_EQ(cloud_->live_sessions(provider), 1) << "a SIGKILLed owner released nothing";

  CliRun second = Call({"browser_navigate", "url=" + site_.url("/")});
  ASSERT_EQ(second.exit_code, 0) << second.out << second.err;
  EXPECT_EQ(cloud_->sessions_made(provider), 2);
  EXPECT_EQ(cloud_->live_sessions(provider), 1) << "the leftover was released, the new one runs";
  const std::vector<std::string> now = Records();
  ASSERT_EQ(now.size(), 1u);
  EXPECT_NE(now[0], recorded[0]) << "the leftover's record is gone, the new session's is there";

  CliRun close = Call({"browser_close"});
  ASSERT_EQ(close.exit_code, 0) << close.out << close.err;
  EXPECT_EQ(cloud_->live_sessions(provider), 0);
  EXPECT_TRUE(WaitFor([&] { return Records().empty(); }, 30s));
}

INSTANTIATE_TEST_SUITE_P(Providers, BrowserCloudLeftovers,
                         ::testing::Values("browserbase", "browser-use", "firecrawl"),
                         [](const auto& info) {
                           std::string n = info.param;
                           std::erase(n, '-');
                           return n;
                         });

}  // namespace
}  // namespace talaria::testing_cli
