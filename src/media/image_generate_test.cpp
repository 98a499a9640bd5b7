// image_generate against local fakes of the FAL queue API (which checks the key, the payload
// and the idempotency key, and makes the caller poll), of the managed tool gateway in front of
// it (which checks the user's token and forwards with the vendor key), and of OpenAI's images
// API. The generated image travels back through the network guard.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "media/image_codec.h"
#include "media/media_http.h"
#include "support/loopback_http.h"
#include "support/registered_tool.h"
#include "support/temp_dir.h"
#include "talaria/base/base64.h"
#include "talaria/base/file_io.h"
#include "talaria/core/registry.h"
#include "talaria/core/tool_context.h"

namespace talaria::media {
namespace {

using talaria_test::LoopbackHttpServer;

const std::vector<const char*> kVars = {
    "FAL_KEY",         "OPENAI_API_KEY",          "FAL_QUEUE_URL",           "OPENAI_BASE_URL",
    "FAL_IMAGE_MODEL", "TOOL_GATEWAY_USER_TOKEN", "TOOL_GATEWAY_TOKEN_FILE", "FAL_GATEWAY_URL",
    "FAL_USE_GATEWAY", "TALARIA_FAL_POLL_MS"};

std::string TestPng() {
  Rgb8Image img;
  img.width = 8;
  img.height = 4;
  img.pixels.assign(8 * 4 * 3, '\x40');
  return EncodePng(img).value_or("");
}

// The FAL queue: submit, then IN_QUEUE, IN_PROGRESS, COMPLETED, then the result naming an
// image it serves itself. `result_status` != 200 makes the result fail the way FAL does.
class FakeFal {
 public:
  explicit FakeFal(std::string key) : key_(std::move(key)), png_(TestPng()) {
    server_ = std::make_unique<LoopbackHttpServer>([this](httplib::Server& s) {
      // One request per connection: the image fetcher's pooled connection must not hold the
      // server's stop for its keep-alive timeout.
      s.set_keep_alive_max_count(1);
      s.Post(".*", [this](const httplib::Request& req, httplib::Response& res) {
        std::lock_guard lock(mu_);
        if (req.get_header_value("Authorization") != "Key " + key_) {
          res.status = 401;
          res.set_content(R"({"detail":"bad key"})", "application/json");
          return;
        }
        submitted_model = req.path.substr(1);
        body = Json::parse(req.body, nullptr, false);
        submits.emplace_back(submitted_model, body);
        idempotency_key = req.get_header_value("x-idempotency-key");
        res.set_content(R"({"request_id":"req-1","status_url":"ignored"})", "application/json");
      });
      s.Get(".*", [this](const httplib::Request& req, httplib::Response& res) {
        std::lock_guard lock(mu_);
        if (req.path == "/files/out.png") {
          res.set_content(image_body.empty() ? png_ : image_body, "image/png");
          return;
        }
        if (req.path == "/files/up.png") {
          res.set_content(upscaled_png, "image/png");
          return;
        }
        if (req.get_header_value("Authorization") != "Key " + key_) {
          res.status = 401;
          return;
        }
        if (req.path.size() > 7 && req.path.substr(req.path.size() - 7) == "/status") {
          status_path = req.path;
          ++polls;
          server_->Signal();
          const char* state = polls == 1 ? "IN_QUEUE" : polls == 2 ? "IN_PROGRESS" : "COMPLETED";
          if (never_done) state = "IN_QUEUE";
          res.set_content(Json{{"status", state}}.dump(), "application/json");
          return;
        }
        result_path = req.path;
        // The Clarity upscaler's result names its own, larger image.
        const bool upscaler = req.path.starts_with("/fal-ai/clarity-upscaler/");
        res.status = upscaler ? upscale_status : result_status;
        if (upscaler && res.status == 200) {
          res.set_content(Json{{"image", {{"url", server_->url("/files/up.png")}}}}.dump(),
                          "application/json");
          return;
        }
        if (result_status != 200) {
          res.set_content(R"({"detail":[{"msg":"prompt was flagged"}]})", "application/json");
          return;
        }
        res.set_content(Json{{"images",
                              {{{"url", server_->url("/files/out.png")},
                                {"width", 8},
                                {"height", 4},
                                {"content_type", "image/png"}}}},
                             {"seed", 7}}
                            .dump(),
                        "application/json");
      });
      s.Put(".*", [this](const httplib::Request& req, httplib::Response& res) {
        std::lock_guard lock(mu_);
        cancelled_path = req.path;
        res.set_content("{}", "application/json");
      });
    });
  }
  std::string url() const { return server_->url(); }
  int port() const { return server_->port(); }
  LoopbackHttpServer& server() { return *server_; }
  const std::string& png() const { return png_; }

  std::mutex mu_;
  std::string submitted_model, idempotency_key, status_path, result_path, cancelled_path;
  Json body;
  std::vector<std::pair<std::string, Json>> submits;  // every (model, payload), in order
  int polls = 0;
  int result_status = 200;
  int upscale_status = 200;
  std::string upscaled_png;
  bool never_done = false;
  std::string image_body;

 private:
  std::string key_;
  std::string png_;
  std::unique_ptr<LoopbackHttpServer> server_;
};

class ImageGenerateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* v : kVars) ::unsetenv(v);
    ::setenv("TALARIA_HOME", home_.path().c_str(), 1);
    ::setenv("TALARIA_FAL_POLL_MS", "5", 1);
    ::setenv("TOOL_GATEWAY_TOKEN_FILE", (home_.path() + "/no-token.json").c_str(), 1);
  }
  void TearDown() override {
    for (const char* v : kVars) ::unsetenv(v);
  }
  void WriteConfig(const std::string& yaml) {
    std::ofstream(home_.path() + "/config.yaml") << yaml;
  }
  // The fake's images may be fetched: it is on loopback, which the guard refuses otherwise.
  void AllowImagesFrom(int port, const std::string& extra = "") {
    WriteConfig("web:\n  allow_private: [\"127.0.0.1:" + std::to_string(port) + "\"]\n" + extra);
  }
  static Json Call(const Json& args, ToolContext& ctx) {
    ToolResult r;
    Json j = talaria::test_support::CallRegisteredTool("image_generate", args, ctx, &r);
    EXPECT_EQ(r.ok(), j.is_object() && j["success"] == true) << r.text;
    return j;
  }
  static Json Call(const Json& args) {
    ToolContext ctx;
    return Call(args, ctx);
  }
  std::string ReadSaved(const Json& result) {
    const std::string path = result.value("image", "");
    EXPECT_EQ(path.rfind(home_.path() + "/cache/images/", 0), 0U) << path;
    auto bytes = ReadWholeFile(path);
    return bytes.value_or("");
  }

  talaria::test_support::TempDir home_;
};

TEST_F(ImageGenerateTest, UnavailableUntilAKeyOrAGatewayTokenIsSet) {
  auto entry = Registry::Global().GetEntry("image_generate");
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(entry->toolset(), "image_gen");
  EXPECT_FALSE((*entry->check_fn())());
  const std::string reason = Registry::Global().CheckAvailability("image_generate").reason;
  EXPECT_NE(reason.find("FAL_KEY"), std::string::npos) << reason;
  EXPECT_NE(reason.find("OPENAI_API_KEY"), std::string::npos) << reason;
  Json r = Call({{"prompt", "a fox"}});
  EXPECT_EQ(r["success"], false);
  EXPECT_TRUE(r["image"].is_null());
  EXPECT_EQ(r["error_type"], "not_configured");
  EXPECT_NE(r["error"].get<std::string>().find("FAL_KEY"), std::string::npos);
  ::setenv("FAL_KEY", "k", 1);
  EXPECT_TRUE((*entry->check_fn())());
  ::unsetenv("FAL_KEY");
  ::setenv("TOOL_GATEWAY_USER_TOKEN", "t", 1);
  EXPECT_TRUE((*entry->check_fn())());
}

TEST_F(ImageGenerateTest, FalQueueIsSubmittedPolledAndTheImageSaved) {
  FakeFal fal("fal-secret");
  ::setenv("FAL_KEY", "fal-secret", 1);
  ::setenv("FAL_QUEUE_URL", fal.url().c_str(), 1);
  AllowImagesFrom(fal.port());
  Json r = Call({{"prompt", "a red fox"}, {"aspect_ratio", "square"}});
  ASSERT_EQ(r["success"], true) << r.dump();
  EXPECT_EQ(ReadSaved(r), fal.png());
  std::lock_guard lock(fal.mu_);
  EXPECT_EQ(fal.submitted_model, "fal-ai/flux-2/klein/9b");
  EXPECT_EQ(fal.body["prompt"], "a red fox");
  EXPECT_EQ(fal.body["image_size"], "square_hd");
  EXPECT_EQ(fal.body["num_inference_steps"], 4);
  EXPECT_EQ(fal.body["output_format"], "png");
  EXPECT_EQ(fal.body.size(), 5U) << "only what the model supports: " << fal.body.dump();
  EXPECT_EQ(fal.idempotency_key.size(), 32U);
  EXPECT_EQ(fal.polls, 3) << "polled through IN_QUEUE and IN_PROGRESS to COMPLETED";
  EXPECT_EQ(fal.status_path, "/fal-ai/flux-2/requests/req-1/status");
  EXPECT_EQ(fal.result_path, "/fal-ai/flux-2/requests/req-1");
}

TEST_F(ImageGenerateTest, TheConfiguredModelGetsItsOwnSizeSpelling) {
  FakeFal fal("k");
  ::setenv("FAL_KEY", "k", 1);
  ::setenv("FAL_QUEUE_URL", fal.url().c_str(), 1);
  AllowImagesFrom(fal.port(), "image_gen:\n  model: fal-ai/nano-banana-pro\n");
  Json r = Call({{"prompt", "p"}, {"aspect_ratio", "portrait"}});
  ASSERT_EQ(r["success"], true) << r.dump();
  std::lock_guard lock(fal.mu_);
  EXPECT_EQ(fal.submitted_model, "fal-ai/nano-banana-pro");
  EXPECT_EQ(fal.body["aspect_ratio"], "9:16");
  EXPECT_FALSE(fal.body.contains("image_size"));
  EXPECT_EQ(fal.status_path, "/fal-ai/nano-banana-pro/requests/req-1/status");
}

// The gateway in front of FAL: checks the user's token, forwards with the vendor's own key.
class FakeGateway {
 public:
  FakeGateway(std::string user_token, const FakeFal& fal, std::string vendor_key)
      : server_([this, user_token, port = fal.port(), vendor_key](httplib::Server& s) {
          auto forward = [this, user_token, port, vendor_key](const httplib::Request& req,
                                                              httplib::Response& res) {
            ++requests;
            if (reject_with != 0) {
              res.status = reject_with;
              res.set_content(R"({"detail":"model not in your plan"})", "application/json");
              return;
            }
            if (req.get_header_value("Authorization") != "Key " + user_token) {
              res.status = 401;
              res.set_content(R"({"detail":"unauthenticated"})", "application/json");
              return;
            }
            httplib::Client upstream("127.0.0.1", port);
            httplib::Headers headers = {{"Authorization", "Key " + vendor_key}};
            if (req.has_header("x-idempotency-key")) {
              headers.emplace("x-idempotency-key", req.get_header_value("x-idempotency-key"));
            }
            auto up = req.method == "POST"
                          ? upstream.Post(req.path, headers, req.body, "application/json")
                          : upstream.Get(req.path, headers);
            if (!up) {
              res.status = 502;
              return;
            }
            res.status = up->status;
            res.set_content(up->body, "application/json");
          };
          s.Post(".*", forward);
          s.Get(".*", forward);
        }) {}
  std::string url() const { return server_.url(); }
  std::atomic<int> requests{0};
  int reject_with = 0;

 private:
  LoopbackHttpServer server_;
};

TEST_F(ImageGenerateTest, WithoutAKeyTheGatewayIsUsedWithTheUserToken) {
  FakeFal fal("vendor-key");
  FakeGateway gateway("user-token", fal, "vendor-key");
  ::setenv("TOOL_GATEWAY_USER_TOKEN", "user-token", 1);
  ::setenv("FAL_GATEWAY_URL", gateway.url().c_str(), 1);
  AllowImagesFrom(fal.port());
  Json r = Call({{"prompt", "gateway fox"}});
  ASSERT_EQ(r["success"], true) << r.dump();
  EXPECT_EQ(ReadSaved(r), fal.png());
  EXPECT_GE(gateway.requests.load(), 5) << "submit, three polls and the result";
  std::lock_guard lock(fal.mu_);
  EXPECT_EQ(fal.body["image_size"], "landscape_16_9");
}

TEST_F(ImageGenerateTest, AGatewayRefusalNamesTheModel) {
  FakeFal fal("vendor-key");
  FakeGateway gateway("user-token", fal, "vendor-key");
  gateway.reject_with = 403;
  ::setenv("TOOL_GATEWAY_USER_TOKEN", "user-token", 1);
  ::setenv("FAL_GATEWAY_URL", gateway.url().c_str(), 1);
  Json r = Call({{"prompt", "p"}});
  EXPECT_EQ(r["success"], false);
  EXPECT_EQ(r["error_type"], "permission_denied");
  const std::string error = r["error"];
  EXPECT_NE(error.find("gateway rejected model fal-ai/flux-2/klein/9b"), std::string::npos)
      << error;
  EXPECT_NE(error.find("model not in your plan"), std::string::npos) << error;
}

TEST_F(ImageGenerateTest, ADirectKeyIsKeptWhenThePreferredGatewayHasNoToken) {
  // #79628: use_gateway is on, but no gateway token exists; the user's FAL_KEY still works.
  FakeFal fal("fal-secret");
  ::setenv("FAL_KEY", "fal-secret", 1);
  ::setenv("FAL_QUEUE_URL", fal.url().c_str(), 1);
  ::setenv("FAL_GATEWAY_URL", "http://127.0.0.1:1", 1);
  AllowImagesFrom(fal.port(), "image_gen:\n  use_gateway: true\n");
  Json r = Call({{"prompt", "p"}});
  ASSERT_EQ(r["success"], true) << r.dump();
}

TEST_F(ImageGenerateTest, AFailedResultCarriesFalsOwnWords) {
  FakeFal fal("k");
  fal.result_status = 422;
  ::setenv("FAL_KEY", "k", 1);
  ::setenv("FAL_QUEUE_URL", fal.url().c_str(), 1);
  Json r = Call({{"prompt", "p"}});
  EXPECT_EQ(r["success"], false);
  EXPECT_EQ(r["error_type"], "backend_error");
  EXPECT_NE(r["error"].get<std::string>().find("prompt was flagged"), std::string::npos)
      << r.dump();
}

TEST_F(ImageGenerateTest, ACancelledWaitAsksFalToCancel) {
  FakeFal fal("k");
  fal.never_done = true;
  ::setenv("FAL_KEY", "k", 1);
  ::setenv("FAL_QUEUE_URL", fal.url().c_str(), 1);
  std::stop_source stop;
  Json r;
  std::jthread caller([&] {
    ToolContext ctx;
    ctx.cancel = stop.get_token();
    r = Call({{"prompt", "p"}}, ctx);
  });
  ASSERT_TRUE(fal.server().WaitSignals(2));
  stop.request_stop();
  caller.join();
  EXPECT_EQ(r["success"], false);
  EXPECT_EQ(r["error_type"], "cancelled");
  std::lock_guard lock(fal.mu_);
  EXPECT_EQ(fal.cancelled_path, "/fal-ai/flux-2/requests/req-1/cancel");
}

TEST_F(ImageGenerateTest, ImagesComeBackThroughTheNetworkGuard) {
  FakeFal fal("k");
  ::setenv("FAL_KEY", "k", 1);
  ::setenv("FAL_QUEUE_URL", fal.url().c_str(), 1);
  WriteConfig("");  // loopback is not allowed: the image URL the service named is refused
  Json r = Call({{"prompt", "p"}});
  EXPECT_EQ(r["success"], false);
  EXPECT_NE(r["error"].get<std::string>().find("network guard"), std::string::npos) << r.dump();
  EXPECT_FALSE(std::filesystem::exists(home_.path() + "/cache/images") &&
               !std::filesystem::is_empty(home_.path() + "/cache/images"));
}

TEST_F(ImageGenerateTest, SomethingThatIsNotAnImageIsNotSaved) {
  FakeFal fal("k");
  fal.image_body = "<html>oops</html>";
  ::setenv("FAL_KEY", "k", 1);
  ::setenv("FAL_QUEUE_URL", fal.url().c_str(), 1);
  AllowImagesFrom(fal.port());
  Json r = Call({{"prompt", "p"}});
  EXPECT_EQ(r["success"], false);
  EXPECT_NE(r["error"].get<std::string>().find("not a PNG"), std::string::npos) << r.dump();
}

TEST_F(ImageGenerateTest, OpenAiImagesAreDecodedAndSaved) {
  const std::string png = TestPng();
  Json body;
  std::string auth;
  LoopbackHttpServer openai([&](httplib::Server& s) {
    s.Post("/v1/images/generations", [&](const httplib::Request& req, httplib::Response& res) {
      body = Json::parse(req.body, nullptr, false);
      auth = req.get_header_value("Authorization");
      res.set_content(Json{{"data", {{{"b64_json", Base64Encode(png)}}}}}.dump(),
                      "application/json");
    });
  });
  ::setenv("OPENAI_API_KEY", "sk-test", 1);
  ::setenv("OPENAI_BASE_URL", openai.url("/v1").c_str(), 1);
  Json r = Call({{"prompt", "a lighthouse"}});
  ASSERT_EQ(r["success"], true) << r.dump();
  EXPECT_EQ(ReadSaved(r), png);
  EXPECT_EQ(auth, "Bearer sk-test");
  EXPECT_EQ(body["model"], "gpt-image-1");
  EXPECT_EQ(body["size"], "1536x1024");
  EXPECT_EQ(body["prompt"], "a lighthouse");
}

std::string SolidPng(uint32_t width, uint32_t height, char shade) {
  Rgb8Image img;
  img.width = width;
  img.height = height;
  img.pixels.assign(size_t{width} * height * 3, shade);
  return EncodePng(img).value_or("");
}

TEST_F(ImageGenerateTest, FluxTwoProChainsTheClarityUpscalerAndSavesItsImage) {
  FakeFal fal("k");
  fal.upscaled_png = SolidPng(16, 8, '\x80');
  ::setenv("FAL_KEY", "k", 1);
  ::setenv("FAL_QUEUE_URL", fal.url().c_str(), 1);
  AllowImagesFrom(fal.port(), "image_gen:\n  model: fal-ai/flux-2-pro\n");
  Json r = Call({{"prompt", "a harbour at dawn"}, {"aspect_ratio", "portrait"}});
  ASSERT_EQ(r["success"], true) << r.dump();
  EXPECT_EQ(ReadSaved(r), fal.upscaled_png) << "the upscaled image, not the first one";
  std::lock_guard lock(fal.mu_);
  ASSERT_EQ(fal.submits.size(), 2U);
  const auto& [model, args] = fal.submits[0];
  EXPECT_EQ(model, "fal-ai/flux-2-pro");
  EXPECT_EQ(args["image_size"], "portrait_16_9");
  EXPECT_EQ(args["num_inference_steps"], 50);
  EXPECT_EQ(args["guidance_scale"], 4.5);
  EXPECT_EQ(args["safety_tolerance"], "5");
  const auto& [upscaler, up] = fal.submits[1];
  EXPECT_EQ(upscaler, "fal-ai/clarity-upscaler");
  EXPECT_EQ(up["image_url"], fal.server().url("/files/out.png"));
  EXPECT_EQ(up["upscale_factor"], 2);
  EXPECT_EQ(up["creativity"], 0.35);
  EXPECT_EQ(up["resemblance"], 0.6);
  EXPECT_EQ(up["guidance_scale"], 4);
  EXPECT_EQ(up["num_inference_steps"], 18);
  EXPECT_EQ(fal.result_path, "/fal-ai/clarity-upscaler/requests/req-1");
}

TEST_F(ImageGenerateTest, AFailedUpscaleKeepsTheFirstImage) {
  FakeFal fal("k");
  fal.upscale_status = 500;
  ::setenv("FAL_KEY", "k", 1);
  ::setenv("FAL_QUEUE_URL", fal.url().c_str(), 1);
  AllowImagesFrom(fal.port(), "image_gen:\n  model: fal-ai/flux-2-pro\n");
  Json r = Call({{"prompt", "p"}});
  ASSERT_EQ(r["success"], true) << r.dump();
  EXPECT_EQ(ReadSaved(r), fal.png());
  std::lock_guard lock(fal.mu_);
  EXPECT_EQ(fal.submits.size(), 2U);
}

TEST_F(ImageGenerateTest, OtherFalModelsAreNotUpscaled) {
  FakeFal fal("k");
  ::setenv("FAL_KEY", "k", 1);
  ::setenv("FAL_QUEUE_URL", fal.url().c_str(), 1);
  AllowImagesFrom(fal.port(), "image_gen:\n  model: fal-ai/z-image/turbo\n");
  ASSERT_EQ(Call({{"prompt", "p"}})["success"], true);
  std::lock_guard lock(fal.mu_);
  ASSERT_EQ(fal.submits.size(), 1U);
  EXPECT_EQ(fal.submits[0].first, "fal-ai/z-image/turbo");
}

TEST_F(ImageGenerateTest, DallE3GetsItsOwnSizesAndAskForBase64) {
  const std::string png = TestPng();
  std::vector<Json> bodies;
  LoopbackHttpServer openai([&](httplib::Server& s) {
    s.Post("/v1/images/generations", [&](const httplib::Request& req, httplib::Response& res) {
      bodies.push_back(Json::parse(req.body, nullptr, false));
      res.set_content(Json{{"data", {{{"b64_json", Base64Encode(png)}}}}}.dump(),
                      "application/json");
    });
  });
  ::setenv("OPENAI_API_KEY", "sk-test", 1);
  ::setenv("OPENAI_BASE_URL", openai.url("/v1").c_str(), 1);
  WriteConfig("image_gen:\n  provider: openai\n  openai_model: dall-e-3\n");
  for (const char* aspect : {"landscape", "square", "portrait"}) {
    Json r = Call({{"prompt", "a lighthouse"}, {"aspect_ratio", aspect}});
    ASSERT_EQ(r["success"], true) << aspect << ": " << r.dump();
    EXPECT_EQ(ReadSaved(r), png);
  }
  ASSERT_EQ(bodies.size(), 3U);
  EXPECT_EQ(bodies[0]["size"], "1792x1024");
  EXPECT_EQ(bodies[1]["size"], "1024x1024");
  EXPECT_EQ(bodies[2]["size"], "1024x1792");
  for (const Json& b : bodies) {
    EXPECT_EQ(b["model"], "dall-e-3");
    EXPECT_EQ(b["response_format"], "b64_json");
    EXPECT_EQ(b["n"], 1);
  }
  // gpt-image-1 has its own sizes and answers in base64 without being asked.
  bodies.clear();
  WriteConfig("image_gen:\n  provider: openai\n  openai_model: gpt-image-1\n");
  ASSERT_EQ(Call({{"prompt", "p"}, {"aspect_ratio", "portrait"}})["success"], true);
  ASSERT_EQ(bodies.size(), 1U);
  EXPECT_EQ(bodies[0]["size"], "1024x1536");
  EXPECT_FALSE(bodies[0].contains("response_format"));
}

TEST_F(ImageGenerateTest, BadArgumentsAreRefusedBeforeAnyRequest) {
  ::setenv("FAL_KEY", "k", 1);
  ::setenv("FAL_QUEUE_URL", "http://127.0.0.1:1", 1);
  Json r = Call({{"prompt", "  "}});
  EXPECT_EQ(r["error_type"], "invalid_argument");
  r = Call({{"prompt", "p"}, {"aspect_ratio", "wide"}});
  EXPECT_EQ(r["error_type"], "invalid_argument");
  WriteConfig("image_gen:\n  model: ../../etc\n");
  r = Call({{"prompt", "p"}});
  EXPECT_EQ(r["error_type"], "invalid_argument") << r.dump();
}

}  // namespace
}  // namespace talaria::media
