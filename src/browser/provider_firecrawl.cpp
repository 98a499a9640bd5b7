// Firecrawl's browser (hermes-wave2.md e.3): POST /v2/browser with a Bearer key and {ttl}
// creates one ({id, cdpUrl}); DELETE /v2/browser/{id} ends it.
#include <memory>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "browser/provider_rest.h"
#include "talaria/browser/providers.h"

namespace talaria::browser {
namespace {

constexpr std::string_view kFirecrawlWho = "firecrawl";

class FirecrawlProvider final : public BrowserProvider {
 public:
  FirecrawlProvider(FirecrawlBrowserSettings s, std::chrono::milliseconds timeout)
      : s_(std::move(s)), timeout_(timeout) {}

  std::string_view name() const override { return kFirecrawlWho; }

  Result<RemoteBrowser> Acquire(std::string_view /*task_id*/, std::stop_token cancel) override {
    if (s_.api_key.empty())
      return Err(FailedPreconditionError("firecrawl: FIRECRAWL_API_KEY is not set"));
    const Json body = {{"ttl", s_.ttl}};
    rest::Call call{.method = "POST",
                    .url = s_.base_url + "/v2/browser",
                    .headers = {{"Authorization", "Bearer " + s_.api_key}},
                    .body = &body,
                    .timeout = timeout_};
    const rest::Answer answer = TALARIA_TRY(rest::Exchange(kFirecrawlWho, call, std::move(cancel)));
    if (!answer.ok()) return Err(rest::StatusError(kFirecrawlWho, "creating a browser", answer));
    RemoteBrowser browser{.provider = std::string(kFirecrawlWho),
                          .session_id = rest::StringField(answer.json, {"id"}),
                          .cdp_url = rest::StringField(answer.json, {"cdpUrl"}),
                          .cdp_headers = {},
                          .route = ""};
    TALARIA_RETURN_IF_ERROR(rest::CheckId(kFirecrawlWho, browser.session_id));
    if (Status bad = rest::CheckCdpUrl(kFirecrawlWho, browser.cdp_url); !bad.ok()) {
      (void)Release(browser);
      return Err(bad);
    }
    return browser;
  }

  Status Release(const RemoteBrowser& browser) override {
    TALARIA_RETURN_IF_ERROR(rest::CheckId(kFirecrawlWho, browser.session_id));
    rest::Call call{.method = "DELETE",
                    .url = s_.base_url + "/v2/browser/" + browser.session_id,
                    .headers = {{"Authorization", "Bearer " + s_.api_key}},
                    .body = nullptr,
                    .timeout = timeout_};
    const rest::Answer answer = TALARIA_TRY(rest::Exchange(kFirecrawlWho, call, {}));
    if (answer.ok() || answer.status == 404) return Status::Ok();
    return rest::StatusError(kFirecrawlWho, "deleting browser " + browser.session_id, answer);
  }

 private:
  const FirecrawlBrowserSettings s_;
  const std::chrono::milliseconds timeout_;
};

}  // namespace

std::unique_ptr<BrowserProvider> MakeFirecrawlProvider(FirecrawlBrowserSettings settings,
                                                       std::chrono::milliseconds timeout) {
  return std::make_unique<FirecrawlProvider>(std::move(settings), timeout);
}

}  // namespace talaria::browser
