// What the RL tools remember between calls, for the process (as the original's module globals
// did): the discovered environments, the selected one and its edited config, the runs, and when
// each run's status was last checked.
// Thread-safety: every member is Guarded by mu; never call out (HTTP, processes) while holding it.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "rl/env_config.h"
#include "rl/environment_scan.h"
#include "rl/training_run.h"
#include "talaria/base/json.h"

namespace talaria::rl {

struct RunRecord {
  std::shared_ptr<TrainingRun> run;
  Json config;  // the editable fields it started with
  std::string wandb_project;
  std::string wandb_run_name;
  std::string config_path;
  Json logs;  // {"api": path, "trainer": path, "env": path}
};

struct RlState {
  std::mutex mu;
  std::vector<EnvironmentInfo> environments;
  std::string current_env;  // "" until rl_select_environment
  EnvironmentInfo current_info;
  std::vector<ConfigField> current_fields;
  Json current_config = Json::object();
  std::vector<std::string> run_order;  // run ids, oldest first
  std::map<std::string, RunRecord> runs;
  std::map<std::string, std::chrono::steady_clock::time_point> last_status_check;

  static RlState& Get();
  // Stops every run and forgets everything (tests start each case from nothing).
  static void ResetForTesting();
};

}  // namespace talaria::rl
