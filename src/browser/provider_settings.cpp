// The `browser:` keys the providers read, and the environment over them (providers.h).
#include <charconv>
#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>

#include "talaria/base/ascii.h"
#include "talaria/browser/providers.h"
#include "talaria/core/config_section.h"
#include "talaria/core/runtime.h"
#include "talaria/net/tool_gateway.h"

namespace talaria::browser {
namespace {

[[maybe_unused]] const bool kProviderSectionDeclared = (DeclareConfigSection("browser"), true);

std::string EnvOr(const char* name, std::string fallback) {
  const char* v = std::getenv(name);  // NOLINT(concurrency-mt-unsafe): read-only use
  return v == nullptr || *v == '\0' ? std::move(fallback) : std::string(v);
}

Status EnvBool(const char* name, bool& out) {
  const std::string v = EnvOr(name, "");
  if (v.empty()) return Status::Ok();
  if (EqualsIgnoringAsciiCase(v, "true") || v == "1" || EqualsIgnoringAsciiCase(v, "yes")) {
    out = true;
  } else if (EqualsIgnoringAsciiCase(v, "false") || v == "0" || EqualsIgnoringAsciiCase(v, "no")) {
    out = false;
  } else {
    return InvalidArgumentError(std::string("$") + name + " must be true or false");
  }
  return Status::Ok();
}

Status EnvInt(const char* name, int64_t min, int64_t max, int64_t& out) {
  const std::string v = EnvOr(name, "");
  if (v.empty()) return Status::Ok();
  int64_t n = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (ec != std::errc() || end != v.data() + v.size() || n < min || n > max) {
    return InvalidArgumentError(std::string("$") + name + " must be an integer from " +
                                std::to_string(min) + " to " + std::to_string(max));
  }
  out = n;
  return Status::Ok();
}

std::string TrimSlashes(std::string url) {
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url;
}

Status ReadBrowserbase(const ConfigSection& browser, BrowserbaseSettings& s) {
  const ConfigSection c = TALARIA_TRY(browser.Sub("browserbase"));
  TALARIA_RETURN_IF_ERROR(c.ReadString("api_key", s.api_key));
  TALARIA_RETURN_IF_ERROR(c.ReadString("project_id", s.project_id));
  TALARIA_RETURN_IF_ERROR(c.ReadString("base_url", s.base_url));
  TALARIA_RETURN_IF_ERROR(c.ReadBool("proxies", s.proxies));
  TALARIA_RETURN_IF_ERROR(c.ReadBool("advanced_stealth", s.advanced_stealth));
  TALARIA_RETURN_IF_ERROR(c.ReadBool("keep_alive", s.keep_alive));
  TALARIA_RETURN_IF_ERROR(c.ReadInt("session_timeout", 0, 86'400, s.session_timeout));
  s.api_key = EnvOr("BROWSERBASE_API_KEY", s.api_key);
  s.project_id = EnvOr("BROWSERBASE_PROJECT_ID", s.project_id);
  s.base_url = TrimSlashes(EnvOr("BROWSERBASE_BASE_URL", s.base_url));
  TALARIA_RETURN_IF_ERROR(EnvBool("BROWSERBASE_PROXIES", s.proxies));
  TALARIA_RETURN_IF_ERROR(EnvBool("BROWSERBASE_ADVANCED_STEALTH", s.advanced_stealth));
  TALARIA_RETURN_IF_ERROR(EnvBool("BROWSERBASE_KEEP_ALIVE", s.keep_alive));
  return EnvInt("BROWSERBASE_SESSION_TIMEOUT", 0, 86'400, s.session_timeout);
}

Status ReadBrowserUse(const ConfigSection& browser, BrowserUseSettings& s) {
  const ConfigSection c = TALARIA_TRY(browser.Sub("browser_use"));
  TALARIA_RETURN_IF_ERROR(c.ReadString("api_key", s.api_key));
  TALARIA_RETURN_IF_ERROR(c.ReadString("base_url", s.base_url));
  TALARIA_RETURN_IF_ERROR(c.ReadString("gateway_url", s.gateway_url));
  TALARIA_RETURN_IF_ERROR(c.ReadString("gateway_token", s.gateway_token));
  TALARIA_RETURN_IF_ERROR(c.ReadString("proxy_country", s.proxy_country));
  s.api_key = EnvOr("BROWSER_USE_API_KEY", s.api_key);
  s.base_url = TrimSlashes(EnvOr("BROWSER_USE_BASE_URL", s.base_url));
  s.gateway_url = TrimSlashes(s.gateway_url);
  return Status::Ok();
}

Status ReadFirecrawl(const ConfigSection& browser, FirecrawlBrowserSettings& s) {
  const ConfigSection c = TALARIA_TRY(browser.Sub("firecrawl"));
  TALARIA_RETURN_IF_ERROR(c.ReadString("api_key", s.api_key));
  TALARIA_RETURN_IF_ERROR(c.ReadString("base_url", s.base_url));
  TALARIA_RETURN_IF_ERROR(c.ReadInt("ttl", 30, 86'400, s.ttl));
  s.api_key = EnvOr("FIRECRAWL_API_KEY", s.api_key);
  s.base_url = TrimSlashes(EnvOr("FIRECRAWL_API_URL", s.base_url));
  return EnvInt("FIRECRAWL_BROWSER_TTL", 30, 86'400, s.ttl);
}

Status ReadCamofox(const ConfigSection& browser, CamofoxSettings& s) {
  const ConfigSection c = TALARIA_TRY(browser.Sub("camofox"));
  TALARIA_RETURN_IF_ERROR(c.ReadString("url", s.url));
  TALARIA_RETURN_IF_ERROR(c.ReadString("api_key", s.api_key));
  s.url = TrimSlashes(EnvOr("CAMOFOX_URL", s.url));
  s.api_key = EnvOr("CAMOFOX_API_KEY", s.api_key);
  return Status::Ok();
}

}  // namespace

Result<BrowserProviderSettings> BrowserProviderSettingsFrom(const Config& config) {
  BrowserProviderSettings s;
  const ConfigSection c = TALARIA_TRY(ConfigSection::Of(config, "browser"));
  std::string provider = "auto";
  TALARIA_RETURN_IF_ERROR(c.ReadString("provider", provider));
  TALARIA_RETURN_IF_ERROR(ReadBrowserbase(c, s.browserbase));
  TALARIA_RETURN_IF_ERROR(ReadBrowserUse(c, s.browser_use));
  TALARIA_RETURN_IF_ERROR(ReadFirecrawl(c, s.firecrawl));
  TALARIA_RETURN_IF_ERROR(ReadCamofox(c, s.camofox));
  // The original: a configured Camofox replaces the local browser.
  if (provider.empty() || provider == "auto")
    provider = s.camofox.url.empty() ? "local" : "camofox";
  if (provider == "browser_use") provider = "browser-use";
  if (provider != "local" && provider != "browserbase" && provider != "browser-use" &&
      provider != "firecrawl" && provider != "camofox") {
    return Err(
        c.Bad("provider", "one of auto, local, browserbase, browser-use, firecrawl, camofox"));
  }
  s.provider = provider;
  return s;
}

Result<BrowserProviderSettings> LoadBrowserProviderSettings() {
  const std::shared_ptr<const Config> config = TALARIA_TRY(ToolCallConfig());
  return BrowserProviderSettingsFrom(*config);
}

std::string ProviderUnavailableReason(const BrowserProviderSettings& s) {
  if (s.provider == "browserbase") {
    if (s.browserbase.api_key.empty()) return "BROWSERBASE_API_KEY is not set";
    if (s.browserbase.project_id.empty()) return "BROWSERBASE_PROJECT_ID is not set";
  } else if (s.provider == "browser-use") {
    const bool gateway =
        (!s.browser_use.gateway_url.empty() && !s.browser_use.gateway_token.empty()) ||
        net::ToolGatewayConfigured("browser-use");
    if (!gateway && s.browser_use.api_key.empty()) {
      return "BROWSER_USE_API_KEY is not set (nor a Browser Use gateway)";
    }
  } else if (s.provider == "firecrawl") {
    if (s.firecrawl.api_key.empty()) return "FIRECRAWL_API_KEY is not set";
  } else if (s.provider == "camofox") {
    if (s.camofox.url.empty()) return "CAMOFOX_URL is not set";
  }
  return "";
}

Result<std::unique_ptr<BrowserProvider>> MakeBrowserProvider(const BrowserProviderSettings& s) {
  if (s.provider == "local" || s.provider == "camofox") {
    return Err(
        InvalidArgumentError("browser provider '" + s.provider + "' is not a cloud provider"));
  }
  if (std::string why = ProviderUnavailableReason(s); !why.empty()) {
    return Err(FailedPreconditionError("browser provider " + s.provider + ": " + why));
  }
  if (s.provider == "browserbase") return MakeBrowserbaseProvider(s.browserbase, s.request_timeout);
  if (s.provider == "browser-use") return MakeBrowserUseProvider(s.browser_use, s.request_timeout);
  if (s.provider == "firecrawl") return MakeFirecrawlProvider(s.firecrawl, s.request_timeout);
  return Err(InvalidArgumentError("unknown browser provider '" + s.provider + "'"));
}

}  // namespace talaria::browser
