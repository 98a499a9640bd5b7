// Configuration fields and locked settings (env_config.h).
#include "rl/env_config.h"

#include <string>
#include <utility>

#include <nlohmann/json.hpp>

namespace talaria::rl {
namespace {

struct BaseField {
  const char* name;
  const char* type;
  const char* default_json;
  const char* description;
};

// Atropos' BaseEnvConfig (atroposlib/envs/base.py), its fields in order with their defaults, as
// checked against NousResearch/atropos at 0050d1f (the descriptions are talaria's words).
constexpr BaseField kBaseFields[] = {
    {"group_size", "int", "4", "Completions generated per prompt (one group)"},
    {"max_num_workers", "int", "-1", "Most rollout workers at once; -1: no limit"},
    {"max_eval_workers", "int", "16", "Most evaluation workers at once"},
    {"max_num_workers_per_node", "int", "8", "Most workers per node"},
    {"steps_per_eval", "int", "100", "Training steps between evaluations"},
    {"max_token_length", "int", "2048", "Longest token sequence for a rollout"},
    {"eval_handling", "EvalHandlingEnum", "\"STOP_TRAIN\"", "What evaluation does to training"},
    {"eval_limit_ratio", "float", "0.5", "Share of time evaluation may take"},
    {"inference_weight", "float", "1.0", "Weight of this environment's inference"},
    {"batch_size", "int", "-1", "Rollouts per training batch; -1: the trainer's"},
    {"max_batches_offpolicy", "int", "3", "Most batches that may lag the current policy"},
    {"tokenizer_name", "str", "\"NousResearch/DeepHermes-3-Llama-3-3B-Preview\"",
     "Tokenizer of the trained model"},
    {"use_wandb", "bool", "true", "Log to Weights & Biases"},
    {"rollout_server_url", "str", "\"http://localhost:8000\"", "The trajectory API (run-api)"},
    {"total_steps", "int", "1000", "Training steps of the run"},
    {"wandb_name", "Optional[str]", "null", "Display name of the W&B run"},
    {"num_rollouts_to_keep", "int", "32", "Rollouts kept for logging"},
    {"num_rollouts_per_group_for_logging", "int", "1", "Rollouts per group logged"},
    {"ensure_scores_are_not_same", "bool", "true", "Drop groups whose scores are all equal"},
    {"data_path_to_save_groups", "Optional[str]", "null", "File the scored groups are saved to"},
    {"data_dir_to_save_evals", "Optional[str]", "null", "Directory evaluation results go to"},
    {"min_items_sent_before_logging", "int", "2", "Items sent before the first log"},
    {"include_messages", "bool", "false", "Send the chat messages with each group"},
    {"min_batch_allocation", "Optional[float]", "null",
     "Least share of a batch this environment gets (0.0-1.0)"},
    {"worker_timeout", "float", "600", "Seconds a rollout worker may take"},
};

Json ParseConstant(const char* text) {
  auto j = ParseJson(text);
  return j ? *j : Json();
}

}  // namespace

Json LockedEnvValue(std::string_view field, const RlSettings& settings) {
  const Json locked = LockedRunConfig(settings)["env"];
  auto it = locked.find(field);
  return it == locked.end() ? Json() : *it;
}

Json LockedRunConfig(const RlSettings& settings) {
  // The original's infrastructure settings, tuned for Tinker; the model may not change them.
  return Json{
      {"env",
       {{"tokenizer_name", "Qwen/Qwen3-8B"},
        {"rollout_server_url", settings.api_url},
        {"use_wandb", true},
        {"max_token_length", 8192},
        {"max_num_workers", 2048},
        {"worker_timeout", 3600},
        {"total_steps", 2500},
        {"steps_per_eval", 25},
        {"max_batches_offpolicy", 3},
        {"inference_weight", 1.0},
        {"eval_limit_ratio", 0.1}}},
      {"openai", Json::array({{{"model_name", "Qwen/Qwen3-8B"},
                               {"base_url", settings.inference_url},
                               {"api_key", "x"},
                               {"weight", 1.0},
                               {"num_requests_for_eval", 256},
                               {"timeout", 3600},
                               {"server_type", "sglang"}}})},
      {"tinker",
       {{"lora_rank", 32},
        {"learning_rate", 0.00004},
        {"max_token_trainer_length", 9000},
        {"checkpoint_dir", "./temp/"},
        {"save_checkpoint_interval", 25}}},
      {"slurm", false},
      {"testing", false},
  };
}

std::vector<ConfigField> ConfigFieldsFor(const EnvironmentInfo& env, const RlSettings& settings) {
  std::vector<ConfigField> fields;
  for (const BaseField& b : kBaseFields) {
    fields.push_back({b.name, b.type, ParseConstant(b.default_json), b.description, false, Json()});
  }
  for (const lint::PythonField& f : env.config_fields) {
    if (f.name.empty()) continue;
    ConfigField field{f.name, f.annotation, Json(), f.description, false, Json()};
    if (f.default_value && f.default_value->value) field.default_value = *f.default_value->value;
    if (f.default_value && !f.default_value->name.empty()) {
      field.default_value = f.default_value->name;
    }
    bool replaced = false;
    for (ConfigField& existing : fields) {
      if (existing.name != field.name) continue;
      if (field.description.empty()) field.description = existing.description;
      existing = field;
      replaced = true;
    }
    if (!replaced) fields.push_back(std::move(field));
  }
  for (ConfigField& f : fields) {
    Json locked = LockedEnvValue(f.name, settings);
    if (!locked.is_null()) {
      f.locked = true;
      f.locked_value = std::move(locked);
    }
  }
  return fields;
}

}  // namespace talaria::rl
