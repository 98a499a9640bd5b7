// An environment's configuration fields and the locked infrastructure settings.
//
// The original imported the environment and asked its pydantic class for fields; talaria does
// not run the file, so the fields are Atropos' BaseEnvConfig (a table here, with its defaults)
// overlaid with the annotated fields of the environment's own config class (read from the
// syntax tree). The locked fields keep the original's values and cannot be edited; the run
// config written for launch_training.py starts from them.
// Thread-safety: free functions and value types.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>
#include "rl/environment_scan.h"
#include "rl/rl_settings.h"

#include "talaria/base/json.h"

namespace talaria::rl {

struct ConfigField {
  std::string name;
  std::string type;
  Json default_value;  // null when none is known
  std::string description;
  bool locked = false;
  Json locked_value;  // set when locked
};

// BaseEnvConfig's fields, then the environment's own (which override a same-named base field).
std::vector<ConfigField> ConfigFieldsFor(const EnvironmentInfo& env, const RlSettings& settings);

// The locked value of an `env` field, or null when the field is not locked.
Json LockedEnvValue(std::string_view field, const RlSettings& settings);

// The whole run config (env, openai, tinker, slurm, testing) with the locked settings, before
// the editable fields are applied. The URLs come from `settings` (the user's, not the model's).
Json LockedRunConfig(const RlSettings& settings);

}  // namespace talaria::rl
