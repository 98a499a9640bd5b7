// The web tools from the command line: `talaria call web_extract` against a local page (opened
// with web.allow_private), `talaria call web_search` against a local SearXNG fake, and the
// refusal of a loopback URL with no allow list (a canary records any connection).
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "cli_harness.h"
#include "support/loopback_http.h"
#include "talaria/base/json.h"

namespace talaria::testing_cli {
namespace {

CliRun RunCli(const TempHome& home, const std::vector<std::string>& args,
              std::vector<std::string> env = {}) {
  CliInvocation how;
  how.home = home.path();
  how.timeout = std::chrono::seconds(30);
  how.extra_env = std::move(env);
  return RunTalaria(how, args);
}

TEST(WebCli, CallWebExtractFetchesAnAllowedLocalPage) {
  talaria_test::LoopbackHttpServer site([](httplib::Server& s) {
    s.Get("/", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(
          "<html><head><title>Local</title></head><body><p>Served here</p></body></html>",
          "text/html; charset=utf-8");
    });
  });
  TempHome home;
  home.WriteConfig("web:\n  allow_private: [\"127.0.0.1:" + std::to_string(site.port()) + "\"]\n");
  const std::vector<std::string> args = {"call", "web_extract", "urls=[\"" + site.url("/") + "\"]"};
  CliRun run = RunCli(home, args);
  ASSERT_EQ(run.exit_code, 0) << Describe(args, run);
  EXPECT_NE(run.out.find("Served here"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("Local"), std::string::npos) << run.out;
}

// The web tools read the config the process loaded: the file --config names, not
// $TALARIA_HOME/config.yaml (which here has no allow list, so the page would be refused).
TEST(WebCli, CallWebExtractReadsTheConfigFileTheCommandLineNames) {
  talaria_test::LoopbackHttpServer site([](httplib::Server& s) {
    s.Get("/", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(
          "<html><head><title>Named</title></head><body><p>From --config</p></body>"
          "</html>",
          "text/html; charset=utf-8");
    });
  });
  TempHome home;
  home.WriteConfig("terminal:\n  backend: local\n");
  const std::string named = home.path() + "/named.yaml";
  std::ofstream(named) << "web:\n  allow_private: [\"127.0.0.1:" << site.port() << "\"]\n";
  const std::vector<std::string> args = {"--config", named, "call", "web_extract",
                                         "urls=[\"" + site.url("/") + "\"]"};
  CliRun run = RunCli(home, args);
  ASSERT_EQ(run.exit_code, 0) << Describe(args, run);
  EXPECT_NE(run.out.find("From --config"), std::string::npos) << run.out;
}

TEST(WebCli, CallWebExtractRefusesLoopbackWithoutTheAllowList) {
  talaria_test::RawReplyServer canary([](int) { return std::string("HTTP/1.1 200 OK\r\n\r\n"); });
  TempHome home;
  const std::vector<std::string> args = {
      "call", "web_extract", "urls=[\"http://localhost:" + std::to_string(canary.port()) + "/\"]"};
  CliRun run = RunCli(home, args);
  EXPECT_EQ(run.exit_code, 1) << Describe(args, run);
  EXPECT_NE(run.out.find("rule: loopback"), std::string::npos) << run.out;
  EXPECT_EQ(canary.connections(), 0);
}

TEST(WebCli, CallWebSearchUsesSearxngAndToolsSaysWhenUnavailable) {
  talaria_test::LoopbackHttpServer fake([](httplib::Server& s) {
    s.Get("/search", [](const httplib::Request& req, httplib::Response& res) {
      res.set_content(R"({"results":[{"title":"Hit for )" + req.get_param_value("q") +
                          R"(","url":"https://x","content":"c","score":1}]})",
                      "application/json");
    });
  });
  TempHome home;
  const std::vector<std::string> args = {"call", "web_search", "query=talaria"};
  CliRun run = RunCli(home, args, {"SEARXNG_URL=" + fake.url()});
  ASSERT_EQ(run.exit_code, 0) << Describe(args, run);
  EXPECT_NE(run.out.find("Hit for talaria"), std::string::npos) << run.out;

  CliRun tools = RunCli(home, {"tools"}, {"SEARXNG_URL="});
  EXPECT_NE(tools.out.find("web_search"), std::string::npos) << tools.out;
}

}  // namespace
}  // namespace talaria::testing_cli
