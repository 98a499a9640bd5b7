// The browser section of config.yaml (browser_settings.h).
#include "browser/browser_settings.h"

#include "talaria/core/config_section.h"
#include "talaria/core/runtime.h"

namespace talaria::browser {
namespace {

[[maybe_unused]] const bool kSectionDeclared = (DeclareConfigSection("browser"), true);

}  // namespace

Result<BrowserSettings> BrowserSettingsFromConfig(const Config& config) {
  BrowserSettings s;
  const ConfigSection c = TALARIA_TRY(ConfigSection::Of(config, "browser"));
  TALARIA_RETURN_IF_ERROR(c.ReadInt("inactivity_timeout", 10, 86'400, s.inactivity_timeout_s));
  TALARIA_RETURN_IF_ERROR(c.ReadInt("command_timeout", 1, 3'600, s.command_timeout_s));
  TALARIA_RETURN_IF_ERROR(c.ReadInt("snapshot_threshold", 1'000, 2'000'000, s.snapshot_threshold));
  TALARIA_RETURN_IF_ERROR(c.ReadStrings("allow_private", s.allow_private));
  TALARIA_RETURN_IF_ERROR(c.ReadString("executable", s.executable));
  TALARIA_RETURN_IF_ERROR(c.ReadString("provider", s.provider));
  if (s.provider.empty()) s.provider = "local";
  // The web tools' allow list holds for the browser too: one place says which private
  // services talaria may reach.
  const ConfigSection web = TALARIA_TRY(ConfigSection::Of(config, "web"));
  std::vector<std::string> web_allow;
  TALARIA_RETURN_IF_ERROR(web.ReadStrings("allow_private", web_allow));
  s.allow_private.insert(s.allow_private.end(), web_allow.begin(), web_allow.end());
  return s;
}

Result<BrowserSettings> LoadBrowserSettings() {
  const std::shared_ptr<const Config> config = TALARIA_TRY(ToolCallConfig());
  return BrowserSettingsFromConfig(*config);
}

}  // namespace talaria::browser
