// The managed tool gateway against a real token endpoint on 127.0.0.1: origins and auth headers
// per vendor, the refresh (form fields, write-back, one refresh for many callers), and the
// rule that a direct key is never discarded for a gateway that cannot be used (#79628).
#include "talaria/net/tool_gateway.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <chrono>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/loopback_http.h"
#include "support/temp_dir.h"
#include "talaria/base/file_io.h"
#include "talaria/base/json.h"

namespace talaria::net {
namespace {

using talaria_test::LoopbackHttpServer;

const std::vector<const char*> kVars = {"TOOL_GATEWAY_USER_TOKEN", "TOOL_GATEWAY_TOKEN_FILE",
                                        "TOOL_GATEWAY_DOMAIN",     "TOOL_GATEWAY_SCHEME",
                                        "FAL_GATEWAY_URL",         "FAL_USE_GATEWAY",
                                        "FIRECRAWL_GATEWAY_URL"};

std::string Iso(std::chrono::system_clock::time_point t) {
  const time_t secs = std::chrono::system_clock::to_time_t(t);
  struct tm tm {};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

class ToolGatewayTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* v : kVars) ::unsetenv(v);
    ::setenv("TALARIA_HOME", home_.path().c_str(), 1);
    token_file_ = home_.path() + "/token.json";
    ::setenv("TOOL_GATEWAY_TOKEN_FILE", token_file_.c_str(), 1);
  }
  void TearDown() override {
    for (const char* v : kVars) ::unsetenv(v);
  }
  void WriteTokenFile(const Json& doc) { std::ofstream(token_file_) << doc.dump(); }
  Json ReadTokenFile() {
    auto text = ReadWholeFile(token_file_);
    EXPECT_TRUE(text.has_value());
    return text ? Json::parse(*text) : Json();
  }

  talaria::test_support::TempDir home_;
  std::string token_file_;
};

// An OAuth token endpoint whose refresh tokens rotate: each may be spent once.
class FakeTokenEndpoint {
 public:
  FakeTokenEndpoint()
      : server_([this](httplib::Server& s) {
          s.Post("/oauth/token", [this](const httplib::Request& req, httplib::Response& res) {
            std::lock_guard lock(mu_);
            ++refreshes_;
            form_ = req.get_param_value("grant_type") + "|" + req.get_param_value("refresh_token") +
                    "|" + req.get_param_value("client_id") + "|" +
                    req.get_header_value("Content-Type");
            if (req.get_param_value("refresh_token") != valid_refresh_) {
              res.status = 400;
              res.set_content(R"({"error":"invalid_grant"})", "application/json");
              return;
            }
            ++generation_;
            valid_refresh_ = "refresh-" + std::to_string(generation_);
            res.set_content(Json{{"access_token", "access-" + std::to_string(generation_)},
                                 {"expires_in", 3600},
                                 {"refresh_token", valid_refresh_}}
                                .dump(),
                            "application/json");
          });
        }) {}
  std::string url() const { return server_.url("/oauth/token"); }
  int refreshes() {
    std::lock_guard lock(mu_);
    return refreshes_;
  }
  std::string form() {
    std::lock_guard lock(mu_);
    return form_;
  }

 private:
  std::mutex mu_;
  int refreshes_ = 0;                        // Guarded by mu_.
  int generation_ = 0;                       // Guarded by mu_.
  std::string valid_refresh_ = "refresh-0";  // Guarded by mu_.
  std::string form_;                         // Guarded by mu_.
  LoopbackHttpServer server_;
};

TEST_F(ToolGatewayTest, EnvTokenGivesEachVendorItsOriginAndHeader) {
  ::setenv("TOOL_GATEWAY_USER_TOKEN", "user-token", 1);
  ::setenv("TOOL_GATEWAY_DOMAIN", "gw.example.test", 1);
  ::setenv("TOOL_GATEWAY_SCHEME", "http", 1);
  auto fal = ResolveToolGateway("fal");
  ASSERT_TRUE(fal.has_value()) << fal.error().ToString();
  EXPECT_EQ(fal->origin, "http://fal-gateway.gw.example.test");
  EXPECT_EQ(fal->auth_header,
            std::make_pair(std::string("Authorization"), std::string("Key user-token")));
  auto bu = ResolveToolGateway("browser-use");
  ASSERT_TRUE(bu.has_value());
  EXPECT_EQ(bu->origin, "http://browser-use-gateway.gw.example.test");
  EXPECT_EQ(bu->auth_header.first, "X-Browser-Use-API-Key");
  EXPECT_EQ(bu->auth_header.second, "user-token");
  ::setenv("FIRECRAWL_GATEWAY_URL", "http://127.0.0.1:9/", 1);
  auto fc = ResolveToolGateway("firecrawl");
  ASSERT_TRUE(fc.has_value());
  EXPECT_EQ(fc->origin, "http://127.0.0.1:9");
  EXPECT_EQ(fc->auth_header.second, "Bearer user-token");
  EXPECT_TRUE(ToolGatewayConfigured("modal"));

  EXPECT_EQ(ResolveToolGateway("../evil").error().code(), StatusCode::kInvalidArgument);
  ::setenv("TOOL_GATEWAY_SCHEME", "file", 1);
  EXPECT_EQ(ResolveToolGateway("fal").error().code(), StatusCode::kInvalidArgument);
}

TEST_F(ToolGatewayTest, NoTokenIsNotFoundNamingWhatToSet) {
  auto gw = ResolveToolGateway("fal");
  ASSERT_FALSE(gw.has_value());
  EXPECT_EQ(gw.error().code(), StatusCode::kNotFound);
  EXPECT_NE(gw.error().message().find("TOOL_GATEWAY_USER_TOKEN"), std::string::npos);
  EXPECT_FALSE(ToolGatewayConfigured("fal"));
  WriteTokenFile(Json{{"something", "else"}});
  EXPECT_EQ(ResolveToolGateway("fal").error().code(), StatusCode::kNotFound);
  std::ofstream(token_file_) << "not json";
  EXPECT_EQ(ResolveToolGateway("fal").error().code(), StatusCode::kInvalidArgument);
}

TEST_F(ToolGatewayTest, AFreshTokenIsUsedWithoutRefreshing) {
  FakeTokenEndpoint endpoint;
  WriteTokenFile({{"access_token", "still-good"},
                  {"expires_at", Iso(std::chrono::system_clock::now() + std::chrono::hours(1))},
                  {"refresh_token", "refresh-0"},
                  {"token_url", endpoint.url()}});
  auto gw = ResolveToolGateway("fal");
  ASSERT_TRUE(gw.has_value()) << gw.error().ToString();
  EXPECT_EQ(gw->token, "still-good");
  EXPECT_EQ(endpoint.refreshes(), 0);
}

// Past 2262 the clock's nanoseconds would wrap: such a token is fresh, not expired in 1829.
TEST_F(ToolGatewayTest, AnExpiryCenturiesAwayIsFresh) {
  for (const Json& expiry :
       {Json("2999-01-01T00:00:00Z"), Json(99'999'999'999.0), Json("99999999999")}) {
    WriteTokenFile({{"access_token", "long-lived"}, {"expires_at", expiry}});
    auto gw = ResolveToolGateway("modal");
    ASSERT_TRUE(gw.has_value()) << expiry.dump() << ": " << gw.error().ToString();
    EXPECT_EQ(gw->token, "long-lived");
    EXPECT_TRUE(ToolGatewayConfigured("modal"));
  }
}

TEST_F(ToolGatewayTest, AnExpiringTokenIsRefreshedAndWrittenBack) {
  FakeTokenEndpoint endpoint;
  WriteTokenFile({{"access_token", "old"},
                  {"expires_at", Iso(std::chrono::system_clock::now() + std::chrono::seconds(30))},
                  {"refresh_token", "refresh-0"},
                  {"token_url", endpoint.url()},
                  {"client_id", "talaria cli"}});
  auto gw = ResolveToolGateway("firecrawl");
  ASSERT_TRUE(gw.has_value()) << gw.error().ToString();
  EXPECT_EQ(gw->token, "access-1");
  EXPECT_EQ(gw->auth_header.second, "Bearer access-1");
  EXPECT_EQ(endpoint.form(),
            "refresh_token|refresh-0|talaria cli|application/x-www-form-urlencoded");
  const Json saved = ReadTokenFile();
  EXPECT_EQ(saved["access_token"], "access-1");
  EXPECT_EQ(saved["refresh_token"], "refresh-1") << "the rotated refresh token is kept";
  EXPECT_EQ(saved["client_id"], "talaria cli") << "fields it does not own survive";
  struct stat st {};
  ASSERT_EQ(::stat(token_file_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600U);
  // The written expiry is an hour away: the next call does not refresh again.
  ASSERT_TRUE(ResolveToolGateway("fal").has_value());
  EXPECT_EQ(endpoint.refreshes(), 1);
}

TEST_F(ToolGatewayTest, ManyCallersSpendARotatingRefreshTokenOnce) {
  FakeTokenEndpoint endpoint;
  WriteTokenFile({{"access_token", "old"},
                  {"expires_at", Iso(std::chrono::system_clock::now() - std::chrono::seconds(5))},
                  {"refresh_token", "refresh-0"},
                  {"token_url", endpoint.url()}});
  std::vector<std::string> tokens(8);
  {
    std::vector<std::jthread> callers;
    for (size_t i = 0; i < tokens.size(); ++i) {
      callers.emplace_back([&, i] {
        auto gw = ResolveToolGateway("fal");
        tokens[i] = gw ? gw->token : gw.error().ToString();
      });
    }
  }
  for (const std::string& t : tokens) EXPECT_EQ(t, "access-1");
  EXPECT_EQ(endpoint.refreshes(), 1);
}

TEST_F(ToolGatewayTest, TheOriginalsAuthJsonShapeIsRead) {
  ::unsetenv("TOOL_GATEWAY_TOKEN_FILE");
  ASSERT_EQ(::mkdir((home_.path() + "/auth").c_str(), 0700), 0);
  std::ofstream(home_.path() + "/auth/tool_gateway.json")
      << Json{{"providers",
               {{"nous", {{"access_token", "nous-token"}, {"expires_at", 4102444800}}}}}}
             .dump();
  auto gw = ResolveToolGateway("fal");
  ASSERT_TRUE(gw.has_value()) << gw.error().ToString();
  EXPECT_EQ(gw->token, "nous-token");
}

TEST_F(ToolGatewayTest, AnExpiredTokenWithoutRefreshIsNotConfigured) {
  WriteTokenFile({{"access_token", "old"}, {"expires_at", "2020-01-01T00:00:00+00:00"}});
  EXPECT_FALSE(ToolGatewayConfigured("fal"));
  auto gw = ResolveToolGateway("fal");
  ASSERT_FALSE(gw.has_value());
  EXPECT_EQ(gw.error().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(gw.error().message().find("2020-01-01T00:00:00Z"), std::string::npos)
      << gw.error().message();
}

TEST_F(ToolGatewayTest, AFailedRefreshKeepsAStillValidTokenAndReportsAnExpiredOne) {
  FakeTokenEndpoint endpoint;
  const Json spent = {
      {"access_token", "old"},
      {"expires_at", Iso(std::chrono::system_clock::now() + std::chrono::seconds(60))},
      {"refresh_token", "already-spent"},
      {"token_url", endpoint.url()}};
  WriteTokenFile(spent);
  auto gw = ResolveToolGateway("fal");
  ASSERT_TRUE(gw.has_value()) << gw.error().ToString();
  EXPECT_EQ(gw->token, "old") << "60 s left: still usable when the refresh fails";
  Json expired = spent;
  expired["expires_at"] = Iso(std::chrono::system_clock::now() - std::chrono::seconds(1));
  WriteTokenFile(expired);
  gw = ResolveToolGateway("fal");
  ASSERT_FALSE(gw.has_value());
  EXPECT_EQ(gw.error().code(), StatusCode::kUnavailable);
  EXPECT_NE(gw.error().message().find("invalid_grant"), std::string::npos) << gw.error().message();
}

TEST_F(ToolGatewayTest, ADirectKeyIsNeverDiscardedForAnUnusableGateway) {
  // #79628: the user prefers the gateway, which has no token; their own key still works.
  auto pick = PickToolGateway("fal", /*have_direct_key=*/true, GatewayPreference::kGatewayFirst);
  ASSERT_TRUE(pick.has_value());
  EXPECT_FALSE(pick->has_value());
  // Without a key the gateway's problem is the answer.
  pick = PickToolGateway("fal", false, GatewayPreference::kDirectFirst);
  ASSERT_FALSE(pick.has_value());
  EXPECT_EQ(pick.error().code(), StatusCode::kNotFound);

  ::setenv("TOOL_GATEWAY_USER_TOKEN", "t", 1);
  pick = PickToolGateway("fal", true, GatewayPreference::kDirectFirst);
  ASSERT_TRUE(pick.has_value());
  EXPECT_FALSE(pick->has_value()) << "a direct key wins by default";
  ::setenv("FAL_USE_GATEWAY", "1", 1);
  pick = PickToolGateway("fal", true, GatewayPreference::kDirectFirst);
  ASSERT_TRUE(pick.has_value() && pick->has_value());
  EXPECT_EQ((*pick)->auth_header.second, "Key t");
  pick = PickToolGateway("fal", false, GatewayPreference::kDirectFirst);
  ASSERT_TRUE(pick.has_value() && pick->has_value()) << "no key: the gateway";
}

}  // namespace
}  // namespace talaria::net
