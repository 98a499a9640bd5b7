// The browser tools from the command line against real Chromium and a 127.0.0.1 page:
// `talaria call browser_navigate` (through the browser daemon), a
// navigate/type/press/snapshot/click sequence in one `talaria batch` (one process, one browser),
// and `talaria tools` listing the toolset. Skipped only where no Chromium is installed.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "browser_shop_fixture.h"

namespace talaria::testing_cli {
namespace {

using BrowserCli = ShopSiteTest;

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
