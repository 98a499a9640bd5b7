// AgentOptionsFromConfig: config.yaml's `agent:` section.
#include <string>

#include <nlohmann/json.hpp>

#include "talaria/agent/agent.h"

namespace talaria::agent {
namespace {

[[maybe_unused]] const bool kSectionDeclared = (DeclareConfigSection("agent"), true);

Status Bad(std::string_view key, std::string_view why) {
  return InvalidArgumentError("config.yaml: agent." + std::string(key) + " " + std::string(why));
}

Status ReadShare(const Json& value, std::string_view key, double low, double high, double& out) {
  if (!value.is_number() || value.get<double>() < low || value.get<double>() > high) {
    return Bad(key, "must be a number from " + std::to_string(low).substr(0, 4) + " to " +
                        std::to_string(high).substr(0, 4));
  }
  out = value.get<double>();
  return Status::Ok();
}

}  // namespace

Result<AgentOptions> AgentOptionsFromConfig(const Config& config, AgentOptions base) {
  if (!config.raw || !config.raw->is_object()) return base;
  auto section = config.raw->find("agent");
  if (section == config.raw->end() || section->is_null()) return base;
  if (!section->is_object()) {
    return Err(InvalidArgumentError("config.yaml: agent must be a mapping"));
  }
  for (const auto& [key, value] : section->items()) {
    if (key == "max_iterations") {
      if (!value.is_number_integer() || value.get<int64_t>() < 1 || value.get<int64_t>() > 10'000) {
        return Err(Bad(key, "must be a whole number from 1 to 10000"));
      }
      base.max_iterations = static_cast<int>(value.get<int64_t>());
    } else if (key == "compression_threshold") {
      TALARIA_RETURN_IF_ERROR(ReadShare(value, key, 0.1, 0.95, base.compression_threshold));
    } else if (key == "compaction_tail_ratio") {
      TALARIA_RETURN_IF_ERROR(ReadShare(value, key, 0.05, 0.5, base.compaction_tail_ratio));
    } else if (key == "load_context_files") {
      if (!value.is_boolean()) return Err(Bad(key, "must be true or false"));
      base.load_context_files = value.get<bool>();
    } else if (key == "system_prompt") {
      if (!value.is_string()) return Err(Bad(key, "must be a string"));
      base.extra_system_prompt = value.get<std::string>();
    } else {
      return Err(Bad(key,
                     "is not a setting (max_iterations, compression_threshold, "
                     "compaction_tail_ratio, load_context_files, system_prompt)"));
    }
  }
  return base;
}

}  // namespace talaria::agent
