// The browser tools from the command line against real Chromium and a 127.0.0.1 page:
// `talaria call browser_navigate` (through the browser daemon), a
// navigate/type/press/snapshot/click sequence in one `talaria batch` (one process, one browser),
// and `talaria tools` listing the toolset. Skipped only where no Chromium is installed.
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "browser_daemon_support.h"
#include "cli_harness.h"
#include "support/loopback_http.h"

namespace talaria::testing_cli {
namespace {

class BrowserCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!ChromiumInstalled()) GTEST_SKIP() << "no Chromium installed (apt-get install chromium)";
    home_.WriteConfig("browser:\n  allow_private: [\"127.0.0.1:" + std::to_string(site_.port()) +
                      "\"]\n");
  }
  // `talaria call` left the task's browser daemon running: it goes with the test.
  void TearDown() override { EndBrowserDaemons(home_.talaria_home()); }
  CliRun Run(const std::vector<std::string>& args, std::string stdin_data = "") {
    CliInvocation how;
    how.home = home_.path();
    how.timeout = std::chrono::seconds(90);
    how.stdin_data = std::move(stdin_data);
    return RunTalaria(how, args);
  }

  talaria_test::LoopbackHttpServer site_{[](httplib::Server& s) {
    s.Get("/", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(
          "<!doctype html><title>Shop</title><h1>Shop</h1><form action=/done>"
          "<input name=item placeholder=Item><button>Add</button></form>",
          "text/html");
    });
    s.Get("/done", [](const httplib::Request& req, httplib::Response& res) {
      res.set_content("<!doctype html><title>Done</title><h1>Added " + req.get_param_value("item") +
                          "</h1><button onclick=\"document.title='clicked'\">Again</button>",
                      "text/html");
    });
  }};
  TempHome home_;
};

TEST_F(BrowserCli, CallNavigateReturnsTheSnapshot) {
  const std::vector<std::string> args = {"call", "browser_navigate", "url=" + site_.url("/")};
  CliRun run = Run(args);
  ASSERT_EQ(run.exit_code, 0) << Describe(args, run);
  EXPECT_NE(run.out.find("heading \\\"Shop\\\" [level=1] [ref=e1]"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("textbox \\\"Item\\\" [ref=e2]"), std::string::npos) << run.out;
}

TEST_F(BrowserCli, BatchNavigatesTypesSubmitsAndClicks) {
  const std::string calls =
      "{\"name\":\"browser_navigate\",\"arguments\":{\"url\":\"" + site_.url("/") + "\"}}\n" +
      "{\"name\":\"browser_type\",\"arguments\":{\"ref\":\"@e2\",\"text\":\"apples\"}}\n" +
      "{\"name\":\"browser_press\",\"arguments\":{\"key\":\"Enter\"}}\n" +
      "{\"name\":\"browser_snapshot\",\"arguments\":{}}\n" +
      "{\"name\":\"browser_click\",\"arguments\":{\"ref\":\"@e2\"}}\n" +
      "{\"name\":\"browser_console\",\"arguments\":{\"expression\":\"document.title\"}}\n";
  const std::vector<std::string> args = {"batch", "-"};
  CliRun run = Run(args, calls);
  ASSERT_EQ(run.exit_code, 0) << Describe(args, run);
  EXPECT_NE(run.out.find("Added apples"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("clicked"), std::string::npos) << run.out;
}

TEST_F(BrowserCli, ToolsListsTheBrowserToolset) {
  CliRun run = Run({"tools"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("browser_navigate"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("browser_console"), std::string::npos) << run.out;
}

}  // namespace
}  // namespace talaria::testing_cli
