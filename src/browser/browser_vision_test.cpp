// browser_vision through the registry with real Chromium: with `auxiliary.vision` configured the
// screenshot goes to that model (the scripted fake LLM checks it got a PNG image part with the
// question) and the answer comes back as {success, analysis, screenshot_path}; without it the
// image itself is returned; screenshots older than a day are swept from $TALARIA_HOME/cache.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "browser/chromium_process.h"
#include "support/fake_llm_server.h"
#include "support/loopback_http.h"
#include "support/temp_dir.h"
#include "talaria/base/base64.h"
#include "talaria/browser/browser_sessions.h"
#include "talaria/core/registry.h"

namespace talaria::browser {
namespace vision_test {

class BrowserVisionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (FindChromium().empty()) GTEST_SKIP() << "no Chromium installed (apt-get install chromium)";
    ::setenv("TALARIA_HOME", home_.path().c_str(), 1);
    ::setenv("VISION_TEST_KEY", "vision-secret", 1);
  }
  void TearDown() override {
    CloseAllBrowserSessions();
    ::unsetenv("VISION_TEST_KEY");
  }
  void WriteConfig(const std::string& extra) {
    std::ofstream(home_.path() + "/config.yaml")
        << "browser:\n  allow_private: [\"127.0.0.1:" << page_.port() << "\"]\n"
        << extra;
  }
  Json Call(const std::string& tool, const Json& args, bool* ok) {
    auto entry = Registry::Global().GetEntry(tool);
    EXPECT_NE(entry, nullptr) << tool;
    if (entry == nullptr) return Json();
    ToolContext ctx;
    ctx.task_id = "vision-test";
    last_ = entry->handler()(args, ctx);
    *ok = last_.ok();
    auto j = ParseJson(last_.text);
    EXPECT_TRUE(j.has_value()) << last_.text;
    return j.has_value() ? *j : Json();
  }

  talaria::test_support::TempDir home_;
  talaria_test::LoopbackHttpServer page_{[](httplib::Server& s) {
    s.Get("/", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(
          "<!doctype html><title>Chart</title><h1 style='color:red'>Sales are up</h1>"
          "<button>Buy</button>",
          "text/html");
    });
  }};
  ToolResult last_;
};

TEST_F(BrowserVisionTest, AsksTheAuxiliaryVisionModelWithTheScreenshot) {
  std::string error;
  auto llm = talaria::test_support::FakeLlmServer::FromScript(
      R"({"turns": [{"text": "  A red heading says Sales are up.  "}]})", &error);
  ASSERT_TRUE(llm && llm->Start(&error)) << error;
  WriteConfig("auxiliary:\n  vision:\n    model: looker-1\n    base_url: " + llm->base_url() +
              "\n    api_key_env: VISION_TEST_KEY\n");
  // A screenshot from two days ago is swept; the new one stays.
  const std::string dir = home_.path() + "/cache/screenshots";
  std::filesystem::create_directories(dir);
  const std::string old_shot = dir + "/browser_screenshot_old.png";
  std::ofstream(old_shot) << "old";
  std::filesystem::last_write_time(
      old_shot, std::filesystem::file_time_type::clock::now() - std::chrono::hours(48));

  bool ok = false;
  Json nav = Call("browser_navigate", {{"url", page_.url("/")}}, &ok);
  ASSERT_TRUE(ok) << nav.dump();
  Json r = Call("browser_vision", {{"question", "What colour is the heading?"}}, &ok);
  ASSERT_TRUE(ok) << last_.text;
  EXPECT_EQ(r["success"], true);
  EXPECT_EQ(r["analysis"], "A red heading says Sales are up.");
  EXPECT_EQ(last_.content, nullptr);  // an answer, not an image for the caller
  EXPECT_EQ(last_.untrusted_source, "browser");
  const std::string path = r.value("screenshot_path", "");
  EXPECT_TRUE(std::filesystem::exists(path)) << r.dump();
  EXPECT_EQ(path.rfind(dir + "/browser_screenshot_", 0), 0U) << path;
  EXPECT_FALSE(std::filesystem::exists(old_shot));

  // What the model got: the configured model and key, the question, and the PNG as a data URL.
  ASSERT_EQ(llm->requests().size(), 1U);
  const auto req = llm->requests()[0];
  EXPECT_EQ(req.Header("Authorization"), "Bearer vision-secret");
  const auto body = req.Json();
  EXPECT_EQ(body["model"], "looker-1");
  const auto& content = body["messages"][0]["content"];
  ASSERT_TRUE(content.is_array()) << body.dump();
  bool asked = false, imaged = false;
  for (const auto& part : content) {
    if (part["type"] == "text") {
      asked |=
          part["text"].get<std::string>().find("What colour is the heading?") != std::string::npos;
    }
    if (part["type"] == "image_url") {
      const std::string url = part["image_url"]["url"];
      const std::string prefix = "data:image/png;base64,";
      ASSERT_EQ(url.rfind(prefix, 0), 0U) << url.substr(0, 40);
      auto png = Base64Decode(url.substr(prefix.size()));
      ASSERT_TRUE(png.has_value());
      imaged = png->size() > 100 && png->substr(1, 3) == "PNG";
    }
  }
  EXPECT_TRUE(asked) << body.dump();
  EXPECT_TRUE(imaged);
  EXPECT_EQ(llm->ProblemsText(), "");
}

TEST_F(BrowserVisionTest, AFailingVisionModelIsAClearError) {
  std::string error;
  auto llm = talaria::test_support::FakeLlmServer::FromScript(
      R"({"turns": [{"fault": {"kind": "500", "message": "model overloaded"}}]})", &error);
  ASSERT_TRUE(llm && llm->Start(&error)) << error;
  WriteConfig("auxiliary:\n  vision:\n    model: looker-1\n    base_url: " + llm->base_url() +
              "\n");
  bool ok = false;
  ASSERT_TRUE((Call("browser_navigate", {{"url", page_.url("/")}}, &ok), ok));
  Json r = Call("browser_vision", {{"question", "anything?"}}, &ok);
  EXPECT_FALSE(ok);
  EXPECT_EQ(r["success"], false);
  EXPECT_NE(r.value("error", "").find("vision model"), std::string::npos) << r.dump();
  EXPECT_NE(r.value("error", "").find("model overloaded"), std::string::npos) << r.dump();
}

TEST_F(BrowserVisionTest, WithoutAnAuxiliaryModelTheImageItselfIsReturned) {
  WriteConfig("");
  bool ok = false;
  ASSERT_TRUE((Call("browser_navigate", {{"url", page_.url("/")}}, &ok), ok));
  Json r = Call("browser_vision", {{"question", "what is shown?"}}, &ok);
  ASSERT_TRUE(ok) << last_.text;
  ASSERT_NE(last_.content, nullptr);
  EXPECT_EQ((*last_.content)[1]["type"], "image");
  EXPECT_EQ((*last_.content)[1]["mimeType"], "image/png");
  EXPECT_FALSE(r.contains("analysis"));
}

}  // namespace vision_test
}  // namespace talaria::browser
