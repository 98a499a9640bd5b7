// The CDP page driver against real Debian Chromium on pages served from 127.0.0.1: forms, links
// and back, scrolling, dialogs, iframes, shadow DOM, console and errors, images, the network
// guard on navigations the page starts and on redirects, a page that never loads, a renderer
// crash. Skipped (with the reason) only where no Chromium is installed.
#include <gtest/gtest.h>

#include <atomic>
#include <regex>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "browser/cdp_page_driver_impl.h"
#include "browser/chromium_process.h"
#include "browser/snapshot_ref_test_util.h"
#include "support/loopback_http.h"
#include "support/wait_until.h"

namespace talaria::browser {
namespace {

using namespace std::chrono_literals;
using talaria::test_support::WaitUntil;
using talaria_test::LoopbackHttpServer;

CallLimits Within(std::chrono::milliseconds d) {
  return {.deadline = std::chrono::steady_clock::now() + d, .cancel = {}};
}

void Html(httplib::Response& res, const std::string& body) {
  res.set_content("<!doctype html><html><head><meta charset=utf-8><title>t</title></head><body>" +
                      body + "</body></html>",
                  "text/html");
}

class Pages {
 public:
  Pages()
      : other_([](httplib::Server& s) {
          s.Get("/frame", [](const httplib::Request&, httplib::Response& res) {
            Html(res, "<button>Other origin button</button>");
          });
        }),
        canary_([this](httplib::Server& s) {
          s.Get(".*", [this](const httplib::Request&, httplib::Response& res) {
            ++canary_hits;
            Html(res, "canary");
          });
        }),
        server_([this](httplib::Server& s) { Routes(s); }) {}

  std::string url(const std::string& path) const { return server_.url(path); }
  std::string origin() const { return "127.0.0.1:" + std::to_string(server_.port()); }
  std::atomic<int> canary_hits{0};
  std::atomic<bool> release_hang{false};

 private:
  void Routes(httplib::Server& s) {
    s.Get("/form", [](const httplib::Request&, httplib::Response& res) {
      Html(res,
           "<h1>Search</h1><form action=/results><label>Query <input name=q></label>"
           "<button type=submit>Go</button></form>");
    });
    s.Get("/results", [](const httplib::Request& req, httplib::Response& res) {
      Html(res, "<h1>Results for " + req.get_param_value("q") + "</h1><a href=/form>again</a>");
    });
    s.Get("/a", [](const httplib::Request&, httplib::Response& res) {
      Html(res, "<h1>Page A</h1><a href=/b>to b</a>");
    });
    s.Get("/b",
          [](const httplib::Request&, httplib::Response& res) { Html(res, "<h1>Page B</h1>"); });
    s.Get("/long", [](const httplib::Request&, httplib::Response& res) {
      Html(res, "<div style='height:5000px'>tall</div>");
    });
    s.Get("/dialog", [](const httplib::Request&, httplib::Response& res) {
      Html(res, "<button onclick=\"alert('hello there');document.title='after'\">Alert</button>");
    });
    s.Get("/frames", [this](const httplib::Request&, httplib::Response& res) {
      Html(res, "<iframe title=same src=/inner></iframe><iframe title=other src='" +
                    other_.url("/frame") + "'></iframe><p id=out></p>");
    });
    s.Get("/inner", [](const httplib::Request&, httplib::Response& res) {
      Html(res,
           "<button onclick=\"parent.document.getElementById('out').textContent='inner "
           "clicked'\">Inner button</button>");
    });
    s.Get("/shadow", [](const httplib::Request&, httplib::Response& res) {
      Html(res,
           "<x-card></x-card><p id=out></p><script>customElements.define('x-card', class extends "
           "HTMLElement{connectedCallback(){const r=this.attachShadow({mode:'open'});"
           "r.innerHTML='<button>Shadow button</button>';r.querySelector('button').onclick=()=>"
           "document.getElementById('out').textContent='shadow clicked';}});</script>");
    });
    s.Get("/console", [](const httplib::Request&, httplib::Response& res) {
      Html(res,
           "<script>console.log('hello', 42);console.warn('careful');"
           "setTimeout(()=>{throw new Error('boom')},0);</script>");
    });
    s.Get("/images", [](const httplib::Request&, httplib::Response& res) {
      Html(res,
           "<img src=/pixel.png alt='a pixel'><img src='data:image/gif;base64,R0lGODlhAQABAAAAACw="
           "' alt=inline>");
    });
    s.Get("/pixel.png", [](const httplib::Request&, httplib::Response& res) {
      // A 1x1 PNG.
      static const unsigned char kPng[] = {
          0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48,
          0x44, 0x52, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00,
          0x00, 0x1f, 0x15, 0xc4, 0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78,
          0x9c, 0x63, 0xf8, 0xcf, 0xc0, 0xf0, 0x1f, 0x00, 0x05, 0x00, 0x01, 0xff, 0x89, 0x99,
          0x3d, 0x1d, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82};
      res.set_content(std::string(reinterpret_cast<const char*>(kPng), sizeof kPng), "image/png");
    });
    s.Get("/self-nav", [this](const httplib::Request&, httplib::Response& res) {
      Html(res, "<h1>Leaving</h1><script>setTimeout(()=>{location.href='" + canary_.url("/x") +
                    "'},10)</script>");
    });
    s.Get("/to-metadata", [](const httplib::Request&, httplib::Response& res) {
      res.set_redirect("http://169.254.169.254/latest/meta-data/");
    });
    s.Get("/to-canary", [this](const httplib::Request&, httplib::Response& res) {
      res.set_redirect(canary_.url("/redirected"));
    });
    s.Get("/hang", [this](const httplib::Request&, httplib::Response& res) {
      WaitUntil([&] { return release_hang.load(); }, 20s, 10ms);
      Html(res, "late");
    });
    s.Get("/many", [](const httplib::Request&, httplib::Response& res) {
      std::string rows;
      for (int i = 0; i < 400; ++i)
        rows += "<li><a href=#" + std::to_string(i) + ">row " + std::to_string(i) + "</a></li>";
      Html(res, "<ul>" + rows + "</ul>");
    });
  }

  LoopbackHttpServer other_;
  LoopbackHttpServer canary_;
  LoopbackHttpServer server_;
};

class CdpPageDriverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (FindChromium().empty()) GTEST_SKIP() << "no Chromium installed (apt-get install chromium)";
    auto guard =
        web::NetworkGuard::Create({.allow_private = {pages_.origin()}, .resolver = nullptr});
    ASSERT_TRUE(guard.has_value()) << guard.error().message();
    auto driver =
        LaunchLocalChromium({.guard = *guard, .executable = "", .extra_args = {}}, Within(60s));
    ASSERT_TRUE(driver.has_value()) << driver.error().message();
    driver_ = std::move(*driver);
    page_ = dynamic_cast<CdpPageDriver*>(driver_.get());
    ASSERT_NE(page_, nullptr);
  }
  void TearDown() override {
    pages_.release_hang = true;
    driver_.reset();
  }
  Snapshot Go(const std::string& path) {
    auto s = page_->Navigate(pages_.url(path), Within(30s));
    EXPECT_TRUE(s.has_value()) << path << ": " << (s ? "" : s.error().message());
    return s ? *s : Snapshot{};
  }
  std::string Eval(const std::string& js) {
    auto e = page_->Evaluate(js, Within(10s));
    if (!e) return "error: " + e.error().message();
    return e->value.is_string() ? e->value.get<std::string>() : e->value.dump();
  }

  Pages pages_;
  std::unique_ptr<PageDriver> driver_;
  CdpPageDriver* page_ = nullptr;
};

TEST_F(CdpPageDriverTest, TypesIntoAFormAndSubmitsWithEnter) {
  Snapshot s = Go("/form");
  EXPECT_NE(s.text.find("heading \"Search\""), std::string::npos) << s.text;
  const std::string box = test_util::SnapshotRefOf(s.text, "textbox \"Query\"");
  ASSERT_FALSE(box.empty()) << s.text;
  ASSERT_TRUE(page_->Type(box, "old", Within(10s)).ok());
  ASSERT_TRUE(page_->Type(box, "red shoes", Within(10s)).ok());  // cleared first
  ASSERT_TRUE(page_->Press("Enter", Within(10s)).ok());
  ASSERT_TRUE(WaitUntil(
      [&] {
        auto snap = page_->TakeSnapshot({}, Within(10s));
        return snap && snap->text.find("Results for red shoes") != std::string::npos;
      },
      20s, 20ms));
}

TEST_F(CdpPageDriverTest, ClicksALinkAndGoesBack) {
  Snapshot a = Go("/a");
  const std::string link = test_util::SnapshotRefOf(a.text, "link \"to b\"");
  ASSERT_FALSE(link.empty()) << a.text;
  ASSERT_TRUE(page_->Click(link, Within(10s)).ok());
  ASSERT_TRUE(
      WaitUntil([&] { return Eval("document.title + location.pathname") == "t/b"; }, 20s, 20ms));
  auto back = page_->Back(Within(20s));
  ASSERT_TRUE(back.has_value()) << back.error().message();
  EXPECT_EQ(*back, pages_.url("/a"));
  EXPECT_EQ(Eval("location.pathname"), "/a");
  auto none = page_->Back(Within(10s));
  (void)none;  // about:blank may or may not be in history; either answer is fine
}

TEST_F(CdpPageDriverTest, RefsStayStableAcrossSnapshotsOfOnePage) {
  Snapshot first = Go("/form");
  auto second = page_->TakeSnapshot({}, Within(10s));
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(test_util::SnapshotRefOf(first.text, "textbox"),
            test_util::SnapshotRefOf(second->text, "textbox"));
  EXPECT_EQ(test_util::SnapshotRefOf(first.text, "heading"),
            "e1");  // numbered compactly, from e1 per page
  Snapshot again = Go("/form");
  EXPECT_EQ(test_util::SnapshotRefOf(again.text, "heading"), "e1");
  EXPECT_EQ(page_->Click("e999", Within(10s)).code(), StatusCode::kInvalidArgument);
}

TEST_F(CdpPageDriverTest, ScrollsALongPage) {
  Go("/long");
  ASSERT_TRUE(page_->Scroll(true, Within(10s)).ok());
  EXPECT_EQ(Eval("window.scrollY"), "500");
  ASSERT_TRUE(page_->Scroll(false, Within(10s)).ok());
  EXPECT_EQ(Eval("window.scrollY"), "0");
}

TEST_F(CdpPageDriverTest, AcceptsADialogAndNotesIt) {
  Snapshot s = Go("/dialog");
  const std::string button = test_util::SnapshotRefOf(s.text, "button \"Alert\"");
  ASSERT_FALSE(button.empty()) << s.text;
  ASSERT_TRUE(page_->Click(button, Within(10s)).ok());
  ASSERT_TRUE(WaitUntil([&] { return Eval("document.title") == "after"; }, 10s, 10ms));
  auto console = page_->Console(true, Within(5s));
  ASSERT_TRUE(console.has_value());
  bool seen = false;
  for (const ConsoleEntry& c : *console)
    seen |= c.type == "dialog" && c.text == "alert: hello there";
  EXPECT_TRUE(seen);
}

TEST_F(CdpPageDriverTest, ReachesSameOriginFramesAndMarksCrossOriginOnes) {
  ASSERT_TRUE(WaitUntil(
      [&] {
        auto s = page_->Navigate(pages_.url("/frames"), Within(30s));
        return s && s->text.find("Inner button") != std::string::npos;
      },
      20s, 50ms));
  auto s = page_->TakeSnapshot({}, Within(10s));
  ASSERT_TRUE(s.has_value());
  EXPECT_NE(s->text.find("iframe \"other\""), std::string::npos) << s->text;
  const std::string inner = test_util::SnapshotRefOf(s->text, "Inner button");
  ASSERT_FALSE(inner.empty()) << s->text;
  ASSERT_TRUE(page_->Click(inner, Within(10s)).ok());
  EXPECT_TRUE(WaitUntil(
      [&] { return Eval("document.getElementById('out').textContent") == "inner clicked"; }, 10s,
      10ms));
}

TEST_F(CdpPageDriverTest, ReachesIntoOpenShadowRoots) {
  Snapshot s = Go("/shadow");
  const std::string button = test_util::SnapshotRefOf(s.text, "Shadow button");
  ASSERT_FALSE(button.empty()) << s.text;
  ASSERT_TRUE(page_->Click(button, Within(10s)).ok());
  EXPECT_TRUE(WaitUntil(
      [&] { return Eval("document.getElementById('out').textContent") == "shadow clicked"; }, 10s,
      10ms));
}

TEST_F(CdpPageDriverTest, CollectsConsoleMessagesAndErrors) {
  Go("/console");
  std::vector<ConsoleEntry> entries;
  ASSERT_TRUE(WaitUntil(
      [&] {
        entries = *page_->Console(false, Within(5s));
        for (const ConsoleEntry& c : entries) {
          if (c.type == "exception") return true;
        }
        return false;
      },
      10s, 10ms));
  bool log = false, warn = false, error = false;
  for (const ConsoleEntry& c : entries) {
    log |= c.type == "log" && c.text == "hello 42";
    warn |= c.type == "warning" && c.text == "careful";
    error |= c.type == "exception" && c.text.find("boom") != std::string::npos;
  }
  EXPECT_TRUE(log && warn && error);
  EXPECT_EQ(page_->Console(true, Within(5s))->size(), entries.size());
  EXPECT_TRUE(page_->Console(false, Within(5s))->empty());
}

TEST_F(CdpPageDriverTest, ListsImagesWithoutDataUrls) {
  Go("/images");
  std::vector<PageImage> images;
  ASSERT_TRUE(WaitUntil(
      [&] {
        images = *page_->Images(Within(5s));
        return images.size() == 1 && images[0].width == 1;
      },
      10s, 10ms));
  EXPECT_EQ(images[0].src, pages_.url("/pixel.png"));
  EXPECT_EQ(images[0].alt, "a pixel");
}

TEST_F(CdpPageDriverTest, EvaluatesExpressionsOfEveryType) {
  Go("/a");
  auto n = page_->Evaluate("1 + 1", Within(5s));
  ASSERT_TRUE(n.has_value());
  EXPECT_EQ(n->value, 2);
  EXPECT_EQ(n->type, "number");
  auto u = page_->Evaluate("undefined", Within(5s));
  ASSERT_TRUE(u.has_value());
  EXPECT_TRUE(u->value.is_null());
  EXPECT_EQ(u->type, "undefined");
  auto o = page_->Evaluate("({a: [1, 'x']})", Within(5s));
  ASSERT_TRUE(o.has_value());
  EXPECT_EQ(o->value["a"][1], "x");
  auto p = page_->Evaluate("Promise.resolve('later')", Within(5s));
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->value, "later");
  auto node = page_->Evaluate("document.body", Within(5s));
  ASSERT_TRUE(node.has_value()) << node.error().message();
  EXPECT_EQ(node->type, "object");
  auto bad = page_->Evaluate("throw new Error('nope')", Within(5s));
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message().find("nope"), std::string::npos);
}

TEST_F(CdpPageDriverTest, RefusesAPageNavigatingItselfToAPrivateAddress) {
  auto s = page_->Navigate(pages_.url("/self-nav"), Within(30s));
  // The refusal lands either on this navigation (the script ran before it returned) or on the
  // next call; either way the page ends on about:blank and the canary is never reached.
  bool refused = !s.has_value() && s.error().code() == StatusCode::kPermissionDenied;
  ASSERT_TRUE(WaitUntil(
      [&] {
        if (refused) return true;
        auto snap = page_->TakeSnapshot({}, Within(5s));
        refused = !snap && snap.error().code() == StatusCode::kPermissionDenied;
        return refused;
      },
      20s, 20ms));
  EXPECT_TRUE(WaitUntil([&] { return Eval("location.href") == "about:blank"; }, 10s, 10ms));
  EXPECT_EQ(pages_.canary_hits.load(), 0);
  auto console = page_->Console(false, Within(5s));
  bool noted = false;
  for (const ConsoleEntry& c : *console) noted |= c.type == "blocked";
  EXPECT_TRUE(noted);
}

TEST_F(CdpPageDriverTest, RefusesRedirectsToMetadataAndPrivateAddresses) {
  auto s = page_->Navigate(pages_.url("/to-metadata"), Within(30s));
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().code(), StatusCode::kPermissionDenied);
  EXPECT_NE(s.error().message().find("cloud-metadata"), std::string::npos) << s.error().message();
  EXPECT_EQ(Eval("location.href"), "about:blank");
  auto c = page_->Navigate(pages_.url("/to-canary"), Within(30s));
  ASSERT_FALSE(c.has_value());
  EXPECT_EQ(c.error().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(pages_.canary_hits.load(), 0);
  auto direct = page_->Navigate("http://10.0.0.1/", Within(10s));
  ASSERT_FALSE(direct.has_value());
  EXPECT_EQ(direct.error().code(), StatusCode::kPermissionDenied);
}

TEST_F(CdpPageDriverTest, APageThatNeverLoadsEndsAtTheDeadline) {
  auto s = page_->Navigate(pages_.url("/hang"), Within(2s));
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().code(), StatusCode::kDeadlineExceeded) << s.error().message();
  pages_.release_hang = true;
  Snapshot a = Go("/a");
  EXPECT_NE(a.text.find("Page A"), std::string::npos);
}

TEST_F(CdpPageDriverTest, ACrashIsReportedAndTheNextCallGetsANewPage) {
  Go("/a");
  ASSERT_TRUE(page_->CrashRendererForTest(Within(20s)).ok());
  auto after = page_->TakeSnapshot({}, Within(20s));
  ASSERT_FALSE(after.has_value());
  EXPECT_EQ(after.error().code(), StatusCode::kUnavailable);
  EXPECT_NE(after.error().message().find("crashed"), std::string::npos);
  Snapshot b = Go("/b");
  EXPECT_NE(b.text.find("Page B"), std::string::npos);
}

TEST_F(CdpPageDriverTest, CancelEndsAWaitingCall) {
  std::stop_source stop;
  std::jthread canceller([&] {
    std::this_thread::sleep_for(200ms);
    stop.request_stop();
  });
  auto s = page_->Navigate(pages_.url("/hang"), {.deadline = std::chrono::steady_clock::now() + 30s,
                                                 .cancel = stop.get_token()});
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().code(), StatusCode::kCancelled) << s.error().message();
}

TEST_F(CdpPageDriverTest, ScreenshotIsAPng) {
  Go("/form");
  auto png = page_->Screenshot(true, Within(20s));
  ASSERT_TRUE(png.has_value()) << png.error().message();
  ASSERT_GT(png->size(), 100U);
  EXPECT_EQ(png->substr(1, 3), "PNG");
  EXPECT_EQ(Eval("document.querySelectorAll('div').length"), "0");  // labels removed again
}

}  // namespace
}  // namespace talaria::browser
