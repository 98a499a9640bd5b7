// Which browser the browser tools drive, from config.yaml's `browser:` section and the
// environment (the original's variables, hermes-wave2.md e.3), and the cloud providers that hand
// out a remote Chromium's CDP URL:
//
//   browser:
//     provider: browserbase     # local (default), browserbase, browser-use, firecrawl, camofox;
//                               # "auto": camofox when CAMOFOX_URL is set, else local
//     browserbase: {api_key: ..., project_id: ..., base_url: ..., proxies: true,
//                   advanced_stealth: false, keep_alive: true, session_timeout: 600}
//     browser_use: {api_key: ..., base_url: ..., gateway_url: ..., gateway_token: ...,
//                   proxy_country: us}
//     firecrawl: {api_key: ..., base_url: ..., ttl: 300}
//     camofox: {url: http://localhost:9377, api_key: ...}
//
// Every key may instead come from the environment, which wins over the file when set:
// BROWSERBASE_API_KEY, BROWSERBASE_PROJECT_ID, BROWSERBASE_BASE_URL, BROWSERBASE_PROXIES,
// BROWSERBASE_ADVANCED_STEALTH, BROWSERBASE_KEEP_ALIVE, BROWSERBASE_SESSION_TIMEOUT;
// BROWSER_USE_API_KEY, BROWSER_USE_BASE_URL (the gateway's own variables, BROWSER_USE_GATEWAY_URL,
// TOOL_GATEWAY_USER_TOKEN and the token file, are net::ResolveToolGateway's);
// FIRECRAWL_API_KEY, FIRECRAWL_API_URL, FIRECRAWL_BROWSER_TTL; CAMOFOX_URL, CAMOFOX_API_KEY.
//
//   auto settings = talaria::browser::LoadBrowserProviderSettings();
//   auto provider = talaria::browser::MakeBrowserProvider(*settings);   // browserbase & co.
//   auto remote = (*provider)->Acquire(task_id, stop);
//   auto cdp = talaria::browser::ConnectWebSocket({.url = remote->cdp_url,
//                                                  .headers = remote->cdp_headers});
//   ...
//   (*provider)->Release(*remote);
//
// Thread-safety: settings are values; providers are thread-safe (browser_provider.h).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "talaria/base/status.h"
#include "talaria/browser/browser_provider.h"
#include "talaria/browser/cdp_transport.h"
#include "talaria/core/config.h"

namespace talaria::browser {

struct BrowserbaseSettings {
  std::string api_key, project_id;
  std::string base_url = "https://api.browserbase.com";
  bool proxies = true;
  bool advanced_stealth = false;
  bool keep_alive = true;
  int64_t session_timeout = 0;  // seconds; 0: the service's default (not sent)
};

struct BrowserUseSettings {
  std::string api_key;
  std::string base_url = "https://api.browser-use.com/api/v3";
  // The managed gateway: sessions go through it (5-minute timeout, proxy country,
  // X-Idempotency-Key kept per task across retries) when both of these are set in config, or
  // else when net::PickToolGateway("browser-use", ...) picks it (talaria/net/tool_gateway.h: no
  // api_key and a gateway token, or BROWSER_USE_USE_GATEWAY=1; its origin and fresh token).
  std::string gateway_url, gateway_token;
  std::string proxy_country = "us";
};

struct FirecrawlBrowserSettings {
  std::string api_key;
  std::string base_url = "https://api.firecrawl.dev";
  int64_t ttl = 300;  // seconds
};

struct CamofoxSettings {
  std::string url;  // e.g. http://localhost:9377; empty: not configured
  std::string api_key;
};

struct BrowserProviderSettings {
  // "local", "browserbase", "browser-use", "firecrawl" or "camofox" (after "auto" is decided).
  std::string provider = "local";
  BrowserbaseSettings browserbase;
  BrowserUseSettings browser_use;
  FirecrawlBrowserSettings firecrawl;
  CamofoxSettings camofox;
  // Each REST call to a provider (the original's 30 s).
  std::chrono::milliseconds request_timeout{30'000};
};

// The `browser` section of `config` with the environment applied. InvalidArgument naming the
// key for a malformed value or an unknown provider.
Result<BrowserProviderSettings> BrowserProviderSettingsFrom(const Config& config);
// The section of the config the process loaded (ToolCallConfig: config.yaml, or the file
// --config named, as it was at start; defaults when it has none).
Result<BrowserProviderSettings> LoadBrowserProviderSettings();

// Why `settings.provider` cannot be used (a key or project id missing), or "" when it can: what
// the browser tools' check_fn reports.
std::string ProviderUnavailableReason(const BrowserProviderSettings& settings);

// The cloud provider `settings.provider` names. InvalidArgument for "local" and "camofox"
// (not cloud providers: no CDP URL to hand out); FailedPrecondition naming the missing key.
Result<std::unique_ptr<BrowserProvider>> MakeBrowserProvider(
    const BrowserProviderSettings& settings);

// One provider each, whatever settings.provider says (tests, callers that choose).
std::unique_ptr<BrowserProvider> MakeBrowserbaseProvider(BrowserbaseSettings settings,
                                                         std::chrono::milliseconds timeout);
std::unique_ptr<BrowserProvider> MakeBrowserUseProvider(BrowserUseSettings settings,
                                                        std::chrono::milliseconds timeout);
std::unique_ptr<BrowserProvider> MakeFirecrawlProvider(FirecrawlBrowserSettings settings,
                                                       std::chrono::milliseconds timeout);

// A provider's browser, connected: the session and its CDP transport.
struct RemoteConnection {
  RemoteBrowser browser;
  std::unique_ptr<CdpTransport> transport;
};

// Acquire, then ConnectWebSocket to the CDP URL with the provider's headers. A session whose
// browser cannot be reached is released before the error returns (never left running, billed).
// Errors: Acquire's, or ConnectWebSocket's with the provider's name in front.
Result<RemoteConnection> ConnectRemoteBrowser(
    BrowserProvider& provider, std::string_view task_id, std::stop_token cancel,
    std::chrono::milliseconds connect_timeout = std::chrono::milliseconds(10'000));

}  // namespace talaria::browser
