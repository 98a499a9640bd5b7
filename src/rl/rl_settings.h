// The `rl` section of config.yaml and the environment the RL training tools read:
//
//   rl:
//     root: ~/tinker-atropos          # the tinker-atropos checkout (default
//                                     #   $TALARIA_HOME/tinker-atropos)
//     environments_dir: ...           # default <root>/tinker_atropos/environments
//     python: python3                 # runs launch_training.py and the environment files
//     api_command: [run-api]          # the Atropos trajectory API
//     api_url: http://localhost:8000  # where run-api listens (the locked rollout_server_url)
//     inference_url: http://localhost:8001/v1   # the trainer's inference server (sglang)
//     startup_timeout: 600            # seconds each process gets to become ready
//     status_interval: 1800           # seconds between two rl_check_status of one run
//     stop_grace: 10                  # seconds between SIGTERM and SIGKILL on stop
//     inference_test_url: https://openrouter.ai/api/v1
//
// Keys: TINKER_API_KEY and WANDB_API_KEY (both required, as in the original), WANDB_ENTITY
// (default nousresearch), WANDB_BASE_URL (default https://api.wandb.ai), OPENROUTER_API_KEY
// (rl_test_inference).
// Thread-safety: value types; LoadRlSettings reads the process's config (ToolCallConfig) each
// call.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "talaria/base/status.h"
#include "talaria/core/config.h"

namespace talaria::rl {

struct RlSettings {
  std::string root;
  std::string environments_dir;
  std::string configs_dir;  // <root>/configs: the run configs launch_training.py reads
  std::string logs_dir;     // $TALARIA_HOME/logs/rl_training
  std::string python = "python3";
  std::vector<std::string> api_command = {"run-api"};
  std::string trainer_script = "launch_training.py";
  std::string api_url = "http://localhost:8000";
  std::string inference_url = "http://localhost:8001/v1";
  std::chrono::seconds startup_timeout{600};
  std::chrono::seconds status_interval{1800};
  std::chrono::seconds stop_grace{10};
  std::string inference_test_url = "https://openrouter.ai/api/v1";
  std::string wandb_entity = "nousresearch";
  std::string wandb_base_url = "https://api.wandb.ai";
};

Result<RlSettings> RlSettingsFromConfig(const Config& config);
// The rl section of the config the process loaded (ToolCallConfig; defaults when it has none).
Result<RlSettings> LoadRlSettings();

// $name, or "" when unset.
std::string EnvValue(const char* name);

}  // namespace talaria::rl
