// Browserbase (hermes-wave2.md e.3): POST /v1/sessions with X-BB-API-Key creates a session
// ({id, connectUrl}); POST /v1/sessions/{id} with status REQUEST_RELEASE releases it. A plan
// that does not include keepAlive or proxies answers 402: the create is tried again without
// keepAlive, then without proxies too, as the original does, so a free plan still gets a
// browser.
#include <memory>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "browser/provider_rest.h"
#include "talaria/browser/providers.h"

namespace talaria::browser {
namespace {

constexpr std::string_view kBrowserbaseWho = "browserbase";

class BrowserbaseProvider final : public BrowserProvider {
 public:
  BrowserbaseProvider(BrowserbaseSettings s, std::chrono::milliseconds timeout)
      : s_(std::move(s)), timeout_(timeout) {}

  std::string_view name() const override { return kBrowserbaseWho; }

  Result<RemoteBrowser> Acquire(std::string_view /*task_id*/, std::stop_token cancel) override {
    if (s_.api_key.empty() || s_.project_id.empty()) {
      return Err(FailedPreconditionError(
          "browserbase: BROWSERBASE_API_KEY and BROWSERBASE_PROJECT_ID must be set"));
    }
    bool keep_alive = s_.keep_alive;
    bool proxies = s_.proxies;
    while (true) {
      Json body = Json::object();
      body["projectId"] = s_.project_id;
      if (keep_alive) body["keepAlive"] = true;
      if (s_.session_timeout > 0) body["timeout"] = s_.session_timeout;
      if (proxies) body["proxies"] = true;
      if (s_.advanced_stealth) body["browserSettings"] = Json{{"advancedStealth", true}};
      rest::Call call{.method = "POST",
                      .url = s_.base_url + "/v1/sessions",
                      .headers = {{"X-BB-API-Key", s_.api_key}},
                      .body = &body,
                      .timeout = timeout_};
      const rest::Answer answer = TALARIA_TRY(rest::Exchange(kBrowserbaseWho, call, cancel));
      // 402: the plan lacks a feature asked for; drop the costlier ones, one at a time.
      if (answer.status == 402 && keep_alive) {
        keep_alive = false;
        continue;
      }
      if (answer.status == 402 && proxies) {
        proxies = false;
        continue;
      }
      if (!answer.ok())
        return Err(rest::StatusError(kBrowserbaseWho, "creating a session", answer));
      RemoteBrowser browser{.provider = std::string(kBrowserbaseWho),
                            .session_id = rest::StringField(answer.json, {"id"}),
                            .cdp_url = rest::StringField(answer.json, {"connectUrl"}),
                            .cdp_headers = {},
                            .route = ""};
      TALARIA_RETURN_IF_ERROR(rest::CheckId(kBrowserbaseWho, browser.session_id));
      if (Status bad = rest::CheckCdpUrl(kBrowserbaseWho, browser.cdp_url); !bad.ok()) {
        (void)Release(browser);  // a session without a usable URL is released, not leaked
        return Err(bad);
      }
      return browser;
    }
  }

  Status Release(const RemoteBrowser& browser) override {
    TALARIA_RETURN_IF_ERROR(rest::CheckId(kBrowserbaseWho, browser.session_id));
    const Json body = {{"projectId", s_.project_id}, {"status", "REQUEST_RELEASE"}};
    rest::Call call{.method = "POST",
                    .url = s_.base_url + "/v1/sessions/" + browser.session_id,
                    .headers = {{"X-BB-API-Key", s_.api_key}},
                    .body = &body,
                    .timeout = timeout_};
    const rest::Answer answer = TALARIA_TRY(rest::Exchange(kBrowserbaseWho, call, {}));
    if (answer.ok() || answer.status == 404) return Status::Ok();  // gone already is released
    return rest::StatusError(kBrowserbaseWho, "releasing session " + browser.session_id, answer);
  }

 private:
  const BrowserbaseSettings s_;
  const std::chrono::milliseconds timeout_;
};

}  // namespace

std::unique_ptr<BrowserProvider> MakeBrowserbaseProvider(BrowserbaseSettings settings,
                                                         std::chrono::milliseconds timeout) {
  return std::make_unique<BrowserbaseProvider>(std::move(settings), timeout);
}

}  // namespace talaria::browser
