// The Camofox driver against a local fake of its REST API (tests/support/fake_camofox.*):
// navigate, type, press, click, back, scroll, snapshots in talaria's format across Camofox's
// pagination, images, evaluate with its API key, screenshots, the network guard before and
// after Camofox navigates, and the session deleted on Close.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "support/fake_camofox.h"
#include "support/loopback_http.h"
#include "talaria/browser/camofox_driver.h"
#include "talaria/web/network_guard.h"

namespace talaria::browser {
namespace {

using namespace std::chrono_literals;
using talaria_test::FakeCamofox;

// example.org is public (no DNS in tests): every name resolves to a documentation-free public
// address.
class PublicResolver final : public web::Resolver {
 public:
  Result<std::vector<web::IpAddress>> Resolve(const std::string& /*host*/,
                                              const std::stop_token& /*stop*/) override {
    return std::vector<web::IpAddress>{web::IpAddress::V4(0x5DB8D70E)};  // 93.184.215.14
  }
};

CallLimits Limits() { return {.deadline = std::chrono::steady_clock::now() + 20s, .cancel = {}}; }

std::unique_ptr<PageDriver> Driver(const FakeCamofox& camofox, std::string api_key = "") {
  auto guard = web::NetworkGuard::Create(
      {.allow_private = {}, .resolver = std::make_shared<PublicResolver>()});
  EXPECT_TRUE(guard.has_value());
  auto driver = MakeCamofoxDriver({.url = camofox.url(),
                                   .api_key = std::move(api_key),
                                   .user_id = "",
                                   .session_key = "task-1",
                                   .guard = *guard,
                                   .request_timeout = 10s});
  EXPECT_TRUE(driver.has_value()) << driver.error().message();
  return driver ? std::move(*driver) : nullptr;
}

TEST(CamofoxDriver, NavigateTypePressClickBack) {
  FakeCamofox camofox;
  auto driver = Driver(camofox);
  ASSERT_TRUE(driver);
  EXPECT_EQ(driver->backend(), "camofox");

  auto snap = driver->Navigate("https://example.org/", Limits());
  ASSERT_TRUE(snap.has_value()) << snap.error().message();
  EXPECT_EQ(snap->url, "https://example.org/");
  EXPECT_EQ(snap->title, "Example Domain");
  EXPECT_EQ(snap->text,
            "- heading \"Example Domain\"\n"
            "- link \"More information...\" [ref=e1]\n"
            "  - textbox \"Search\" [ref=e2]\n"
            "  - button \"Go\" [ref=e3]");
  EXPECT_EQ(snap->element_count, 3);

  ASSERT_TRUE(driver->Type("e2", "hello \"world\"", Limits()).ok());
  ASSERT_TRUE(driver->Press("Enter", Limits()).ok());
  snap = driver->TakeSnapshot({}, Limits());
  ASSERT_TRUE(snap.has_value());
  EXPECT_NE(snap->text.find("- paragraph \"Submitted: hello \\\"world\\\"\""), std::string::npos)
      << snap->text;

  ASSERT_TRUE(driver->Click("e1", Limits()).ok());
  snap = driver->TakeSnapshot({}, Limits());
  ASSERT_TRUE(snap.has_value());
  EXPECT_EQ(snap->url, "https://example.org/more");
  auto back = driver->Back(Limits());
  ASSERT_TRUE(back.has_value()) << back.error().message();
  EXPECT_EQ(*back, "https://example.org/");
  EXPECT_TRUE(driver->Scroll(true, Limits()).ok());

  // A ref the page does not have is the service's error, passed on.
  const Status missing = driver->Click("e99", Limits());
  EXPECT_EQ(missing.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(missing.message().find("Unknown ref: e99"), std::string::npos) << missing.message();
}

TEST(CamofoxDriver, SnapshotsFollowPagination) {
  FakeCamofox camofox;
  auto driver = Driver(camofox);
  ASSERT_TRUE(driver);
  auto snap = driver->Navigate("https://example.org/long", Limits());
  ASSERT_TRUE(snap.has_value()) << snap.error().message();
  EXPECT_GT(snap->text.size(), 200'000u);
  EXPECT_EQ(snap->text.rfind("- paragraph \"line 0 ", 0), 0u);
  int snapshot_pages = 0;
  for (const auto& call : camofox.calls()) {
    if (call.find("/snapshot") != std::string::npos) ++snapshot_pages;
  }
  EXPECT_EQ(snapshot_pages, 3);  // 80,000 characters a page
}

TEST(CamofoxDriver, TheGuardJudgesTheUrlAndWhereCamofoxLanded) {
  FakeCamofox camofox;
  auto driver = Driver(camofox);
  ASSERT_TRUE(driver);
  auto metadata = driver->Navigate("http://169.254.169.254/latest/meta-data/", Limits());
  ASSERT_FALSE(metadata.has_value());
  EXPECT_EQ(metadata.error().code(), StatusCode::kPermissionDenied);
  EXPECT_TRUE(camofox.navigations().empty());  // Camofox was never asked

  // A page that redirects to the metadata address: refused, and the tab left on about:blank.
  auto hop = driver->Navigate("https://example.org/hop", Limits());
  ASSERT_FALSE(hop.has_value());
  EXPECT_EQ(hop.error().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(web::RefusalRule(hop.error()), "cloud-metadata");
  ASSERT_FALSE(camofox.navigations().empty());
  EXPECT_EQ(camofox.navigations().back(), "about:blank");
}

TEST(CamofoxDriver, EvaluateImagesAndScreenshot) {
  FakeCamofox camofox("camofox-key");
  auto driver = Driver(camofox, "camofox-key");
  ASSERT_TRUE(driver);
  EXPECT_EQ(driver->Evaluate("document.title", Limits()).error().code(),
            StatusCode::kFailedPrecondition);  // no page yet
  ASSERT_TRUE(driver->Navigate("https://example.org/", Limits()).has_value());

  auto title = driver->Evaluate("document.title", Limits());
  ASSERT_TRUE(title.has_value()) << title.error().message();
  EXPECT_EQ(title->value, "Example Domain");
  EXPECT_EQ(title->type, "string");
  auto thrown = driver->Evaluate("nope()", Limits());
  ASSERT_FALSE(thrown.has_value());
  EXPECT_NE(thrown.error().message().find("ReferenceError"), std::string::npos);

  auto images = driver->Images(Limits());
  ASSERT_TRUE(images.has_value()) << images.error().message();
  ASSERT_EQ(images->size(), 1u);  // the data: image is dropped
  EXPECT_EQ((*images)[0].src, "https://example.org/logo.png");
  EXPECT_EQ((*images)[0].alt, "Logo");
  EXPECT_EQ((*images)[0].width, 120);

  auto png = driver->Screenshot(false, Limits());
  ASSERT_TRUE(png.has_value()) << png.error().message();
  EXPECT_EQ(png->substr(0, 4), "\x89PNG");
  EXPECT_EQ(driver->Console(false, Limits()).error().code(), StatusCode::kFailedPrecondition);

  // Without the key Camofox refuses evaluate.
  auto keyless = Driver(camofox);
  ASSERT_TRUE(keyless);
  ASSERT_TRUE(keyless->Navigate("https://example.org/", Limits()).has_value());
  EXPECT_EQ(keyless->Evaluate("document.title", Limits()).error().code(),
            StatusCode::kPermissionDenied);
}

TEST(CamofoxDriver, CloseDeletesTheSessionAndEndsTheDriver) {
  FakeCamofox camofox;
  auto driver = Driver(camofox);
  ASSERT_TRUE(driver);
  ASSERT_TRUE(driver->Navigate("https://example.org/", Limits()).has_value());
  EXPECT_EQ(camofox.live_sessions(), 1);
  driver->Close();
  EXPECT_EQ(camofox.live_sessions(), 0);
  EXPECT_EQ(driver->TakeSnapshot({}, Limits()).error().code(), StatusCode::kUnavailable);

  auto expired = driver->Navigate(
      "https://example.org/", {.deadline = std::chrono::steady_clock::now() - 1s, .cancel = {}});
  EXPECT_FALSE(expired.has_value());
}

TEST(CamofoxDriver, AnUnreachableCamofoxIsUnavailable) {
  auto driver = MakeCamofoxDriver(
      {.url = "http://127.0.0.1:" + std::to_string(talaria_test::UnusedLoopbackPort()),
       .api_key = "",
       .user_id = "",
       .session_key = "",
       .guard = nullptr,
       .request_timeout = 5s});
  ASSERT_FALSE(driver.has_value());
  EXPECT_EQ(driver.error().code(), StatusCode::kUnavailable);
  EXPECT_EQ(MakeCamofoxDriver({}).error().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace talaria::browser
