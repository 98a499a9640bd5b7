// The image_gen and auxiliary.vision config sections (media_settings.h).
#include "media/media_settings.h"

#include <cstdlib>

#include <nlohmann/json.hpp>

#include "talaria/base/paths.h"
#include "talaria/core/config_section.h"
#include "talaria/core/runtime.h"

namespace talaria::media {
namespace {

[[maybe_unused]] const bool kSectionsDeclared =
    (DeclareConfigSection("image_gen"), DeclareConfigSection("auxiliary"), true);

// A string of the raw `model:` section (the agent module owns its parsing; the vision default
// only borrows three of its keys).
std::string MainModelKey(const Config& config, const char* key) {
  if (!config.raw || !config.raw->is_object() || !config.raw->contains("model")) return "";
  const Json& model = (*config.raw)["model"];
  return model.is_object() ? JsonStringField(model, key) : "";
}

}  // namespace

std::string MediaEnv(const char* name) {
  const char* v = std::getenv(name);  // NOLINT(concurrency-mt-unsafe): read-only use
  return v == nullptr ? "" : v;
}

Result<ImageGenSettings> ImageGenSettingsFromConfig(const Config& config) {
  ImageGenSettings s;
  const ConfigSection c = TALARIA_TRY(ConfigSection::Of(config, "image_gen"));
  TALARIA_RETURN_IF_ERROR(c.ReadString("provider", s.provider));
  if (!s.provider.empty() && s.provider != "fal" && s.provider != "openai") {
    return Err(c.Bad("provider", "fal or openai"));
  }
  TALARIA_RETURN_IF_ERROR(c.ReadString("model", s.model));
  TALARIA_RETURN_IF_ERROR(c.ReadString("openai_model", s.openai_model));
  TALARIA_RETURN_IF_ERROR(c.ReadBool("use_gateway", s.use_gateway));
  TALARIA_RETURN_IF_ERROR(c.ReadInt("timeout", 5, 3600, s.timeout_seconds));
  if (std::string env = MediaEnv("FAL_IMAGE_MODEL"); !env.empty()) s.model = env;
  return s;
}

Result<ImageGenSettings> LoadImageGenSettings() {
  const std::shared_ptr<const Config> config = TALARIA_TRY(ToolCallConfig());
  return ImageGenSettingsFromConfig(*config);
}

Result<VisionSettings> VisionSettingsFromConfig(const Config& config) {
  VisionSettings s;
  const ConfigSection aux = TALARIA_TRY(ConfigSection::Of(config, "auxiliary"));
  const ConfigSection c = TALARIA_TRY(aux.Sub("vision"));
  TALARIA_RETURN_IF_ERROR(c.ReadString("model", s.model));
  TALARIA_RETURN_IF_ERROR(c.ReadString("base_url", s.base_url));
  TALARIA_RETURN_IF_ERROR(c.ReadString("api_key_env", s.api_key_env));
  TALARIA_RETURN_IF_ERROR(c.ReadInt("timeout", 5, 3600, s.timeout_seconds));
  TALARIA_RETURN_IF_ERROR(c.ReadInt("max_dimension", 64, 16384, s.max_dimension));
  TALARIA_RETURN_IF_ERROR(
      c.ReadInt("max_image_bytes", 16 << 10, int64_t{100} << 20, s.max_image_bytes));
  if (c.present() && config.raw) {
    const Json& v = (*config.raw)["auxiliary"]["vision"];
    if (v.contains("temperature")) {
      if (!v["temperature"].is_number() || v["temperature"].get<double>() < 0 ||
          v["temperature"].get<double>() > 2) {
        return Err(c.Bad("temperature", "a number from 0 to 2"));
      }
      s.temperature = v["temperature"].get<double>();
    }
  }
  s.own_model = !s.model.empty();
  if (s.model.empty()) s.model = MainModelKey(config, "name");
  if (s.model.empty()) s.model = MediaEnv("TALARIA_MODEL");
  if (s.base_url.empty()) s.base_url = MainModelKey(config, "base_url");
  if (s.base_url.empty()) s.base_url = MediaEnv("TALARIA_BASE_URL");
  if (s.base_url.empty()) s.base_url = "https://api.openai.com/v1";
  while (!s.base_url.empty() && s.base_url.back() == '/') s.base_url.pop_back();
  if (s.api_key_env.empty()) s.api_key_env = MainModelKey(config, "api_key_env");
  if (!s.api_key_env.empty()) {
    s.api_key = MediaEnv(s.api_key_env.c_str());
  } else {
    for (const char* name : {"TALARIA_API_KEY", "OPENAI_API_KEY"}) {
      s.api_key = MediaEnv(name);
      if (!s.api_key.empty()) {
        s.api_key_env = name;
        break;
      }
    }
  }
  return s;
}

Result<VisionSettings> LoadVisionSettings() {
  const std::shared_ptr<const Config> config = TALARIA_TRY(ToolCallConfig());
  return VisionSettingsFromConfig(*config);
}

std::string ImageCacheDir() { return TalariaHome() + "/cache/images"; }

}  // namespace talaria::media
