// The base configuration fields an environment starts from: Atropos' BaseEnvConfig as it stands
// in NousResearch/atropos (atroposlib/envs/base.py at 0050d1f), every field in order with its
// default, and which of them the original's infrastructure settings lock.
#include "rl/env_config.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace talaria::rl {
namespace {

struct Expected {
  const char* name;
  const char* default_json;
};

// Read off base.py; the test fails when the table drifts from it.
constexpr Expected kAtropos[] = {
    {"group_size", "4"},
    {"max_num_workers", "-1"},
    {"max_eval_workers", "16"},
    {"max_num_workers_per_node", "8"},
    {"steps_per_eval", "100"},
    {"max_token_length", "2048"},
    {"eval_handling", "\"STOP_TRAIN\""},
    {"eval_limit_ratio", "0.5"},
    {"inference_weight", "1.0"},
    {"batch_size", "-1"},
    {"max_batches_offpolicy", "3"},
    {"tokenizer_name", "\"NousResearch/DeepHermes-3-Llama-3-3B-Preview\""},
    {"use_wandb", "true"},
    {"rollout_server_url", "\"http://localhost:8000\""},
    {"total_steps", "1000"},
    {"wandb_name", "null"},
    {"num_rollouts_to_keep", "32"},
    {"num_rollouts_per_group_for_logging", "1"},
    {"ensure_scores_are_not_same", "true"},
    {"data_path_to_save_groups", "null"},
    {"data_dir_to_save_evals", "null"},
    {"min_items_sent_before_logging", "2"},
    {"include_messages", "false"},
    {"min_batch_allocation", "null"},
    {"worker_timeout", "600"},
};

TEST(EnvConfig, BaseFieldsAreAtroposBaseEnvConfigInOrderWithItsDefaults) {
  const std::vector<ConfigField> fields = ConfigFieldsFor(EnvironmentInfo{}, RlSettings{});
  ASSERT_EQ(fields.size(), std::size(kAtropos));
  for (size_t i = 0; i < fields.size(); ++i) {
    EXPECT_EQ(fields[i].name, kAtropos[i].name) << i;
    EXPECT_EQ(fields[i].default_value, Json::parse(kAtropos[i].default_json)) << fields[i].name;
    EXPECT_FALSE(fields[i].description.empty()) << fields[i].name;
  }
}

TEST(EnvConfig, TheOriginalsInfrastructureSettingsAreLocked) {
  RlSettings settings;
  settings.api_url = "http://127.0.0.1:18000";
  std::vector<std::string> locked;
  for (const ConfigField& f : ConfigFieldsFor(EnvironmentInfo{}, settings)) {
    if (f.locked) locked.push_back(f.name);
  }
  EXPECT_EQ(locked, (std::vector<std::string>{
                        "max_num_workers", "steps_per_eval", "max_token_length", "eval_limit_ratio",
                        "inference_weight", "max_batches_offpolicy", "tokenizer_name", "use_wandb",
                        "rollout_server_url", "total_steps", "worker_timeout"}));
  EXPECT_EQ(LockedEnvValue("rollout_server_url", settings), "http://127.0.0.1:18000");
  EXPECT_EQ(LockedEnvValue("max_token_length", settings), 8192);
  EXPECT_EQ(LockedEnvValue("total_steps", settings), 2500);
  EXPECT_EQ(LockedEnvValue("steps_per_eval", settings), 25);
  EXPECT_TRUE(LockedEnvValue("group_size", settings).is_null());
  const Json run = LockedRunConfig(settings);
  EXPECT_EQ(run["tinker"]["lora_rank"], 32);
  EXPECT_EQ(run["tinker"]["learning_rate"], 0.00004);
  EXPECT_EQ(run["tinker"]["save_checkpoint_interval"], 25);
  EXPECT_EQ(run["openai"][0]["server_type"], "sglang");
}

}  // namespace
}  // namespace talaria::rl
