// The fixture the `talaria call`/`talaria batch` browser tests share: a small shop page on
// 127.0.0.1 (a form whose item comes back on /done, with one more button there), a fresh
// $TALARIA_HOME whose config lets the browser reach that port, and the task's browser daemon
// ended with the test. Skips, saying so, where no Chromium is installed.
// Header-only; include it from test files only (it pulls in httplib.h).
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "browser_daemon_support.h"
#include "cli_harness.h"
#include "support/loopback_http.h"

namespace talaria::testing_cli {

// "/": the shop's form (heading Shop, textbox Item, button Add); "/done?item=X": "Added X" and
// a button that retitles the page "clicked".
inline void AddShopRoutes(httplib::Server& s) {
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
}

class ShopSiteTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!ChromiumInstalled()) GTEST_SKIP() << "no Chromium installed (apt-get install chromium)";
    WriteConfig("");
  }
  // `talaria call` leaves the task's browser daemon running: it goes with the test.
  void TearDown() override { EndBrowserDaemons(home_.talaria_home()); }

  // config.yaml: the browser may reach the shop's port; `more` goes under `browser:`.
  void WriteConfig(const std::string& more) {
    home_.WriteConfig("browser:\n  allow_private: [\"127.0.0.1:" + std::to_string(site_.port()) +
                      "\"]\n" + more);
  }
  CliRun Run(const std::vector<std::string>& args, std::string stdin_data = "") {
    CliInvocation how;
    how.home = home_.path();
    how.timeout = std::chrono::seconds(90);
    how.stdin_data = std::move(stdin_data);
    return RunTalaria(how, args);
  }

  talaria_test::LoopbackHttpServer site_{AddShopRoutes};
  TempHome home_;
};

}  // namespace talaria::testing_cli
