// Frames the page script cannot enter and closed shadow roots, with real Debian Chromium: a page
// on 127.0.0.1 holding a frame from 127.0.0.2 (another site, so with site isolation a renderer
// of its own) with a form the test types into and submits, a frame nested inside it from the
// first origin again, a frame that navigates, and a closed shadow root with a button.
#include <gtest/gtest.h>

#include <stdlib.h>

#include <fstream>
#include <mutex>
#include <regex>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "browser/cdp_page_driver_impl.h"
#include "browser/chromium_process.h"
#include "browser/snapshot_ref_test_util.h"
#include "support/loopback_http.h"
#include "support/temp_dir.h"
#include "support/wait_until.h"
#include "talaria/browser/browser_sessions.h"
#include "talaria/core/registry.h"

namespace talaria::browser {
namespace frames_test {

using namespace std::chrono_literals;
using talaria::test_support::WaitUntil;
using talaria_test::LoopbackHttpServer;

CallLimits Soon(std::chrono::milliseconds d) {
  return {.deadline = std::chrono::steady_clock::now() + d, .cancel = {}};
}

size_t IndentOf(const std::string& snapshot, const std::string& needle) {
  std::istringstream lines(snapshot);
  for (std::string line; std::getline(lines, line);) {
    if (line.find(needle) != std::string::npos) return line.find_first_not_of(' ');
  }
  return std::string::npos;
}

void Page(httplib::Response& res, const std::string& body) {
  res.set_content("<!doctype html><html><head><meta charset=utf-8><title>t</title></head><body>" +
                      body + "</body></html>",
                  "text/html");
}

// A cpp-httplib server on 127.0.0.2 (still loopback; another site than 127.0.0.1 to Chromium).
class SecondSiteServer {
 public:
  explicit SecondSiteServer(const std::function<void(httplib::Server&)>& routes) {
    routes(server_);
    port_ = server_.bind_to_any_port("127.0.0.2");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    for (int i = 0; i < 5000 && !server_.is_running(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  SecondSiteServer(const SecondSiteServer&) = delete;
  SecondSiteServer& operator=(const SecondSiteServer&) = delete;
  ~SecondSiteServer() {
    server_.stop();
    thread_.join();
  }
  int port() const { return port_; }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

// In a framed page: reports the text of nodes added to it (screenshot labels) to the top page.
constexpr const char* kLabelWatcher =
    "<script>new MutationObserver((rs)=>{for(const r of rs)for(const n of r.addedNodes)"
    "top.postMessage(n.textContent||'','*')}).observe(document.documentElement,"
    "{childList:true,subtree:true})</script>";

class FramePages {
 public:
  FramePages()
      : top_([this](httplib::Server& s) {
          s.Get("/top", [this](const httplib::Request&, httplib::Response& res) {
            // The frames tell the page which screenshot labels appeared in them.
            Page(res, "<h1>Top</h1><iframe title=shop width=600 height=400 src='" +
                          other_url("/shop") +
                          "'></iframe><p id=out></p><script>window.seenLabels=[];"
                          "addEventListener('message',(e)=>{seenLabels.push(String(e.data))})"
                          "</script>");
          });
          s.Get("/nested", [](const httplib::Request&, httplib::Response& res) {
            Page(res,
                 "<button onclick=\"this.textContent='nested pressed'\">Nested button</button>" +
                     std::string(kLabelWatcher));
          });
          s.Get("/closed-in-frame", [](const httplib::Request&, httplib::Response& res) {
            Page(res,
                 "<h1>Outer</h1><iframe title=same width=400 height=200 src=/closed></iframe>");
          });
          s.Get("/closed", [](const httplib::Request&, httplib::Response& res) {
            Page(res,
                 "<div id=host></div><p id=out></p><script>const r=document.getElementById('host')"
                 ".attachShadow({mode:'closed'});r.innerHTML='<h2>Hidden heading</h2><button>"
                 "Closed button</button>';r.querySelector('button').onclick=()=>document."
                 "getElementById('out').textContent='closed clicked';</script>");
          });
        }),
        other_([this](httplib::Server& s) {
          s.Get("/shop", [this](const httplib::Request&, httplib::Response& res) {
            Page(res,
                 "<form action=/sent><label>Item <input name=item></label><button type=submit>"
                 "Order</button></form><a href=/elsewhere>Elsewhere</a><iframe title=inner "
                 "width=300 height=100 src='" +
                     top_.url("/nested") + "'></iframe>" + kLabelWatcher);
          });
          s.Get("/sent", [this](const httplib::Request& req, httplib::Response& res) {
            {
              std::lock_guard lock(mu_);
              ordered_ = req.get_param_value("item");
            }
            Page(res, "<h2>Ordered " + req.get_param_value("item") + "</h2>");
          });
          s.Get("/elsewhere", [](const httplib::Request&, httplib::Response& res) {
            Page(res, "<h2>Elsewhere now</h2><button>Far button</button>");
          });
        }) {}

  std::string url(const std::string& path) const { return top_.url(path); }
  // Another site, so Chromium gives it a renderer of its own.
  std::string other_url(const std::string& path) const {
    return "http://127.0.0.2:" + std::to_string(other_.port()) + path;
  }
  std::string ordered() {
    std::lock_guard lock(mu_);
    return ordered_;
  }

 private:
  std::mutex mu_;
  std::string ordered_;
  LoopbackHttpServer top_;
  SecondSiteServer other_;
};

class CdpFramesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (FindChromium().empty()) GTEST_SKIP() << "no Chromium installed (apt-get install chromium)";
    auto guard = web::NetworkGuard::Create({.allow_private = {"127.0.0.0/8"}, .resolver = nullptr});
    ASSERT_TRUE(guard.has_value()) << guard.error().message();
    auto driver = LaunchLocalChromium(
        {.guard = *guard, .executable = "", .extra_args = {"--site-per-process"}}, Soon(60s));
    ASSERT_TRUE(driver.has_value()) << driver.error().message();
    driver_ = std::move(*driver);
    page_ = dynamic_cast<CdpPageDriver*>(driver_.get());
    ASSERT_NE(page_, nullptr);
  }

  Snapshot Snap() {
    auto s = page_->TakeSnapshot({}, Soon(20s));
    EXPECT_TRUE(s.has_value()) << s.error().message();
    return s ? *s : Snapshot{};
  }
  std::string Eval(const std::string& js) {
    auto e = page_->Evaluate(js, Soon(10s));
    if (!e) return "error: " + e.error().message();
    return e->value.is_string() ? e->value.get<std::string>() : e->value.dump();
  }
  // Navigates to /top and waits until the snapshot reaches the nested frame.
  Snapshot OpenShop() {
    Snapshot s;
    EXPECT_TRUE(WaitUntil(
        [&] {
          auto n = page_->Navigate(pages_.url("/top"), Soon(30s));
          if (n) s = *n;
          return n && n->text.find("Nested button") != std::string::npos;
        },
        20s, 50ms))
        << s.text;
    return s;
  }

  FramePages pages_;
  std::unique_ptr<PageDriver> driver_;
  CdpPageDriver* page_ = nullptr;
};

TEST_F(CdpFramesTest, SplicesAnOutOfProcessFrameAndItsNestedFrameUnderTheirIframes) {
  Snapshot s = OpenShop();
  // The shop really runs in a renderer of its own (and so does the frame nested in it).
  EXPECT_GE(page_->OutOfProcessFramesForTest(), 1U);
  const std::string shop = test_util::SnapshotRefOf(s.text, "iframe \"shop\"");
  const std::string item = test_util::SnapshotRefOf(s.text, "textbox \"Item\"");
  const std::string nested = test_util::SnapshotRefOf(s.text, "Nested button");
  ASSERT_FALSE(shop.empty()) << s.text;
  EXPECT_TRUE(std::regex_match(item, std::regex("f[0-9]+e[0-9]+"))) << s.text;
  EXPECT_TRUE(std::regex_match(nested, std::regex("f[0-9]+e[0-9]+"))) << s.text;
  EXPECT_NE(item.substr(0, item.find('e')), nested.substr(0, nested.find('e')));
  EXPECT_GT(IndentOf(s.text, "textbox \"Item\""), IndentOf(s.text, "iframe \"shop\""));
  EXPECT_GT(IndentOf(s.text, "Nested button"), IndentOf(s.text, "iframe \"inner\""));
  EXPECT_EQ(s.text.find("not reached"), std::string::npos) << s.text;
  // Stable across snapshots of the same documents.
  Snapshot again = Snap();
  EXPECT_EQ(test_util::SnapshotRefOf(again.text, "textbox \"Item\""), item);
  EXPECT_EQ(test_util::SnapshotRefOf(again.text, "Nested button"), nested);
  // A click two frames deep lands in the right frame.
  ASSERT_TRUE(page_->Click(nested, Soon(10s)).ok());
  EXPECT_TRUE(WaitUntil([&] { return Snap().text.find("nested pressed") != std::string::npos; },
                        10s, 20ms));
}

TEST_F(CdpFramesTest, AnnotatedScreenshotsLabelElementsInsideOutOfProcessFrames) {
  Snapshot s = OpenShop();
  const std::string item = test_util::SnapshotRefOf(s.text, "textbox \"Item\"");
  const std::string nested = test_util::SnapshotRefOf(s.text, "Nested button");
  ASSERT_FALSE(item.empty()) << s.text;
  auto png = page_->Screenshot(true, Soon(20s));
  ASSERT_TRUE(png.has_value()) << png.error().message();
  EXPECT_EQ(png->substr(1, 3), "PNG");
  // Each frame drew its elements' labels, named as the model knows them, and removed them.
  std::string seen;
  EXPECT_TRUE(WaitUntil(
      [&] {
        seen = Eval("seenLabels.join(' ')");
        return seen.find("[" + item + "]") != std::string::npos &&
               seen.find("[" + nested + "]") != std::string::npos;
      },
      10s, 20ms))
      << seen;
  EXPECT_EQ(Snap().text, s.text) << "the labels are gone after the screenshot";
}

TEST_F(CdpFramesTest, TypesIntoAFormInACrossOriginFrameAndSubmitsIt) {
  Snapshot s = OpenShop();
  const std::string item = test_util::SnapshotRefOf(s.text, "textbox \"Item\"");
  const std::string order = test_util::SnapshotRefOf(s.text, "button \"Order\"");
  ASSERT_FALSE(item.empty()) << s.text;
  ASSERT_FALSE(order.empty()) << s.text;
  ASSERT_TRUE(page_->Type(item, "old", Soon(10s)).ok());
  Status typed = page_->Type(item, "blue kettle", Soon(10s));  // cleared first
  ASSERT_TRUE(typed.ok()) << typed.message();
  EXPECT_NE(Snap().text.find("textbox \"Item\" [focused] [ref=" + item + "]: blue kettle"),
            std::string::npos)
      << Snap().text;
  ASSERT_TRUE(page_->Click(order, Soon(10s)).ok());
  EXPECT_TRUE(WaitUntil([&] { return pages_.ordered() == "blue kettle"; }, 20s, 20ms));
  Snapshot after;
  EXPECT_TRUE(WaitUntil(
      [&] {
        after = Snap();
        return after.text.find("Ordered blue kettle") != std::string::npos;
      },
      20s, 20ms))
      << after.text;
  EXPECT_EQ(Eval("location.pathname"), "/top");  // the top page stayed
}

TEST_F(CdpFramesTest, AFrameThatNavigatesGetsNewRefsAndTheOldOnesFail) {
  Snapshot s = OpenShop();
  const std::string item = test_util::SnapshotRefOf(s.text, "textbox \"Item\"");
  const std::string link = test_util::SnapshotRefOf(s.text, "link \"Elsewhere\"");
  ASSERT_FALSE(link.empty()) << s.text;
  ASSERT_TRUE(page_->Click(link, Soon(10s)).ok());
  Snapshot after;
  ASSERT_TRUE(WaitUntil(
      [&] {
        after = Snap();
        return after.text.find("Far button") != std::string::npos;
      },
      20s, 20ms))
      << after.text;
  const std::string far = test_util::SnapshotRefOf(after.text, "Far button");
  EXPECT_TRUE(std::regex_match(far, std::regex("f[0-9]+e[0-9]+"))) << after.text;
  Status stale = page_->Click(item, Soon(10s));
  EXPECT_EQ(stale.code(), StatusCode::kInvalidArgument) << stale.message();
  EXPECT_TRUE(page_->Click(far, Soon(10s)).ok());
  // A scope inside the frame snapshots only that frame's part, with its refs.
  auto scoped = page_->TakeSnapshot({.full = false, .scope = far}, Soon(10s));
  ASSERT_TRUE(scoped.has_value()) << scoped.error().message();
  EXPECT_NE(scoped->text.find("[ref=" + far + "]"), std::string::npos) << scoped->text;
  EXPECT_EQ(scoped->text.find("Top"), std::string::npos) << scoped->text;
}

TEST_F(CdpFramesTest, ReachesAClosedShadowRootAndClicksItsButton) {
  auto s = page_->Navigate(pages_.url("/closed"), Soon(30s));
  ASSERT_TRUE(s.has_value()) << s.error().message();
  EXPECT_EQ(Eval("document.getElementById('host').shadowRoot"), "null");  // really closed
  EXPECT_NE(s->text.find("heading \"Hidden heading\""), std::string::npos) << s->text;
  const std::string button = test_util::SnapshotRefOf(s->text, "button \"Closed button\"");
  ASSERT_FALSE(button.empty()) << s->text;
  ASSERT_TRUE(page_->Click(button, Soon(10s)).ok());
  EXPECT_TRUE(WaitUntil(
      [&] { return Eval("document.getElementById('out').textContent") == "closed clicked"; }, 10s,
      10ms));
  // A root attached later is found on the next snapshot.
  Eval(
      "const h=document.createElement('div');document.body.append(h);"
      "h.attachShadow({mode:'closed'}).innerHTML='<button>Later button</button>';1");
  EXPECT_NE(Snap().text.find("Later button"), std::string::npos);
}

TEST_F(CdpFramesTest, ReachesAClosedShadowRootInsideASameOriginFrame) {
  Snapshot s;
  // The frame's document may still be loading when the outer page's load fires.
  ASSERT_TRUE(WaitUntil(
      [&] {
        auto n = page_->Navigate(pages_.url("/closed-in-frame"), Soon(30s));
        if (n) s = *n;
        return n && n->text.find("Closed button") != std::string::npos;
      },
      20s, 50ms))
      << s.text;
  // Walked in place (the same world): a plain ref, indented under its iframe.
  const std::string button = test_util::SnapshotRefOf(s.text, "button \"Closed button\"");
  ASSERT_TRUE(std::regex_match(button, std::regex("e[0-9]+"))) << s.text;
  EXPECT_GT(IndentOf(s.text, "Closed button"), IndentOf(s.text, "iframe \"same\""));
  ASSERT_TRUE(page_->Click(button, Soon(10s)).ok());
  EXPECT_EQ(Eval("document.querySelector('iframe').contentDocument.getElementById('out')"
                 ".textContent"),
            "closed clicked");
}

}  // namespace frames_test
}  // namespace talaria::browser

namespace talaria::browser {
namespace frames_test {

// The same through the registry: the model's `@fKeN` refs, and the snapshot each action returns.
class BrowserFrameToolsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (FindChromium().empty()) GTEST_SKIP() << "no Chromium installed (apt-get install chromium)";
    ::setenv("TALARIA_HOME", home_.path().c_str(), 1);
    std::ofstream(home_.path() + "/config.yaml")
        << "browser:\n  allow_private: [\"127.0.0.0/8\"]\n";
  }
  void TearDown() override { CloseAllBrowserSessions(); }
  Json Call(const std::string& tool, const Json& args) {
    auto entry = Registry::Global().GetEntry(tool);
    EXPECT_NE(entry, nullptr) << tool;
    if (entry == nullptr) return Json();
    ToolContext ctx;
    ctx.task_id = "frame-tools-test";
    ToolResult r = entry->handler()(args, ctx);
    auto j = ParseJson(r.text);
    EXPECT_TRUE(j.has_value()) << r.text;
    return j.has_value() ? *j : Json();
  }

  talaria::test_support::TempDir home_;
  FramePages pages_;
};

TEST_F(BrowserFrameToolsTest, TypesAndClicksInAFrameByItsRef) {
  Json nav;
  ASSERT_TRUE(WaitUntil(
      [&] {
        nav = Call("browser_navigate", {{"url", pages_.url("/top")}});
        return nav.value("snapshot", "").find("Nested button") != std::string::npos;
      },
      20s, 50ms))
      << nav.dump();
  const std::string item = "@" + test_util::SnapshotRefOf(nav["snapshot"], "textbox \"Item\"");
  const std::string order = "@" + test_util::SnapshotRefOf(nav["snapshot"], "button \"Order\"");
  ASSERT_TRUE(std::regex_match(item, std::regex("@f[0-9]+e[0-9]+"))) << nav.dump();
  Json typed = Call("browser_type", {{"ref", item}, {"text", "teapot"}});
  ASSERT_EQ(typed["success"], true) << typed.dump();
  // The same document: the answer is what changed, the frame's field among it.
  EXPECT_NE(typed.value("snapshot_diff", "").find(": teapot"), std::string::npos) << typed.dump();
  Json clicked = Call("browser_click", {{"ref", order}});
  ASSERT_EQ(clicked["success"], true) << clicked.dump();
  EXPECT_TRUE(clicked.contains("snapshot") || clicked.contains("snapshot_diff")) << clicked.dump();
  EXPECT_TRUE(WaitUntil([&] { return pages_.ordered() == "teapot"; }, 20s, 20ms));
  Json bad = Call("browser_click", {{"ref", "@f99e1"}});
  EXPECT_EQ(bad["success"], false);
  EXPECT_NE(bad.value("error", "").find("new snapshot"), std::string::npos) << bad.dump();
}

}  // namespace frames_test
}  // namespace talaria::browser
