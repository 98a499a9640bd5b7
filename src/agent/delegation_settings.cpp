// delegate_task's config: the `delegation:` section of config.yaml (delegation.h).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "agent/delegation.h"

namespace talaria::agent {
namespace {

[[maybe_unused]] const bool kDelegationSectionDeclared = (DeclareConfigSection("delegation"), true);

Status BadDelegationSetting(std::string_view key, std::string_view why) {
  return InvalidArgumentError("config.yaml: delegation." + std::string(key) + " " +
                              std::string(why));
}

Result<int> ReadCount(const Json& value, std::string_view key, int low, int high) {
  if (!value.is_number_integer() || value.get<int64_t>() < low || value.get<int64_t>() > high) {
    return Err(BadDelegationSetting(
        key, "must be a whole number from " + std::to_string(low) + " to " + std::to_string(high)));
  }
  return static_cast<int>(value.get<int64_t>());
}

}  // namespace

Result<DelegationSettings> DelegationSettingsFromConfig(const Config& config) {
  DelegationSettings s;
  if (!config.raw || !config.raw->is_object()) return s;
  auto section = config.raw->find("delegation");
  if (section == config.raw->end() || section->is_null()) return s;
  if (!section->is_object()) {
    return Err(InvalidArgumentError("config.yaml: delegation must be a mapping"));
  }
  for (const auto& [key, value] : section->items()) {
    if (key == "max_concurrent_children") {
      s.max_concurrent_children = TALARIA_TRY(ReadCount(value, key, 1, 16));
    } else if (key == "max_spawn_depth") {
      s.max_spawn_depth = TALARIA_TRY(ReadCount(value, key, 1, 2));
    } else if (key == "max_iterations") {
      s.max_iterations = TALARIA_TRY(ReadCount(value, key, 1, 10'000));
    } else if (key == "orchestrator_enabled") {
      if (!value.is_boolean()) return Err(BadDelegationSetting(key, "must be true or false"));
      s.orchestrator_enabled = value.get<bool>();
    } else if (key == "child_timeout_seconds") {
      if (!value.is_number() || value.get<double>() <= 0 || value.get<double>() > 86'400) {
        return Err(
            BadDelegationSetting(key, "must be a number of seconds above 0 (at most 86400)"));
      }
      s.child_timeout = std::chrono::milliseconds(
          std::max<int64_t>(1, static_cast<int64_t>(value.get<double>() * 1000.0)));
    } else if (key == "blocked_tools") {
      if (!value.is_array()) return Err(BadDelegationSetting(key, "must be a list of tool names"));
      s.blocked_tools.clear();
      for (const Json& v : value) {
        if (!v.is_string()) return Err(BadDelegationSetting(key, "must be a list of tool names"));
        s.blocked_tools.push_back(v.get<std::string>());
      }
    } else {
      return Err(
          BadDelegationSetting(key,
                               "is not a setting (max_concurrent_children, max_spawn_depth, "
                               "orchestrator_enabled, max_iterations, child_timeout_seconds, "
                               "blocked_tools)"));
    }
  }
  return s;
}

}  // namespace talaria::agent
