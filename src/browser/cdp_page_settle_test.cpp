// Waiting after an action, against real Chromium: a click that navigates (at once or from a
// timer) is followed by the new document; a DOM change a timer or a fetch makes later, or one
// queued where the watch cannot count it, is seen by the next snapshot; and a click that starts
// nothing ends by the page going quiet, not by the bound. No test here sleeps or bounds a time:
// each looks at the snapshot right after the call.
#include <gtest/gtest.h>

#include <functional>
#include <regex>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "browser/cdp_page_driver_impl.h"
#include "browser/chromium_process.h"
#include "browser/snapshot_ref_test_util.h"
#include "support/loopback_http.h"

namespace talaria::browser {
namespace {

using namespace std::chrono_literals;

CallLimits SettleWithin(std::chrono::milliseconds d) {
  return {.deadline = std::chrono::steady_clock::now() + d, .cancel = {}};
}

void SettlePage(httplib::Response& res, const std::string& title, const std::string& body) {
  res.set_content("<!doctype html><html><head><meta charset=utf-8><title>" + title +
                      "</title></head><body>" + body + "</body></html>",
                  "text/html");
}

// Served on 127.0.0.1: the page the actions run on, the page they lead to, a slow response.
std::function<void(httplib::Server&)> SettleRoutes() {
  return [](httplib::Server& s) {
    s.Get("/settle", [](const httplib::Request&, httplib::Response& res) {
      SettlePage(res, "Settle",
                 "<h1>Settle</h1><a href=/next>Next page</a>"
                 "<button onclick=\"setTimeout(()=>{document.getElementById('out').textContent="
                 "'late change'},200)\">Later</button>"
                 "<button onclick=\"fetch('/slow').then(r=>r.text()).then(t=>{"
                 "document.getElementById('out').textContent=t})\">Fetch</button>"
                 "<button onclick=\"setTimeout(()=>{location.href='/next'},150)\">Go later</button>"
                 "<button onclick=\"const c=new MessageChannel();c.port1.onmessage=()=>{"
                 "document.getElementById('out').textContent='posted change'};"
                 "c.port2.postMessage(0)\">Posted</button>"
                 "<button onclick=\"keptTimer(()=>{document.getElementById('out').textContent="
                 "'kept timer change'},0)\">Kept</button>"
                 "<button>Nothing</button><p id=out>waiting</p>"
                 // A reference taken before any watch: its timers are not counted.
                 "<script>const keptTimer = setTimeout;</script>");
    });
    s.Get("/next", [](const httplib::Request&, httplib::Response& res) {
      SettlePage(res, "Next", "<h1>Second page</h1>");
    });
    s.Get("/slow", [](const httplib::Request&, httplib::Response& res) {
      // The server is slow, not the test: the page must wait for this answer.
      std::this_thread::sleep_for(300ms);
      res.set_content("fetched text", "text/plain");
    });
  };
}

class ActionSettleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (FindChromium().empty()) GTEST_SKIP() << "no Chromium installed (apt-get install chromium)";
    auto guard = web::NetworkGuard::Create(
        {.allow_private = {"127.0.0.1:" + std::to_string(server_.port())}, .resolver = nullptr});
    ASSERT_TRUE(guard.has_value()) << guard.error().message();
    auto driver = LaunchLocalChromium({.guard = *guard, .executable = "", .extra_args = {}},
                                      SettleWithin(60s));
    ASSERT_TRUE(driver.has_value()) << driver.error().message();
    driver_ = std::move(*driver);
    page_ = dynamic_cast<CdpPageDriver*>(driver_.get());
    ASSERT_NE(page_, nullptr);
    auto first = page_->Navigate(server_.url("/settle"), SettleWithin(30s));
    ASSERT_TRUE(first.has_value()) << first.error().message();
    start_ = first->text;
  }
  void TearDown() override { driver_.reset(); }

  // Clicks the element whose line holds `needle`, then snapshots at once.
  std::string ClickThenLook(const std::string& needle) {
    const std::string ref = test_util::SnapshotRefOf(start_, needle);
    EXPECT_FALSE(ref.empty()) << needle << " in " << start_;
    Status clicked = page_->Click(ref, SettleWithin(30s));
    EXPECT_TRUE(clicked.ok()) << clicked.message();
    auto snap = page_->TakeSnapshot({}, SettleWithin(30s));
    EXPECT_TRUE(snap.has_value()) << (snap ? "" : snap.error().message());
    return snap ? snap->text : "";
  }

  talaria_test::LoopbackHttpServer server_{SettleRoutes()};
  std::unique_ptr<PageDriver> driver_;
  CdpPageDriver* page_ = nullptr;
  std::string start_;
};

TEST_F(ActionSettleTest, AClickThatNavigatesIsFollowedByTheNewDocument) {
  const std::string after = ClickThenLook("link \"Next page\"");
  EXPECT_NE(after.find("heading \"Second page\""), std::string::npos) << after;
}

TEST_F(ActionSettleTest, ANavigationATimerStartsIsFollowedToo) {
  const std::string after = ClickThenLook("button \"Go later\"");
  EXPECT_NE(after.find("heading \"Second page\""), std::string::npos) << after;
}

TEST_F(ActionSettleTest, ADomChangeATimerMakesLaterIsSeen) {
  const std::string after = ClickThenLook("button \"Later\"");
  EXPECT_NE(after.find("late change"), std::string::npos) << after;
  Json how = page_->LastSettleForTest();
  EXPECT_EQ(how.value("settled", false), true) << how.dump();
}

TEST_F(ActionSettleTest, ADomChangeAFetchMakesIsSeen) {
  const std::string after = ClickThenLook("button \"Fetch\"");
  EXPECT_NE(after.find("fetched text"), std::string::npos) << after;
}

// Work the handler queued where the watch cannot count it (a message channel, a timer through
// a reference the page kept) runs before the flush that ends the wait.
TEST_F(ActionSettleTest, AChangeFromAPostedMessageIsSeen) {
  const std::string after = ClickThenLook("button \"Posted\"");
  EXPECT_NE(after.find("posted change"), std::string::npos) << after;
}

TEST_F(ActionSettleTest, AChangeFromAZeroTimerThePageKeptIsSeen) {
  const std::string after = ClickThenLook("button \"Kept\"");
  EXPECT_NE(after.find("kept timer change"), std::string::npos) << after;
}

TEST_F(ActionSettleTest, AClickThatStartsNothingEndsByQuietNotByTheBound) {
  const std::string after = ClickThenLook("button \"Nothing\"");
  EXPECT_NE(after.find("text: waiting"), std::string::npos) << after;
  Json how = page_->LastSettleForTest();
  EXPECT_EQ(how.value("settled", false), true) << how.dump();
  EXPECT_EQ(how.value("mutations", -1), 0) << how.dump();
  // The page's functions are its own again once the watch ended.
  auto native = page_->Evaluate(
      "String(window.setTimeout).includes('[native code]') && "
      "String(XMLHttpRequest.prototype.send).includes('[native code]')",
      SettleWithin(10s));
  ASSERT_TRUE(native.has_value()) << native.error().message();
  EXPECT_EQ(native->value, true);
}

}  // namespace
}  // namespace talaria::browser
