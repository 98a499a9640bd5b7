// The web section of config.yaml (web_settings.h).
#include "web/web_settings.h"

#include "talaria/core/config_section.h"
#include "talaria/core/runtime.h"

namespace talaria::web {
namespace {

[[maybe_unused]] const bool kSectionDeclared = (DeclareConfigSection("web"), true);

}  // namespace

Result<WebSettings> WebSettingsFromConfig(const Config& config) {
  WebSettings s;
  const ConfigSection c = TALARIA_TRY(ConfigSection::Of(config, "web"));
  TALARIA_RETURN_IF_ERROR(c.ReadString("backend", s.backend));
  TALARIA_RETURN_IF_ERROR(c.ReadString("search_backend", s.search_backend));
  TALARIA_RETURN_IF_ERROR(c.ReadString("extract_backend", s.extract_backend));
  TALARIA_RETURN_IF_ERROR(c.ReadInt("extract_char_limit", 2'000, 500'000, s.extract_char_limit));
  TALARIA_RETURN_IF_ERROR(c.ReadStrings("allow_private", s.allow_private));
  TALARIA_RETURN_IF_ERROR(c.ReadString("ca_file", s.ca_file));
  TALARIA_RETURN_IF_ERROR(c.ReadBool("use_gateway", s.use_gateway));
  return s;
}

Result<WebSettings> LoadWebSettings() {
  const std::shared_ptr<const Config> config = TALARIA_TRY(ToolCallConfig());
  return WebSettingsFromConfig(*config);
}

}  // namespace talaria::web
