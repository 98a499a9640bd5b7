// The `plugins:` section of config.yaml and the discovery options it makes.
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "talaria/base/paths.h"
#include "talaria/plugins/plugin_loader.h"

namespace talaria::plugins {
namespace {

Result<std::vector<std::string>> ReadStringList(const Json& section, const char* key) {
  std::vector<std::string> out;
  auto it = section.find(key);
  if (it == section.end() || it->is_null()) return out;
  if (!it->is_array())
    return Err(InvalidArgumentError(std::string("plugins.") + key + " must be a list of strings"));
  for (const auto& item : *it) {
    if (!item.is_string())
      return Err(
          InvalidArgumentError(std::string("plugins.") + key + " must be a list of strings"));
    out.push_back(item.get<std::string>());
  }
  return out;
}

}  // namespace

Result<PluginConfig> ReadPluginConfig(const Config& config) {
  PluginConfig out;
  if (!config.raw) return out;
  auto it = config.raw->find("plugins");
  if (it == config.raw->end() || it->is_null()) return out;
  if (!it->is_object()) return Err(InvalidArgumentError("plugins must be a mapping"));
  out.dirs = TALARIA_TRY(ReadStringList(*it, "dirs"));
  out.allow_shadowing = TALARIA_TRY(ReadStringList(*it, "allow_shadowing"));
  out.disabled = TALARIA_TRY(ReadStringList(*it, "disabled"));
  if (auto c = it->find("cache"); c != it->end() && !c->is_null()) {
    if (!c->is_boolean()) return Err(InvalidArgumentError("plugins.cache must be true or false"));
    out.cache = c->get<bool>();
  }
  if (auto t = it->find("trial"); t != it->end() && !t->is_null()) {
    if (!t->is_boolean()) return Err(InvalidArgumentError("plugins.trial must be true or false"));
    out.trial = t->get<bool>();
  }
  if (auto t = it->find("trial_timeout_s"); t != it->end() && !t->is_null()) {
    if (!t->is_number() || t->get<double>() <= 0 || t->get<double>() > 3600) {
      return Err(
          InvalidArgumentError("plugins.trial_timeout_s must be a number of seconds in (0, 3600]"));
    }
    out.trial_timeout = std::chrono::milliseconds(static_cast<int64_t>(t->get<double>() * 1000));
  }
  return out;
}

std::string DefaultPluginDir() { return TalariaHome() + "/plugins"; }
std::string DefaultScanCachePath() { return TalariaHome() + "/plugin-scan-cache.json"; }

DiscoveryOptions OptionsFromConfig(const PluginConfig& config,
                                   const std::vector<std::string>& extra_dirs) {
  DiscoveryOptions options;
  options.dirs.push_back(DefaultPluginDir());
  options.dirs.insert(options.dirs.end(), config.dirs.begin(), config.dirs.end());
  options.dirs.insert(options.dirs.end(), extra_dirs.begin(), extra_dirs.end());
  if (config.cache) options.cache_path = DefaultScanCachePath();
  options.allow_shadowing = config.allow_shadowing;
  options.disabled = config.disabled;
  options.trial = config.trial;
  options.trial_timeout = config.trial_timeout;
  if (const char* home = std::getenv("HOME"); home != nullptr && home[0] == '/')
    options.guard.home = home;
  options.guard.talaria_home = TalariaHome();
  return options;
}

}  // namespace talaria::plugins
