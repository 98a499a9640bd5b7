// The cloud providers against their fakes (tests/support/fake_browser_cloud.*): what each
// sends (auth header, path, fields), Browserbase's 402 fallbacks, Browser Use's idempotency key
// across retries, hostile answers; and the whole path past the REST call with a real Chromium:
// the CDP URL the fake hands out is a real browser's, reached over ConnectWebSocket.
#include <stdlib.h>

#include <gtest/gtest.h>

#include <chrono>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "support/fake_browser_cloud.h"
#include "support/local_chromium.h"
#include "support/loopback_http.h"
#include "talaria/browser/cdp_transport.h"
#include "talaria/browser/providers.h"

namespace talaria::browser {
namespace {

using namespace std::chrono_literals;
using talaria_test::FakeBrowserCloud;
using talaria_test::FakeCloudOptions;
using talaria_test::FakeCloudRequest;

constexpr auto kTimeout = std::chrono::milliseconds(10'000);
const std::string kNoBrowser = "ws://127.0.0.1:9/devtools/browser/none";

nlohmann::json Body(const FakeCloudRequest& r) { return nlohmann::json::parse(r.body); }

BrowserbaseSettings Browserbase(const FakeBrowserCloud& cloud) {
  BrowserbaseSettings s;
  s.api_key = "bb-test-key";
  s.project_id = "proj-test";
  s.base_url = cloud.url();
  return s;
}

TEST(BrowserbaseProvider, HandsOutARealChromiumAndReleasesIt) {
  if (talaria_test::LocalChromium::ProgramPath().empty()) GTEST_SKIP() << "no Chromium installed";
  std::string why;
  auto chromium = talaria_test::LocalChromium::Start(why);
  ASSERT_TRUE(chromium) << why;
  FakeBrowserCloud cloud({.cdp_url = chromium->browser_ws_url()});
  BrowserbaseSettings settings = Browserbase(cloud);
  settings.advanced_stealth = true;
  settings.session_timeout = 600;
  auto provider = MakeBrowserbaseProvider(settings, kTimeout);
  auto connected = ConnectRemoteBrowser(*provider, "task-1", {});
  ASSERT_TRUE(connected.has_value()) << connected.error().message();
  const RemoteBrowser* remote = &connected->browser;
  EXPECT_EQ(remote->provider, "browserbase");
  EXPECT_EQ(remote->cdp_url, chromium->browser_ws_url());
  EXPECT_EQ(cloud.live_sessions("browserbase"), 1);

  const auto create = cloud.requests().at(0);
  EXPECT_EQ(create.method, "POST");
  EXPECT_EQ(create.path, "/v1/sessions");
  EXPECT_EQ(create.headers.at("x-bb-api-key"), "bb-test-key");
  EXPECT_EQ(Body(create), nlohmann::json::parse(
                              R"({"projectId":"proj-test","keepAlive":true,"timeout":600,
                                  "proxies":true,"browserSettings":{"advancedStealth":true}})"));

  // Past the REST call everything is real: CDP over the WebSocket to that Chromium.
  CdpTransport& cdp = *connected->transport;
  ASSERT_TRUE(cdp.Send(R"({"id":7,"method":"Browser.getVersion"})").ok());
  auto reply = cdp.Receive(std::chrono::steady_clock::now() + 20s, {});
  ASSERT_TRUE(reply.has_value()) << reply.error().message();
  EXPECT_EQ(nlohmann::json::parse(*reply).value("id", 0), 7);
  cdp.Close();

  ASSERT_TRUE(provider->Release(*remote).ok());
  EXPECT_EQ(cloud.live_sessions("browserbase"), 0);
  const auto release = cloud.requests().back();
  EXPECT_EQ(release.path, "/v1/sessions/" + remote->session_id);
  EXPECT_EQ(Body(release),
            nlohmann::json::parse(R"({"projectId":"proj-test","status":"REQUEST_RELEASE"})"));
  // Released twice is still released (the service forgot it: 404).
  EXPECT_TRUE(provider->Release(*remote).ok());
}

TEST(BrowserbaseProvider, ABrowserThatCannotBeReachedIsReleased) {
  FakeBrowserCloud cloud(
      {.cdp_url = "ws://127.0.0.1:" + std::to_string(talaria_test::UnusedLoopbackPort()) +
                  "/devtools/browser/gone"});
  auto provider = MakeBrowserbaseProvider(Browserbase(cloud), kTimeout);
  auto connected = ConnectRemoteBrowser(*provider, "t", {});
  ASSERT_FALSE(connected.has_value());
  EXPECT_EQ(connected.error().code(), StatusCode::kUnavailable);
  EXPECT_EQ(connected.error().message().rfind("browserbase: ", 0), 0u)
      << connected.error().message();
  EXPECT_EQ(cloud.sessions_made("browserbase"), 1);
  EXPECT_EQ(cloud.live_sessions("browserbase"), 0);
}

TEST(BrowserbaseProvider, A402DropsKeepAliveThenProxies) {
  FakeBrowserCloud cloud(
      {.cdp_url = kNoBrowser, .plan_has_keep_alive = false, .plan_has_proxies = false});
  auto provider = MakeBrowserbaseProvider(Browserbase(cloud), kTimeout);
  auto remote = provider->Acquire("t", {});
  ASSERT_TRUE(remote.has_value()) << remote.error().message();
  const auto requests = cloud.requests();
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_TRUE(Body(requests[0]).contains("keepAlive"));
  EXPECT_TRUE(Body(requests[0]).contains("proxies"));
  EXPECT_FALSE(Body(requests[1]).contains("keepAlive"));
  EXPECT_TRUE(Body(requests[1]).contains("proxies"));
  EXPECT_EQ(Body(requests[2]), nlohmann::json::parse(R"({"projectId":"proj-test"})"));
  EXPECT_EQ(cloud.sessions_made("browserbase"), 1);
}

TEST(BrowserbaseProvider, KeysAndStatusesBecomeClearErrors) {
  FakeBrowserCloud cloud({.cdp_url = kNoBrowser});
  BrowserbaseSettings no_key = Browserbase(cloud);
  no_key.api_key.clear();
  auto missing = MakeBrowserbaseProvider(no_key, kTimeout)->Acquire("t", {});
  EXPECT_EQ(missing.error().code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(cloud.requests().empty());

  BrowserbaseSettings wrong = Browserbase(cloud);
  wrong.api_key = "not-the-key";
  auto refused = MakeBrowserbaseProvider(wrong, kTimeout)->Acquire("t", {});
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code(), StatusCode::kPermissionDenied);
  EXPECT_NE(refused.error().message().find("HTTP 401: invalid api key"), std::string::npos)
      << refused.error().message();

  BrowserbaseSettings unreachable = Browserbase(cloud);
  unreachable.base_url = "http://127.0.0.1:" + std::to_string(talaria_test::UnusedLoopbackPort());
  auto down = MakeBrowserbaseProvider(unreachable, kTimeout)->Acquire("t", {});
  ASSERT_FALSE(down.has_value());
  EXPECT_EQ(down.error().code(), StatusCode::kUnavailable);
}

TEST(BrowserbaseProvider, HostileAnswersAreRefusedAndTheSessionIsNotLeaked) {
  {
    FakeBrowserCloud cloud({.cdp_url = kNoBrowser, .hostile_id = "../../v1/projects"});
    auto remote = MakeBrowserbaseProvider(Browserbase(cloud), kTimeout)->Acquire("t", {});
    ASSERT_FALSE(remote.has_value());
    EXPECT_EQ(remote.error().code(), StatusCode::kInvalidArgument);
  }
  FakeBrowserCloud cloud({.cdp_url = "http://127.0.0.1:9/not-a-websocket"});
  auto remote = MakeBrowserbaseProvider(Browserbase(cloud), kTimeout)->Acquire("t", {});
  ASSERT_FALSE(remote.has_value());
  EXPECT_EQ(remote.error().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(cloud.sessions_made("browserbase"), 1);
  EXPECT_EQ(cloud.live_sessions("browserbase"), 0);  // released, not left running
}

TEST(BrowserUseProvider, DirectCreateAndStop) {
  FakeBrowserCloud cloud({.cdp_url = kNoBrowser});
  BrowserUseSettings s;
  s.api_key = "bu-test-key";
  s.base_url = cloud.url() + "/api/v3";
  auto provider = MakeBrowserUseProvider(s, kTimeout);
  auto remote = provider->Acquire("t", {});
  ASSERT_TRUE(remote.has_value()) << remote.error().message();
  EXPECT_EQ(remote->cdp_url, kNoBrowser);
  const auto create = cloud.requests().at(0);
  EXPECT_EQ(create.path, "/api/v3/browsers");
  EXPECT_EQ(create.headers.at("x-browser-use-api-key"), "bu-test-key");
  EXPECT_EQ(create.headers.count("x-idempotency-key"), 0u);
  EXPECT_EQ(Body(create), nlohmann::json::object());
  ASSERT_TRUE(provider->Release(*remote).ok());
  const auto stop = cloud.requests().back();
  EXPECT_EQ(stop.method, "PATCH");
  EXPECT_EQ(stop.path, "/api/v3/browsers/" + remote->session_id);
  EXPECT_EQ(Body(stop), nlohmann::json::parse(R"({"action":"stop"})"));
  EXPECT_EQ(cloud.live_sessions("browser-use"), 0);
}

TEST(BrowserUseProvider, TheGatewayKeepsOneIdempotencyKeyPerTaskAcrossRetries) {
  // The first create fails before doing anything; the second makes a browser and its answer
  // is lost (503); the third, with the same key, gets that browser back.
  FakeBrowserCloud cloud({.cdp_url = kNoBrowser, .fail_first_creates = 1, .fail_after_create = 1});
  BrowserUseSettings s;
  s.gateway_url = cloud.url();
  s.gateway_token = "gw-test-token";
  auto provider = MakeBrowserUseProvider(s, kTimeout);
  auto remote = provider->Acquire("task-a", {});
  ASSERT_TRUE(remote.has_value()) << remote.error().message();
  EXPECT_EQ(cloud.sessions_made("browser-use"), 1);

  std::set<std::string> keys;
  int creates = 0;
  for (const auto& r : cloud.requests()) {
    if (r.method != "POST") continue;
    ++creates;
    keys.insert(r.headers.at("x-idempotency-key"));
    EXPECT_EQ(r.headers.at("x-browser-use-api-key"), "gw-test-token");
    EXPECT_EQ(Body(r), nlohmann::json::parse(R"({"timeout":5,"proxyCountryCode":"us"})"));
  }
  EXPECT_EQ(creates, 3);
  ASSERT_EQ(keys.size(), 1u);

  // Another task gets another key; the same task after a release gets a fresh one too.
  auto other = provider->Acquire("task-b", {});
  ASSERT_TRUE(other.has_value()) << other.error().message();
  EXPECT_NE(cloud.requests().back().headers.at("x-idempotency-key"), *keys.begin());
  EXPECT_EQ(cloud.sessions_made("browser-use"), 2);
  ASSERT_TRUE(provider->Release(*remote).ok());
  ASSERT_TRUE(provider->Release(*other).ok());
  EXPECT_EQ(cloud.live_sessions("browser-use"), 0);
}

// The managed gateway as the net module resolves it (its URL and token variables), not read
// by the provider itself: used when there is no direct key, and for the stop too.
TEST(BrowserUseProvider, TheNetModulesGatewayIsUsedWithoutAKey) {
  FakeBrowserCloud cloud({.cdp_url = kNoBrowser});
  ::setenv("BROWSER_USE_GATEWAY_URL", cloud.url().c_str(), 1);
  ::setenv("TOOL_GATEWAY_USER_TOKEN", "gw-test-token", 1);
  BrowserProviderSettings settings;
  settings.provider = "browser-use";
  EXPECT_EQ(ProviderUnavailableReason(settings), "");
  auto provider = MakeBrowserUseProvider(BrowserUseSettings{}, kTimeout);
  auto remote = provider->Acquire("t", {});
  ASSERT_TRUE(remote.has_value()) << remote.error().message();
  const auto create = cloud.requests().at(0);
  EXPECT_EQ(create.path, "/api/v3/browsers");
  EXPECT_EQ(create.headers.at("x-browser-use-api-key"), "gw-test-token");
  EXPECT_EQ(create.headers.count("x-idempotency-key"), 1u);
  EXPECT_EQ(Body(create), nlohmann::json::parse(R"({"timeout":5,"proxyCountryCode":"us"})"));
  EXPECT_TRUE(provider->Release(*remote).ok());
  EXPECT_EQ(cloud.requests().back().headers.at("x-browser-use-api-key"), "gw-test-token");
  EXPECT_EQ(cloud.live_sessions("browser-use"), 0);
  ::unsetenv("BROWSER_USE_GATEWAY_URL");
  ::unsetenv("TOOL_GATEWAY_USER_TOKEN");
  EXPECT_NE(ProviderUnavailableReason(settings), "");  // neither a key nor a gateway
  auto none = MakeBrowserUseProvider(BrowserUseSettings{}, kTimeout)->Acquire("t", {});
  ASSERT_FALSE(none.has_value());
  EXPECT_NE(none.error().message().find("BROWSER_USE_API_KEY"), std::string::npos);
}

TEST(BrowserUseProvider, ADirectKeyWinsOverTheGatewayUnlessItIsPreferred) {
  FakeBrowserCloud cloud({.cdp_url = kNoBrowser});
  ::setenv("BROWSER_USE_GATEWAY_URL", cloud.url().c_str(), 1);
  ::setenv("TOOL_GATEWAY_USER_TOKEN", "gw-test-token", 1);
  BrowserUseSettings s;
  s.api_key = "bu-test-key";
  s.base_url = cloud.url() + "/api/v3";
  auto provider = MakeBrowserUseProvider(s, kTimeout);
  auto direct = provider->Acquire("t", {});
  ASSERT_TRUE(direct.has_value()) << direct.error().message();
  EXPECT_EQ(cloud.requests().back().headers.at("x-browser-use-api-key"), "bu-test-key");
  ::setenv("BROWSER_USE_USE_GATEWAY", "1", 1);
  auto gated = provider->Acquire("u", {});
  ASSERT_TRUE(gated.has_value()) << gated.error().message();
  EXPECT_EQ(cloud.requests().back().headers.at("x-browser-use-api-key"), "gw-test-token");
  // Each is stopped the way it was made.
  EXPECT_TRUE(provider->Release(*gated).ok());
  EXPECT_EQ(cloud.requests().back().headers.at("x-browser-use-api-key"), "gw-test-token");
  ::unsetenv("BROWSER_USE_USE_GATEWAY");
  EXPECT_TRUE(provider->Release(*direct).ok());
  EXPECT_EQ(cloud.requests().back().headers.at("x-browser-use-api-key"), "bu-test-key");
  EXPECT_EQ(cloud.live_sessions("browser-use"), 0);
  ::unsetenv("BROWSER_USE_GATEWAY_URL");
  ::unsetenv("TOOL_GATEWAY_USER_TOKEN");
}

// Another process (a new provider, as the cloud session ledger's sweep makes one from the
// config of now) stops a browser the way its record says it was made, not the way the current
// config would create one.
TEST(BrowserUseProvider, AnotherProcessStopsABrowserTheWayItWasMade) {
  FakeBrowserCloud cloud({.cdp_url = kNoBrowser});
  ::setenv("BROWSER_USE_GATEWAY_URL", cloud.url().c_str(), 1);
  ::setenv("TOOL_GATEWAY_USER_TOKEN", "gw-test-token", 1);
  BrowserUseSettings s;
  s.api_key = "bu-test-key";
  s.base_url = cloud.url() + "/api/v3";
  ::setenv("BROWSER_USE_USE_GATEWAY", "1", 1);
  auto gated = MakeBrowserUseProvider(s, kTimeout)->Acquire("t", {});
  ASSERT_TRUE(gated.has_value()) << gated.error().message();
  EXPECT_EQ(gated->route, "gateway");
  auto direct_first = MakeBrowserUseProvider(s, kTimeout);
  ::unsetenv("BROWSER_USE_USE_GATEWAY");
  auto direct = direct_first->Acquire("u", {});
  ASSERT_TRUE(direct.has_value()) << direct.error().message();
  EXPECT_EQ(direct->route, "direct");

  // Now the direct key is preferred: the gateway's browser still goes through the gateway.
  RemoteBrowser found{.provider = "browser-use",
                      .session_id = gated->session_id,
                      .cdp_url = "",
                      .cdp_headers = {},
                      .route = "gateway"};
  EXPECT_TRUE(MakeBrowserUseProvider(s, kTimeout)->Release(found).ok());
  EXPECT_EQ(cloud.requests().back().method, "PATCH");
  EXPECT_EQ(cloud.requests().back().headers.at("x-browser-use-api-key"), "gw-test-token");
  // Now the gateway is preferred: the directly made browser still goes with the key.
  ::setenv("BROWSER_USE_USE_GATEWAY", "1", 1);
  found.session_id = direct->session_id;
  found.route = "direct";
  EXPECT_TRUE(MakeBrowserUseProvider(s, kTimeout)->Release(found).ok());
  EXPECT_EQ(cloud.requests().back().headers.at("x-browser-use-api-key"), "bu-test-key");
  EXPECT_EQ(cloud.live_sessions("browser-use"), 0);
  // A directly made browser and no key any more: a clear error, nothing sent elsewhere.
  const size_t sent = cloud.requests().size();
  auto keyless = MakeBrowserUseProvider(BrowserUseSettings{}, kTimeout)->Release(found);
  EXPECT_EQ(keyless.code(), StatusCode::kFailedPrecondition) << keyless.message();
  EXPECT_EQ(cloud.requests().size(), sent);
  for (const char* v :
       {"BROWSER_USE_USE_GATEWAY", "BROWSER_USE_GATEWAY_URL", "TOOL_GATEWAY_USER_TOKEN"}) {
    ::unsetenv(v);
  }
}

TEST(BrowserUseProvider, DirectCreatesAreNotRetriedAfterTheServiceAnswered) {
  FakeBrowserCloud cloud({.cdp_url = kNoBrowser, .fail_first_creates = 1});
  BrowserUseSettings s;
  s.api_key = "bu-test-key";
  s.base_url = cloud.url() + "/api/v3";
  auto remote = MakeBrowserUseProvider(s, kTimeout)->Acquire("t", {});
  ASSERT_FALSE(remote.has_value());
  EXPECT_EQ(remote.error().code(), StatusCode::kUnavailable);
  EXPECT_EQ(cloud.requests().size(), 1u);
}

TEST(FirecrawlProvider, CreatesWithTtlAndDeletes) {
  FakeBrowserCloud cloud({.cdp_url = kNoBrowser});
  FirecrawlBrowserSettings s;
  s.api_key = "fc-test-key";
  s.base_url = cloud.url();
  s.ttl = 120;
  auto provider = MakeFirecrawlProvider(s, kTimeout);
  auto remote = provider->Acquire("t", {});
  ASSERT_TRUE(remote.has_value()) << remote.error().message();
  const auto create = cloud.requests().at(0);
  EXPECT_EQ(create.path, "/v2/browser");
  EXPECT_EQ(create.headers.at("authorization"), "Bearer fc-test-key");
  EXPECT_EQ(Body(create), nlohmann::json::parse(R"({"ttl":120})"));
  ASSERT_TRUE(provider->Release(*remote).ok());
  EXPECT_EQ(cloud.requests().back().method, "DELETE");
  EXPECT_EQ(cloud.requests().back().path, "/v2/browser/" + remote->session_id);
  EXPECT_EQ(cloud.live_sessions("firecrawl"), 0);
}

TEST(BrowserProviderSettings, ConfigThenEnvironmentChooseTheProvider) {
  auto config = ParseConfig(
      "browser:\n  provider: browserbase\n  browserbase:\n    project_id: from-config\n"
      "    api_key: cfg-key\n    proxies: false\n  firecrawl:\n    ttl: 90\n");
  ASSERT_TRUE(config.has_value()) << config.error().message();
  ::setenv("BROWSERBASE_PROJECT_ID", "from-env", 1);
  ::setenv("FIRECRAWL_BROWSER_TTL", "600", 1);
  auto s = BrowserProviderSettingsFrom(*config);
  ::unsetenv("BROWSERBASE_PROJECT_ID");
  ::unsetenv("FIRECRAWL_BROWSER_TTL");
  ASSERT_TRUE(s.has_value()) << s.error().message();
  EXPECT_EQ(s->provider, "browserbase");
  EXPECT_EQ(s->browserbase.project_id, "from-env");
  EXPECT_EQ(s->browserbase.api_key, "cfg-key");
  EXPECT_FALSE(s->browserbase.proxies);
  EXPECT_EQ(s->firecrawl.ttl, 600);
  EXPECT_EQ(ProviderUnavailableReason(*s), "");
  EXPECT_TRUE(MakeBrowserProvider(*s).has_value());

  s->browserbase.api_key.clear();
  EXPECT_EQ(ProviderUnavailableReason(*s), "BROWSERBASE_API_KEY is not set");
  EXPECT_EQ(MakeBrowserProvider(*s).error().code(), StatusCode::kFailedPrecondition);

  auto bad = ParseConfig("browser:\n  provider: netscape\n");
  ASSERT_TRUE(bad.has_value());
  EXPECT_EQ(BrowserProviderSettingsFrom(*bad).error().code(), StatusCode::kInvalidArgument);

  // "auto": Camofox when CAMOFOX_URL is set, else the local Chromium.
  auto empty = ParseConfig("browser: {}\n");
  ASSERT_TRUE(empty.has_value());
  EXPECT_EQ(BrowserProviderSettingsFrom(*empty)->provider, "local");
  ::setenv("CAMOFOX_URL", "http://127.0.0.1:9377/", 1);
  auto camofox = BrowserProviderSettingsFrom(*empty);
  ::unsetenv("CAMOFOX_URL");
  EXPECT_EQ(camofox->provider, "camofox");
  EXPECT_EQ(camofox->camofox.url, "http://127.0.0.1:9377");
  EXPECT_EQ(MakeBrowserProvider(*camofox).error().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace talaria::browser
