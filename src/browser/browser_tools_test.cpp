// The browser tools through the registry against real Chromium on a 127.0.0.1 page (navigate,
// type, press, click, snapshot, console, images, vision, close), the snapshot budget, key names
// and the lifeline: a process holding a browser is SIGKILLed and no Chromium of its
// remains.
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "browser/chromium_process.h"
#include "browser/key_codes.h"
#include "browser/snapshot_budget.h"
#include "browser/snapshot_ref_test_util.h"
#include "support/fake_browser_cloud.h"
#include "support/local_chromium.h"
#include "support/loopback_http.h"
#include "support/registered_tool.h"
#include "support/self_spawn.h"
#include "support/temp_dir.h"
#include "support/wait_until.h"
#include "talaria/base/file_io.h"
#include "talaria/browser/browser_sessions.h"
#include "talaria/browser/cdp_page_driver.h"
#include "talaria/core/registry.h"

namespace talaria::browser {
namespace {

using namespace std::chrono_literals;
using talaria::test_support::WaitUntil;

// Pids of live processes whose environment says a browser of `owner` (a pid) started them.
std::vector<pid_t> BrowsersOf(pid_t owner) {
  std::vector<pid_t> found;
  const std::string marker = std::string(kOwnerVariable) + "=" + std::to_string(owner) + ":";
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream env(e.path() / "environ", std::ios::binary);
    std::string all((std::istreambuf_iterator<char>(env)), std::istreambuf_iterator<char>());
    if (all.find(marker) == std::string::npos) continue;
    // A zombie waiting for its parent is not a running browser.
    std::ifstream stat(e.path() / "stat");
    std::string line;
    std::getline(stat, line);
    const size_t close = line.rfind(')');
    if (close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'Z') continue;
    found.push_back(std::stoi(name));
  }
  return found;
}

TEST(SnapshotBudget, KeepsSmallSnapshotsWhole) {
  auto fitted = FitSnapshot("- a\n- b", 8000);
  EXPECT_EQ(fitted.text, "- a\n- b");
  EXPECT_FALSE(fitted.truncated);
}

TEST(SnapshotBudget, CutsOnALineAndStoresTheWhole) {
  talaria::test_support::TempDir home;
  ::setenv("TALARIA_HOME", home.path().c_str(), 1);
  std::string big;
  for (int i = 0; i < 1000; ++i)
    big += "- link \"row " + std::to_string(i) + "\" [ref=e" + std::to_string(i) + "]\n";
  auto fitted = FitSnapshot(big, 2000);
  EXPECT_TRUE(fitted.truncated);
  EXPECT_LE(fitted.text.size(), 2000U + 200U);
  EXPECT_NE(fitted.text.find("more lines truncated"), std::string::npos);
  // Every shown line is whole.
  const std::string shown = fitted.text.substr(0, fitted.text.find("\n[..."));
  EXPECT_EQ(shown.back(), ']');
  auto stored = ReadWholeFile(fitted.full_path);
  ASSERT_TRUE(stored.has_value());
  EXPECT_EQ(*stored, big);
}

TEST(KeyCodes, NamesKeysAndModifiers) {
  auto enter = ParseKey("Enter");
  ASSERT_TRUE(enter.has_value());
  EXPECT_EQ(enter->key_code, 13);
  EXPECT_EQ(enter->text, "\r");
  auto ctrl_a = ParseKey("Control+a");
  ASSERT_TRUE(ctrl_a.has_value());
  EXPECT_EQ(ctrl_a->modifiers, 2);
  EXPECT_EQ(ctrl_a->code, "KeyA");
  EXPECT_TRUE(ctrl_a->text.empty());
  EXPECT_EQ(ParseKey("+")->key, "+");
  EXPECT_FALSE(ParseKey("Hyper+x").has_value());
  EXPECT_FALSE(ParseKey("NotAKey").has_value());
}

class BrowserToolsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (FindChromium().empty()) GTEST_SKIP() << "no Chromium installed (apt-get install chromium)";
    ::setenv("TALARIA_HOME", home_.path().c_str(), 1);
    std::ofstream(home_.path() + "/config.yaml")
        << "browser:\n  allow_private: [\"127.0.0.1:" << server_.port() << "\"]\n";
  }
  void TearDown() override { CloseAllBrowserSessions(); }

  Json Call(const std::string& tool, const Json& args, bool* ok = nullptr) {
    ToolContext ctx;
    ctx.task_id = "tools-test";
    Json j = talaria::test_support::CallRegisteredTool(tool, args, ctx, &last_);
    if (ok != nullptr) *ok = last_.ok();
    return j;
  }
  talaria::test_support::TempDir home_;
  talaria_test::LoopbackHttpServer server_{[](httplib::Server& s) {
    s.Get("/", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(
          "<!doctype html><title>Shop</title><h1>Shop</h1><form action=/done>"
          "<input name=item placeholder=Item><button>Add</button></form>"
          "<img src=/i.png alt=logo width=5 height=5><script>console.log('ready')</script>",
          "text/html");
    });
    s.Get("/done", [](const httplib::Request& req, httplib::Response& res) {
      res.set_content("<!doctype html><title>Done</title><h1>Added " + req.get_param_value("item") +
                          "</h1><button onclick=\"this.textContent="
                          "'pressed'\">Press me</button>",
                      "text/html");
    });
  }};
  ToolResult last_;
};

TEST_F(BrowserToolsTest, NavigateTypeSubmitClickThroughTheRegistry) {
  bool ok = false;
  Json nav = Call("browser_navigate", {{"url", server_.url("/")}}, &ok);
  ASSERT_TRUE(ok) << nav.dump();
  EXPECT_EQ(nav["success"], true);
  EXPECT_EQ(nav["title"], "Shop");
  EXPECT_EQ(last_.untrusted_source, "browser");
  const std::string field = test_util::SnapshotToolRefOf(nav["snapshot"], "textbox \"Item\"");
  ASSERT_FALSE(field.empty()) << nav.dump();

  Json typed = Call("browser_type", {{"ref", field}, {"text", "apples"}}, &ok);
  ASSERT_TRUE(ok) << typed.dump();
  EXPECT_EQ(typed["element"], field);
  // Typing changed one line of the page: the answer is that line, not the page again.
  EXPECT_NE(typed.value("snapshot_diff", "").find(": apples"), std::string::npos) << typed.dump();
  EXPECT_FALSE(typed.contains("snapshot")) << typed.dump();

  // Enter submits: the press waits for the new document, whose whole snapshot it returns.
  Json pressed = Call("browser_press", {{"key", "Enter"}}, &ok);
  ASSERT_TRUE(ok) << pressed.dump();
  const std::string snapshot = pressed.value("snapshot", "");
  ASSERT_NE(snapshot.find("Added apples"), std::string::npos) << pressed.dump();
  const std::string button = test_util::SnapshotToolRefOf(snapshot, "Press me");
  ASSERT_FALSE(button.empty()) << snapshot;
  Json clicked = Call("browser_click", {{"ref", button}}, &ok);
  ASSERT_TRUE(ok) << clicked.dump();
  EXPECT_EQ(clicked["clicked"], button);
  Json value =
      Call("browser_console", {{"expression", "document.querySelector('button').textContent"}});
  EXPECT_EQ(value["result"], "pressed");
  EXPECT_EQ(value["result_type"], "string");

  Json back = Call("browser_back", Json::object(), &ok);
  ASSERT_TRUE(ok) << back.dump();
  EXPECT_EQ(back["url"], server_.url("/"));
  Json console = Call("browser_console", {{"clear", true}});
  EXPECT_GE(console["total_messages"].get<int>(), 1) << console.dump();
  Json images = Call("browser_get_images", Json::object());
  EXPECT_EQ(images["count"], 1) << images.dump();

  Json shot = Call("browser_vision", {{"question", "what is shown?"}, {"annotate", true}}, &ok);
  ASSERT_TRUE(ok) << last_.text;
  ASSERT_NE(last_.content, nullptr);
  EXPECT_EQ((*last_.content)[1]["type"], "image");
  EXPECT_TRUE(std::filesystem::exists(shot["screenshot_path"].get<std::string>()));

  EXPECT_EQ(BrowserSessionCount(), 1);
  Json closed = Call("browser_close", Json::object());
  EXPECT_EQ(closed["closed"], true);
  EXPECT_EQ(BrowserSessionCount(), 0);
  EXPECT_TRUE(BrowsersOf(::getpid()).empty() ||
              WaitUntil([] { return BrowsersOf(::getpid()).empty(); }, 10s, 20ms));
}

TEST_F(BrowserToolsTest, BadArgumentsAndRefusalsAreClearErrors) {
  bool ok = true;
  Json r = Call("browser_click", {{"ref", "button"}}, &ok);
  EXPECT_FALSE(ok);
  EXPECT_EQ(r["success"], false);
  EXPECT_NE(r["error"].get<std::string>().find("@e5"), std::string::npos);
  r = Call("browser_navigate", {{"url", "http://169.254.169.254/latest/meta-data/"}}, &ok);
  EXPECT_FALSE(ok);
  EXPECT_NE(r["error"].get<std::string>().find("cloud-metadata"), std::string::npos) << r.dump();
  r = Call("browser_navigate", {{"url", server_.url("/")}}, &ok);
  ASSERT_TRUE(ok) << r.dump();
  // The original's hole (#44731): an expression sending the page to a private address.
  r = Call("browser_console", {{"expression", "location.href='http://10.1.2.3/'"}}, &ok);
  bool refused = !ok;
  if (!refused) {
    r = Call("browser_snapshot", Json::object(), &ok);
    refused = !ok;
  }
  EXPECT_TRUE(refused) << r.dump();
  EXPECT_NE(r["error"].get<std::string>().find("network guard"), std::string::npos) << r.dump();
  r = Call("browser_press", {{"key", "NoSuchKey"}}, &ok);
  EXPECT_FALSE(ok);
}

TEST_F(BrowserToolsTest, TheToolsetIsAvailableWithChromium) {
  auto entry = Registry::Global().GetEntry("browser_navigate");
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(entry->toolset(), "browser");
  EXPECT_TRUE((*entry->check_fn())());
  ::setenv("TALARIA_CHROMIUM", "/nonexistent/chromium", 1);
  EXPECT_FALSE((*entry->check_fn())());
  ASSERT_TRUE(static_cast<bool>(entry->unavailable_reason()));
  EXPECT_NE(entry->unavailable_reason()().find("TALARIA_CHROMIUM"), std::string::npos);
  ::unsetenv("TALARIA_CHROMIUM");
}

// Run by NoChromiumOutlivesAKilledOwner as a child process: holds a browser open until killed.
TEST(BrowserOrphanChild, HoldsABrowser) {
  const char* ready = std::getenv("TALARIA_TEST_BROWSER_READY");
  if (ready == nullptr) GTEST_SKIP();
  auto guard = web::NetworkGuard::Create({});
  ASSERT_TRUE(guard.has_value());
  auto page =
      LaunchLocalChromium({.guard = *guard, .executable = "", .extra_args = {}},
                          {.deadline = std::chrono::steady_clock::now() + 60s, .cancel = {}});
  ASSERT_TRUE(page.has_value()) << page.error().message();
  auto e =
      (*page)->Evaluate("1+1", {.deadline = std::chrono::steady_clock::now() + 30s, .cancel = {}});
  ASSERT_TRUE(e.has_value());
  std::ofstream(ready) << "up";
  std::this_thread::sleep_for(120s);  // the parent kills us long before
}

TEST(BrowserLifeline, NoChromiumOutlivesAKilledOwner) {
  if (FindChromium().empty()) GTEST_SKIP() << "no Chromium installed (apt-get install chromium)";
  talaria::test_support::TempDir dir;
  const std::string ready = dir.path() + "/ready";
  const pid_t child = talaria::test_support::SpawnSelf(
      {.test = "BrowserOrphanChild.HoldsABrowser", .env = {{"TALARIA_TEST_BROWSER_READY", ready}}});
  ASSERT_GT(child, 0);
  const bool up = WaitUntil([&] { return std::filesystem::exists(ready); }, 60s, 10ms);
  if (!up) {
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
    FAIL() << "the child never got its browser up";
  }
  EXPECT_FALSE(BrowsersOf(child).empty());  // the marker finds them while the owner lives
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  const bool gone = WaitUntil([&] { return BrowsersOf(child).empty(); }, 30s, 20ms);
  const auto left = BrowsersOf(child);
  for (pid_t p : left) ::kill(p, SIGKILL);  // never leave them behind, even on failure
  EXPECT_TRUE(gone) << left.size() << " Chromium processes outlived their SIGKILLed owner";
  // The dead owner's profile directory is swept by the next launch.
  auto guard = web::NetworkGuard::Create({});
  ASSERT_TRUE(guard.has_value());
  auto page =
      LaunchLocalChromium({.guard = *guard, .executable = "", .extra_args = {}},
                          {.deadline = std::chrono::steady_clock::now() + 60s, .cancel = {}});
  ASSERT_TRUE(page.has_value()) << page.error().message();
  int dead_profiles = 0;
  std::error_code ec;
  for (const auto& e :
       std::filesystem::directory_iterator(std::filesystem::temp_directory_path(), ec)) {
    std::ifstream owner(e.path() / "talaria-owner");
    pid_t p = 0;
    if (owner >> p && p == child) ++dead_profiles;
  }
  EXPECT_EQ(dead_profiles, 0);
}

}  // namespace
}  // namespace talaria::browser

namespace talaria::browser {
namespace {

// browser.provider: browserbase through the tools: the fake cloud hands out a real Chromium's
// WebSocket, the page is driven over CDP (the guard still judges it), and closing the task's
// browser releases the billed session.
TEST_F(BrowserToolsTest, ACloudProvidersBrowserIsDrivenAndReleased) {
  std::string why;
  auto chromium = talaria_test::LocalChromium::Start(why);
  ASSERT_TRUE(chromium) << why;
  talaria_test::FakeBrowserCloud cloud({.cdp_url = chromium->browser_ws_url()});
  std::ofstream(home_.path() + "/config.yaml")
      << "browser:\n  provider: browserbase\n  allow_private: [\"127.0.0.1:" << server_.port()
      << "\"]\n";
  ::setenv("BROWSERBASE_API_KEY", "bb-test-key", 1);
  ::setenv("BROWSERBASE_PROJECT_ID", "proj-test", 1);
  ::setenv("BROWSERBASE_BASE_URL", cloud.url().c_str(), 1);
  bool ok = false;
  Json nav = Call("browser_navigate", {{"url", server_.url("/")}}, &ok);
  EXPECT_TRUE(ok) << nav.dump();
  EXPECT_EQ(nav.value("title", ""), "Shop") << nav.dump();
  EXPECT_EQ(cloud.sessions_made("browserbase"), 1);
  EXPECT_EQ(cloud.live_sessions("browserbase"), 1);
  Json refused = Call("browser_navigate", {{"url", "http://169.254.169.254/"}}, &ok);
  EXPECT_FALSE(ok) << "the guard judges a cloud browser's pages too: " << refused.dump();
  Call("browser_close", Json::object());
  EXPECT_EQ(cloud.live_sessions("browserbase"), 0) << "closing released the session";
  for (const char* v : {"BROWSERBASE_API_KEY", "BROWSERBASE_PROJECT_ID", "BROWSERBASE_BASE_URL"})
    ::unsetenv(v);
}

}  // namespace
}  // namespace talaria::browser
