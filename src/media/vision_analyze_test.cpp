// vision_analyze against a local OpenAI-compatible endpoint that checks what it receives (the
// model, the question, the image as a data: URL, the key), with images from the session's
// workspace and from URLs through the network guard; large images are scaled down, and a
// "too large" refusal is retried once at half the size.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "media/image_codec.h"
#include "media/media_http.h"
#include "support/loopback_http.h"
#include "support/registered_tool.h"
#include "support/temp_dir.h"
#include "talaria/base/base64.h"
#include "talaria/confinement/workspace.h"
#include "talaria/core/registry.h"
#include "talaria/core/tool_context.h"
#include "talaria/tools/session_services.h"

namespace talaria::media {
namespace {

using talaria_test::LoopbackHttpServer;

std::string Png(uint32_t w, uint32_t h) {
  Rgb8Image img;
  img.width = w;
  img.height = h;
  img.pixels.assign(size_t{w} * h * 3, '\x80');
  return EncodePng(img).value_or("");
}

// The vision endpoint: records each request; answers 400 "image too large" while
// `refuse_large` is positive (counting down), else a fixed analysis.
class FakeVision {
 public:
  FakeVision()
      : server_([this](httplib::Server& s) {
          s.Post("/v1/chat/completions", [this](const httplib::Request& req,
                                                httplib::Response& res) {
            std::lock_guard lock(mu);
            bodies.push_back(Json::parse(req.body, nullptr, false));
            auth = req.get_header_value("Authorization");
            if (refuse_large > 0) {
              --refuse_large;
              res.status = 400;
              res.set_content(R"({"error":{"message":"Image too large: max 5 MB"}})",
                              "application/json");
              return;
            }
            res.set_content(
                R"({"choices":[{"message":{"role":"assistant","content":"  A grey square.\n"}}]})",
                "application/json");
          });
        }) {}
  std::string url() const { return server_.url("/v1"); }

  // The image the n-th request carried, decoded from its data: URL.
  std::string SentImage(size_t n) {
    std::lock_guard lock(mu);
    const std::string url = bodies.at(n)["messages"][0]["content"][1]["image_url"]["url"];
    const size_t comma = url.find(',');
    return Base64Decode(url.substr(comma + 1)).value_or("");
  }

  std::mutex mu;
  std::vector<Json> bodies;  // Guarded by mu.
  std::string auth;          // Guarded by mu.
  int refuse_large = 0;      // Guarded by mu.

 private:
  LoopbackHttpServer server_;
};

class VisionAnalyzeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ::setenv("TALARIA_HOME", home_.path().c_str(), 1);
    ::setenv("VISION_TEST_KEY", "vision-key", 1);
    ::unsetenv("TALARIA_MODEL");
    safety::WorkspaceOptions options;
    options.roots = {workspace_dir_.path()};
    auto ws = safety::Workspace::Open(std::move(options));
    ASSERT_TRUE(ws.has_value()) << ws.error().ToString();
    tools::EnsureServices(ctx_).workspace = *ws;
  }
  void TearDown() override { ::unsetenv("VISION_TEST_KEY"); }
  void Configure(const FakeVision& fake, const std::string& extra = "") {
    std::ofstream(home_.path() + "/config.yaml")
        << "auxiliary:\n  vision:\n    model: vis-model\n    base_url: " << fake.url()
        << "\n    api_key_env: VISION_TEST_KEY\n    max_dimension: 256\n"
        << extra;
  }
  void PutFile(const std::string& name, const std::string& bytes) {
    std::ofstream(workspace_dir_.path() + "/" + name, std::ios::binary) << bytes;
  }
  Json Call(const Json& args) {
    return talaria::test_support::CallRegisteredTool("vision_analyze", args, ctx_);
  }

  talaria::test_support::TempDir home_;
  talaria::test_support::TempDir workspace_dir_;
  ToolContext ctx_;
};

TEST_F(VisionAnalyzeTest, UnavailableUntilAVisionModelIsConfigured) {
  auto entry = Registry::Global().GetEntry("vision_analyze");
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(entry->toolset(), "vision");
  std::ofstream(home_.path() + "/config.yaml") << "";
  EXPECT_FALSE((*entry->check_fn())());
  const std::string reason = Registry::Global().CheckAvailability("vision_analyze").reason;
  EXPECT_NE(reason.find("auxiliary.vision.model"), std::string::npos) << reason;
  Json r = Call({{"image_url", "a.png"}, {"question", "what?"}});
  EXPECT_EQ(r["success"], false);
  EXPECT_NE(r["error"].get<std::string>().find("auxiliary.vision.model"), std::string::npos);
  // The main model serves when no vision model is named.
  std::ofstream(home_.path() + "/config.yaml") << "model:\n  name: main-model\n";
  EXPECT_TRUE((*entry->check_fn())());
}

TEST_F(VisionAnalyzeTest, AWorkspaceImageIsSentAsADataUrlWithTheQuestion) {
  FakeVision fake;
  Configure(fake);
  const std::string png = Png(32, 16);
  PutFile("shot.png", png);
  Json r = Call({{"image_url", "shot.png"}, {"question", "What colour is it?"}});
  ASSERT_EQ(r["success"], true) << r.dump();
  EXPECT_EQ(r["analysis"], "A grey square.");
  std::lock_guard lock(fake.mu);
  ASSERT_EQ(fake.bodies.size(), 1U);
  const Json& body = fake.bodies[0];
  EXPECT_EQ(fake.auth, "Bearer vision-key");
  EXPECT_EQ(body["model"], "vis-model");
  EXPECT_EQ(body["max_tokens"], 2000);
  EXPECT_DOUBLE_EQ(body["temperature"].get<double>(), 0.1);
  const Json& content = body["messages"][0]["content"];
  const std::string text = content[0]["text"];
  EXPECT_NE(text.find("Fully describe"), std::string::npos);
  EXPECT_NE(text.find("What colour is it?"), std::string::npos);
  EXPECT_EQ(content[1]["type"], "image_url");
  const std::string url = content[1]["image_url"]["url"];
  EXPECT_EQ(url.rfind("data:image/png;base64,", 0), 0U);
  EXPECT_EQ(Base64Decode(url.substr(22)).value_or(""), png) << "a small image goes as it is";
}

TEST_F(VisionAnalyzeTest, ALargeImageIsScaledDownFirst) {
  FakeVision fake;
  Configure(fake);
  PutFile("big.png", Png(1000, 500));
  Json r = Call({{"image_url", "big.png"}, {"question", "q"}});
  ASSERT_EQ(r["success"], true) << r.dump();
  auto info = ReadImageInfo(fake.SentImage(0));
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->format, ImageFormat::kJpeg);
  EXPECT_EQ(info->width, 256U);
  EXPECT_EQ(info->height, 128U);
}

TEST_F(VisionAnalyzeTest, ATooLargeRefusalIsRetriedOnceAtHalfTheSize) {
  FakeVision fake;
  Configure(fake);
  fake.refuse_large = 1;
  PutFile("big.png", Png(1000, 500));
  Json r = Call({{"image_url", "big.png"}, {"question", "q"}});
  ASSERT_EQ(r["success"], true) << r.dump();
  ASSERT_EQ(fake.bodies.size(), 2U);
  auto second = ReadImageInfo(fake.SentImage(1));
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->width, 128U);

  fake.refuse_large = 5;  // refused again: one retry only, and the endpoint's words come back
  r = Call({{"image_url", "big.png"}, {"question", "q"}});
  EXPECT_EQ(r["success"], false);
  EXPECT_NE(r["error"].get<std::string>().find("Image too large"), std::string::npos) << r.dump();
  EXPECT_EQ(fake.bodies.size(), 4U);
}

TEST_F(VisionAnalyzeTest, UrlsGoThroughTheNetworkGuard) {
  FakeVision fake;
  const std::string png = Png(20, 20);
  LoopbackHttpServer images([&](httplib::Server& s) {
    s.set_keep_alive_max_count(1);  // the fetcher's pooled connection must not delay the stop
    s.Get("/cat.png", [&](const httplib::Request&, httplib::Response& res) {
      res.set_content(png, "image/png");
    });
  });
  Configure(fake);
  Json r = Call({{"image_url", images.url("/cat.png")}, {"question", "q"}});
  EXPECT_EQ(r["success"], false);
  EXPECT_NE(r["error"].get<std::string>().find("network guard"), std::string::npos) << r.dump();
  EXPECT_EQ(images.requests(), 0) << "refused before any connection";

  Configure(fake, "web:\n  allow_private: [\"127.0.0.1:" + std::to_string(images.port()) + "\"]\n");
  r = Call({{"image_url", images.url("/cat.png")}, {"question", "q"}});
  ASSERT_EQ(r["success"], true) << r.dump();
  EXPECT_EQ(fake.SentImage(0), png);
}

TEST_F(VisionAnalyzeTest, PathsOutsideTheWorkspaceAndNonImagesAreRefused) {
  FakeVision fake;
  Configure(fake);
  Json r = Call({{"image_url", "/etc/passwd"}, {"question", "q"}});
  EXPECT_EQ(r["success"], false) << r.dump();
  r = Call({{"image_url", "../outside.png"}, {"question", "q"}});
  EXPECT_EQ(r["success"], false) << r.dump();
  PutFile("notes.txt", "just text");
  r = Call({{"image_url", "notes.txt"}, {"question", "q"}});
  EXPECT_EQ(r["success"], false);
  EXPECT_NE(r["error"].get<std::string>().find("not an image"), std::string::npos) << r.dump();
  PutFile("broken.png", Png(300, 300).substr(0, 40));
  Configure(fake, "    max_image_bytes: 16384\n");
  r = Call({{"image_url", "broken.png"}, {"question", "q"}});
  EXPECT_EQ(r["success"], false) << r.dump();
  r = Call({{"image_url", "file:///etc/hostname"}, {"question", "q"}});
  EXPECT_EQ(r["success"], false) << r.dump();
  std::lock_guard lock(fake.mu);
  EXPECT_TRUE(fake.bodies.empty()) << "nothing was sent to the model";
}

}  // namespace
}  // namespace talaria::media
