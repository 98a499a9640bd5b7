// The rl section of config.yaml (rl_settings.h).
#include "rl/rl_settings.h"

#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "talaria/base/paths.h"
#include "talaria/core/config_section.h"
#include "talaria/core/runtime.h"

namespace talaria::rl {
namespace {

[[maybe_unused]] const bool kSectionDeclared = (DeclareConfigSection("rl"), true);

// `~/x` as the user means it; other paths as they are.
std::string ExpandHome(std::string path) {
  if (path == "~" || path.rfind("~/", 0) == 0) return UserHome() + path.substr(1);
  return path;
}

Status ReadSeconds(const ConfigSection& c, std::string_view key, int64_t min,
                   std::chrono::seconds& out) {
  int64_t v = out.count();
  TALARIA_RETURN_IF_ERROR(c.ReadInt(key, min, int64_t{7} * 24 * 3600, v));
  out = std::chrono::seconds(v);
  return Status::Ok();
}

}  // namespace

std::string EnvValue(const char* name) {
  const char* v = std::getenv(name);  // NOLINT(concurrency-mt-unsafe): read-only use
  return v == nullptr ? "" : v;
}

Result<RlSettings> RlSettingsFromConfig(const Config& config) {
  RlSettings s;
  const ConfigSection c = TALARIA_TRY(ConfigSection::Of(config, "rl"));
  TALARIA_RETURN_IF_ERROR(c.ReadString("root", s.root));
  TALARIA_RETURN_IF_ERROR(c.ReadString("environments_dir", s.environments_dir));
  TALARIA_RETURN_IF_ERROR(c.ReadString("python", s.python));
  std::vector<std::string> api_command;  // ReadStrings appends: keep the default apart
  TALARIA_RETURN_IF_ERROR(c.ReadStrings("api_command", api_command));
  if (!api_command.empty()) s.api_command = std::move(api_command);
  TALARIA_RETURN_IF_ERROR(c.ReadString("api_url", s.api_url));
  TALARIA_RETURN_IF_ERROR(c.ReadString("inference_url", s.inference_url));
  TALARIA_RETURN_IF_ERROR(ReadSeconds(c, "startup_timeout", 1, s.startup_timeout));
  TALARIA_RETURN_IF_ERROR(ReadSeconds(c, "status_interval", 0, s.status_interval));
  TALARIA_RETURN_IF_ERROR(ReadSeconds(c, "stop_grace", 0, s.stop_grace));
  TALARIA_RETURN_IF_ERROR(c.ReadString("inference_test_url", s.inference_test_url));
  if (s.python.empty()) return Err(c.Bad("python", "a program name or path"));
  if (s.root.empty()) s.root = TalariaHome() + "/tinker-atropos";
  s.root = ExpandHome(s.root);
  s.environments_dir = s.environments_dir.empty() ? s.root + "/tinker_atropos/environments"
                                                  : ExpandHome(s.environments_dir);
  s.configs_dir = s.root + "/configs";
  s.logs_dir = TalariaHome() + "/logs/rl_training";
  if (std::string e = EnvValue("WANDB_ENTITY"); !e.empty()) s.wandb_entity = e;
  if (std::string b = EnvValue("WANDB_BASE_URL"); !b.empty()) s.wandb_base_url = b;
  while (!s.wandb_base_url.empty() && s.wandb_base_url.back() == '/') s.wandb_base_url.pop_back();
  return s;
}

Result<RlSettings> LoadRlSettings() {
  const std::shared_ptr<const Config> config = TALARIA_TRY(ToolCallConfig());
  return RlSettingsFromConfig(*config);
}

}  // namespace talaria::rl
