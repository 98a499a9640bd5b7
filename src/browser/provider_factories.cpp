// The cloud providers and Camofox as `browser.provider` choices of the browser tools: a
// Browserbase, Browser Use or Firecrawl session is created over REST, reached over a WebSocket
// and driven by the same CDP page driver (and network guard) as local Chromium, and released
// when the task's browser closes; Camofox is its own PageDriver.
#include <memory>

#include "browser/cloud_session_ledger.h"
#include "talaria/browser/browser_sessions.h"
#include "talaria/browser/camofox_driver.h"
#include "talaria/browser/cdp_page_driver.h"
#include "talaria/browser/providers.h"

namespace talaria::browser {
namespace {

Result<std::unique_ptr<PageDriver>> OpenCloudBrowser(const DriverRequest& request) {
  const BrowserProviderSettings settings = TALARIA_TRY(LoadBrowserProviderSettings());
  // Recorded in $TALARIA_HOME/run so that a killed talaria's session is released by the next.
  std::shared_ptr<BrowserProvider> provider =
      RecordingCloudSessions(TALARIA_TRY(MakeBrowserProvider(settings)));
  RemoteConnection connection =
      TALARIA_TRY(ConnectRemoteBrowser(*provider, request.task_id, request.limits.cancel));
  const RemoteBrowser remote = connection.browser;
  CdpDriverOptions options;
  options.guard = request.guard;
  options.backend = std::string(provider->name());
  // The session is the provider's and billed: released whenever the driver goes.
  options.on_close = [provider, remote] { (void)provider->Release(remote); };
  auto driver =
      OpenCdpPageDriver(std::move(connection.transport), std::move(options), request.limits);
  if (!driver) (void)provider->Release(remote);
  return driver;
}

Result<std::unique_ptr<PageDriver>> OpenCamofox(const DriverRequest& request) {
  const BrowserProviderSettings settings = TALARIA_TRY(LoadBrowserProviderSettings());
  CamofoxOptions options;
  options.url = settings.camofox.url;
  options.api_key = settings.camofox.api_key;
  options.session_key = request.task_id;
  options.guard = request.guard;
  options.request_timeout = settings.request_timeout;
  return MakeCamofoxDriver(std::move(options));
}

}  // namespace

void ReleaseLeftoverCloudBrowsers() {
  (void)ReleaseLeftoverCloudSessions([](const RemoteBrowser& browser) -> Status {
    auto settings = LoadBrowserProviderSettings();
    if (!settings) return settings.error();
    settings->provider = browser.provider;
    auto provider = MakeBrowserProvider(*settings);
    if (!provider) return provider.error();
    return (*provider)->Release(browser);
  });
}

namespace {

[[maybe_unused]] const bool kRegistered = [] {
  for (const char* cloud : {"browserbase", "browser-use", "firecrawl"}) {
    RegisterDriverFactory(cloud, &OpenCloudBrowser);
  }
  RegisterDriverFactory("camofox", &OpenCamofox);
  return true;
}();

}  // namespace
}  // namespace talaria::browser
