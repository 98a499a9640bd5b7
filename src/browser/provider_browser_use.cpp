// Browser Use (hermes-wave2.md e.3): POST {base}/browsers creates a browser ({id, cdpUrl or
// connectUrl}); PATCH {base}/browsers/{id} {action: "stop"} stops it. Direct, with
// X-Browser-Use-API-Key and an empty body; through the managed gateway (net::PickToolGateway:
// its origin, and its fresh token in the header the vendor protocol carries a key in), with
// {timeout: 5 (minutes), proxyCountryCode} and an X-Idempotency-Key. The gateway is asked on
// every create and stop, so a token refreshed in between is the one sent.
//
// Why the key is kept per task and not per request: a create whose answer was lost (timeout,
// a 5xx from the gateway after it forwarded) may still have made a browser. Sending the same
// key again, from this call's retries or from the next Acquire of the same task, lets the
// gateway hand back that browser instead of billing a second one. The key is dropped when the
// task's browser is released.
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "browser/provider_rest.h"
#include "talaria/base/random.h"
#include "talaria/browser/providers.h"
#include "talaria/net/http_client.h"
#include "talaria/net/tool_gateway.h"

namespace talaria::browser {
namespace {

constexpr std::string_view kBrowserUseWho = "browser-use";
constexpr int kGatewayAttempts = 3;

bool Retryable(const Status& s) {
  return s.code() == StatusCode::kDeadlineExceeded || net::IsConnectFailure(s);
}

bool RetryableStatus(int status) { return status == 429 || status >= 500; }

// Sleeps `d` unless `cancel` fires first; false when cancelled.
bool Pause(std::chrono::milliseconds d, const std::stop_token& cancel) {
  std::mutex mu;
  std::condition_variable_any cv;
  std::unique_lock lock(mu);
  return !cv.wait_for(lock, cancel, d, [] { return false; }) && !cancel.stop_requested();
}

class BrowserUseProvider final : public BrowserProvider {
 public:
  BrowserUseProvider(BrowserUseSettings s, std::chrono::milliseconds timeout)
      : s_(std::move(s)), timeout_(timeout) {}

  std::string_view name() const override { return kBrowserUseWho; }

  Result<RemoteBrowser> Acquire(std::string_view task_id, std::stop_token cancel) override {
    const Route route = TALARIA_TRY(PickRoute(cancel));
    const bool gateway = route.gateway;
    Json body = Json::object();
    net::HeaderList headers;
    headers.push_back(route.auth);
    if (gateway) {
      body["timeout"] = 5;
      if (!s_.proxy_country.empty()) body["proxyCountryCode"] = s_.proxy_country;
      headers.emplace_back("X-Idempotency-Key", KeyFor(task_id));
    }
    rest::Call call{.method = "POST",
                    .url = route.base + "/browsers",
                    .headers = std::move(headers),
                    .body = &body,
                    .timeout = timeout_};
    // Direct creates are retried only when nothing reached the service: without a key a
    // retry after a lost answer could make a second browser.
    const int attempts = gateway ? kGatewayAttempts : 2;
    Status last = UnavailableError("browser-use: no attempt made");
    for (int attempt = 1; attempt <= attempts; ++attempt) {
      if (attempt > 1 && !Pause(std::chrono::milliseconds(100 * (attempt - 1)), cancel)) {
        return Err(CancelledError("browser-use: cancelled while creating a browser"));
      }
      auto answer = rest::Exchange(kBrowserUseWho, call, cancel);
      if (!answer) {
        last = answer.error();
        const bool again = gateway ? Retryable(last) : net::IsConnectFailure(last);
        if (again) continue;
        return Err(last);
      }
      if (!answer->ok()) {
        last = rest::StatusError(kBrowserUseWho, "creating a browser", *answer);
        if (gateway && RetryableStatus(answer->status)) continue;
        return Err(last);
      }
      return Accept(*answer, task_id, gateway);
    }
    return Err(last);
  }

  Status Release(const RemoteBrowser& browser) override {
    TALARIA_RETURN_IF_ERROR(rest::CheckId(kBrowserUseWho, browser.session_id));
    bool via_gateway = browser.route == "gateway";
    {
      std::lock_guard lock(mu_);
      via_gateway = via_gateway || via_gateway_.contains(browser.session_id);
    }
    // Stopped the way it was made, also by another process that found it in the cloud session
    // ledger: a gateway's browser through the gateway even when a direct key turned up since, a
    // directly made one with the key even when the gateway is preferred now. Only a browser
    // whose way is unknown goes the way a create would.
    Route route;
    if (via_gateway) {
      route = TALARIA_TRY(GatewayRoute({}));
    } else if (browser.route == "direct") {
      route = TALARIA_TRY(DirectRoute(browser.session_id));
    } else {
      route = TALARIA_TRY(PickRoute({}));
    }
    net::HeaderList headers;
    headers.push_back(route.auth);
    const Json body = {{"action", "stop"}};
    rest::Call call{.method = "PATCH",
                    .url = route.base + "/browsers/" + browser.session_id,
                    .headers = std::move(headers),
                    .body = &body,
                    .timeout = timeout_};
    const rest::Answer answer = TALARIA_TRY(rest::Exchange(kBrowserUseWho, call, {}));
    if (!answer.ok() && answer.status != 404) {
      return rest::StatusError(kBrowserUseWho, "stopping browser " + browser.session_id, answer);
    }
    std::lock_guard lock(mu_);
    if (auto it = task_of_.find(browser.session_id); it != task_of_.end()) {
      keys_.erase(it->second);
      task_of_.erase(it);
    }
    via_gateway_.erase(browser.session_id);
    return Status::Ok();
  }

 private:
  // Where a request goes and the header that authenticates it.
  struct Route {
    bool gateway = false;
    std::string base;  // ends in /api/v3
    std::pair<std::string, std::string> auth;
  };

  // A gateway set in config wins; else the net module's choice (a direct key first, unless
  // BROWSER_USE_USE_GATEWAY=1); else the direct key.
  Result<Route> PickRoute(const std::stop_token& cancel) const {
    if (ConfiguredGateway()) return GatewayRoute(cancel);
    auto picked = net::PickToolGateway(kBrowserUseWho, !s_.api_key.empty(),
                                       net::GatewayPreference::kDirectFirst, cancel);
    if (!picked) {
      return Err(
          FailedPreconditionError("browser-use: BROWSER_USE_API_KEY is not set, and the "
                                  "managed gateway is not usable: " +
                                  picked.error().message()));
    }
    if (*picked)
      return Route{
          .gateway = true, .base = (*picked)->origin + "/api/v3", .auth = (*picked)->auth_header};
    return Route{
        .gateway = false, .base = s_.base_url, .auth = {"X-Browser-Use-API-Key", s_.api_key}};
  }

  Result<Route> DirectRoute(const std::string& session) const {
    if (s_.api_key.empty()) {
      return Err(FailedPreconditionError("browser-use: browser " + session +
                                         " was made with BROWSER_USE_API_KEY, which is not set"));
    }
    return Route{
        .gateway = false, .base = s_.base_url, .auth = {"X-Browser-Use-API-Key", s_.api_key}};
  }

  Result<Route> GatewayRoute(const std::stop_token& cancel) const {
    if (ConfiguredGateway()) {
      return Route{.gateway = true,
                   .base = s_.gateway_url + "/api/v3",
                   .auth = {"X-Browser-Use-API-Key", s_.gateway_token}};
    }
    auto gw = net::ResolveToolGateway(kBrowserUseWho, cancel);
    if (!gw) return Err(gw.error().WithContext("browser-use gateway"));
    return Route{.gateway = true, .base = gw->origin + "/api/v3", .auth = gw->auth_header};
  }

  bool ConfiguredGateway() const { return !s_.gateway_url.empty() && !s_.gateway_token.empty(); }

  std::string KeyFor(std::string_view task_id) {
    std::lock_guard lock(mu_);
    auto [it, fresh] = keys_.try_emplace(std::string(task_id));
    if (fresh) it->second = "talaria-" + RandomHex(16);
    return it->second;
  }

  Result<RemoteBrowser> Accept(const rest::Answer& answer, std::string_view task_id, bool gateway) {
    RemoteBrowser browser{.provider = std::string(kBrowserUseWho),
                          .session_id = rest::StringField(answer.json, {"id"}),
                          .cdp_url = rest::StringField(answer.json, {"cdpUrl", "connectUrl"}),
                          .cdp_headers = {},
                          .route = gateway ? "gateway" : "direct"};
    TALARIA_RETURN_IF_ERROR(rest::CheckId(kBrowserUseWho, browser.session_id));
    {
      std::lock_guard lock(mu_);
      if (gateway) via_gateway_.insert(browser.session_id);
    }
    if (Status bad = rest::CheckCdpUrl(kBrowserUseWho, browser.cdp_url); !bad.ok()) {
      (void)Release(browser);
      return Err(bad);
    }
    std::lock_guard lock(mu_);
    task_of_[browser.session_id] = std::string(task_id);
    return browser;
  }

  const BrowserUseSettings s_;
  const std::chrono::milliseconds timeout_;
  std::mutex mu_;
  std::map<std::string, std::string, std::less<>> keys_;  // task -> key. Guarded by mu_.
  std::map<std::string, std::string> task_of_;            // session -> task. Guarded by mu_.
  std::set<std::string> via_gateway_;  // sessions made through the gateway. Guarded by mu_.
};

}  // namespace

std::unique_ptr<BrowserProvider> MakeBrowserUseProvider(BrowserUseSettings settings,
                                                        std::chrono::milliseconds timeout) {
  return std::make_unique<BrowserUseProvider>(std::move(settings), timeout);
}

}  // namespace talaria::browser
