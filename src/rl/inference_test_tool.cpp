// rl_test_inference: a few steps of the selected environment in Atropos' `process` mode with an
// OpenAI-compatible endpoint (OpenRouter by default) as the policy, per model, to catch a broken
// environment (loading, prompts, parsing, scoring) before hours of training. Each model's run is
// one child process with a 10-minute limit, cancelled with the call; its scored groups are read
// back from the JSONL file the environment writes.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "rl/env_config.h"
#include "rl/rl_settings.h"
#include "rl/rl_state.h"
#include "rl/rl_tool_spec.h"
#include "talaria/base/file_io.h"
#include "talaria/base/random.h"
#include "talaria/base/subprocess.h"
#include "talaria/core/tool_registration.h"

namespace talaria::rl {
namespace {

struct TestModel {
  std::string id;
  std::string name;
  std::string scale;
};

// The original's three models, at three scales, so parsing is tested against more than one.
const std::vector<TestModel>& DefaultModels() {
  static const std::vector<TestModel> kModels = {
      {"qwen/qwen3-8b", "Qwen3 8B", "small"},
      {"z-ai/glm-4.7-flash", "GLM-4.7 Flash", "medium"},
      {"minimax/minimax-m2.7", "MiniMax M2.7", "large"},
  };
  return kModels;
}

constexpr std::chrono::minutes kPerModelLimit{10};

ToolResult InferenceAnswer(const Json& j) {
  ToolResult r = ToolResult::Text(j.dump(2, ' ', false, Json::error_handler_t::replace));
  if (j.is_object() && j.contains("error")) r.status = CallStatus::kError;
  return r;
}

std::string SafeName(std::string s) {
  for (char& c : s) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                       c == '-' || c == '_' || c == '.';
    if (!plain) c = '_';
  }
  return s;
}

std::string Tail(const std::string& text, size_t n) {
  return text.size() <= n ? text : text.substr(text.size() - n);
}

int64_t IntArg(const Json& args, std::string_view key, int64_t fallback) {
  auto it = args.find(key);
  if (it == args.end() || !it->is_number()) return fallback;
  const double v = it->get<double>();
  return v < 1 ? 1 : (v > 1000 ? 1000 : static_cast<int64_t>(v));
}

// Reads the scored groups: one JSON object per line with "scores": [numbers].
void ReadGroups(const std::string& path, Json& model) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    auto item = ParseJson(line);
    if (!item || !item->is_object()) continue;
    auto scores_it = item->find("scores");
    if (scores_it == item->end() || !scores_it->is_array()) continue;
    int correct = 0;
    Json scores = Json::array();
    for (const Json& s : *scores_it) {
      if (!s.is_number()) continue;
      scores.push_back(s);
      if (s.get<double>() > 0) ++correct;
    }
    const int step = model["steps_tested"].get<int>() + 1;
    model["steps_tested"] = step;
    model["total_completions"] = model["total_completions"].get<int>() + scores.size();
    model["correct_completions"] = model["correct_completions"].get<int>() + correct;
    model["steps"].push_back(
        {{"step", step}, {"completions", scores.size()}, {"correct", correct}, {"scores", scores}});
  }
}

double Round3(double v) { return static_cast<double>(std::llround(v * 1000)) / 1000; }

ToolResult TestInference(const Json& args, ToolContext& ctx) {
  const int64_t num_steps = IntArg(args, "num_steps", 3);
  const int64_t group_size = IntArg(args, "group_size", 16);
  auto settings = LoadRlSettings();
  if (!settings) return InferenceAnswer({{"error", settings.error().message()}});
  RlState& state = RlState::Get();
  EnvironmentInfo env;
  std::string env_name;
  {
    std::lock_guard lock(state.mu);
    if (state.current_env.empty()) {
      return InferenceAnswer(
          {{"error", "No environment selected. Use rl_select_environment(name) first."}});
    }
    env = state.current_info;
    env_name = state.current_env;
  }
  const std::string api_key = EnvValue("OPENROUTER_API_KEY");
  if (api_key.empty()) {
    return InferenceAnswer(
        {{"error", "OPENROUTER_API_KEY not set. Required for inference testing."}});
  }
  std::vector<TestModel> models;
  if (auto m = args.find("models"); m != args.end() && m->is_array() && !m->empty()) {
    for (const TestModel& known : DefaultModels()) {
      for (const Json& id : *m) {
        if (id.is_string() && id.get<std::string>() == known.id) models.push_back(known);
      }
    }
    if (models.empty()) {
      for (const Json& id : *m) {
        if (id.is_string())
          models.push_back({id.get<std::string>(), id.get<std::string>(), "custom"});
      }
    }
  }
  if (models.empty()) models = DefaultModels();

  const std::string out_dir = settings->logs_dir + "/inference_tests";
  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  if (ec) return InferenceAnswer({{"error", "cannot create " + out_dir + ": " + ec.message()}});
  const Json locked = LockedRunConfig(*settings)["env"];
  Json results = {
      {"environment", env_name},
      {"environment_file", env.file_path},
      {"test_config",
       {{"num_steps", num_steps},
        {"group_size", group_size},
        {"rollouts_per_model", num_steps * group_size},
        {"total_rollouts", num_steps * group_size * static_cast<int64_t>(models.size())}}},
      {"models_tested", Json::array()}};
  for (const TestModel& model : models) {
    if (ctx.cancelled()) break;
    const std::string safe = SafeName(model.id);
    std::string stem = out_dir;
    stem += "/test_";
    stem += SafeName(env_name);
    stem += "_";
    stem += safe;
    const std::string output_file = stem + ".jsonl";
    const std::string log_file = stem + ".log";
    std::filesystem::remove(output_file, ec);  // a previous test's groups are not this one's
    const std::string wandb_name = "test_inference_" + SafeName(env_name) + "_" + RandomHex(4);
    SpawnOptions options;
    options.argv = {settings->python,
                    env.file_path,
                    "process",
                    "--env.total_steps",
                    std::to_string(num_steps),
                    "--env.group_size",
                    std::to_string(group_size),
                    "--env.use_wandb",
                    "true",
                    "--env.wandb_name",
                    wandb_name,
                    "--env.data_path_to_save_groups",
                    output_file,
                    "--env.tokenizer_name",
                    locked["tokenizer_name"].get<std::string>(),
                    "--env.max_token_length",
                    DumpJson(locked["max_token_length"]),
                    "--env.max_num_workers",
                    DumpJson(locked["max_num_workers"]),
                    "--env.max_batches_offpolicy",
                    DumpJson(locked["max_batches_offpolicy"]),
                    "--openai.base_url",
                    settings->inference_test_url,
                    "--openai.api_key",
                    api_key,
                    "--openai.model_name",
                    model.id,
                    "--openai.server_type",
                    "openai",
                    "--openai.health_check",
                    "false"};
    options.cwd = settings->root;
    options.timeout = kPerModelLimit;
    options.cancel = ctx.cancel;
    options.max_output_bytes = size_t{256} << 10;
    Json m = {{"model", model.id},       {"name", model.name},         {"scale", model.scale},
              {"wandb_run", wandb_name}, {"output_file", output_file}, {"steps", Json::array()},
              {"steps_tested", 0},       {"total_completions", 0},     {"correct_completions", 0}};
    auto run = RunProcess(options);
    if (!run) {
      m["error"] = run.error().message();
    } else {
      std::string log = "Model: " + model.id + "\nReturn code: " + std::to_string(run->exit_code) +
                        "\n\nSTDOUT:\n" + run->stdout_text + "\n\nSTDERR:\n" + run->stderr_text;
      // The key went to the child on its command line; it never goes into the log.
      for (size_t at = log.find(api_key); at != std::string::npos; at = log.find(api_key, at)) {
        log.replace(at, api_key.size(), "***API_KEY***");
      }
      (void)WriteFileAtomic(log_file, log, {.mode = 0600, .sync = false});
      if (run->timed_out) {
        m["error"] = "Process timed out after 10 minutes";
      } else if (run->cancelled) {
        m["error"] = "Cancelled";
      } else if (run->exit_code != 0) {
        m["error"] = "Process exited with code " + std::to_string(run->exit_code);
        m["stderr"] = Tail(run->stderr_text, 1000);
        m["stdout"] = Tail(run->stdout_text, 1000);
        m["log_file"] = log_file;
      } else if (!std::filesystem::exists(output_file, ec)) {
        m["error"] = "Output file not created: " + output_file;
      } else {
        ReadGroups(output_file, m);
      }
    }
    const int total = m["total_completions"].get<int>();
    const int steps = m["steps_tested"].get<int>();
    m["accuracy"] = total > 0 ? Round3(m["correct_completions"].get<double>() / total) : 0.0;
    int with_correct = 0;
    for (const Json& s : m["steps"]) with_correct += s["correct"].get<int>() > 0 ? 1 : 0;
    m["steps_with_correct"] = with_correct;
    m["step_success_rate"] = steps > 0 ? Round3(static_cast<double>(with_correct) / steps) : 0.0;
    results["models_tested"].push_back(std::move(m));
  }
  Json working = Json::array();
  for (const Json& m : results["models_tested"]) {
    if (m["steps_tested"].get<int>() > 0) working.push_back(m);
  }
  Json best = nullptr;
  double best_accuracy = -1;
  double sum = 0;
  for (const Json& m : working) {
    const double a = m["accuracy"].get<double>();
    sum += a;
    if (a > best_accuracy) {
      best_accuracy = a;
      best = m["model"];
    }
  }
  results["summary"] = {
      {"steps_requested", num_steps},
      {"models_tested", models.size()},
      {"models_succeeded", working.size()},
      {"best_model", best},
      {"avg_accuracy", working.empty() ? 0.0 : Round3(sum / static_cast<double>(working.size()))},
      {"environment_working", !working.empty()},
      {"output_directory", out_dir}};
  return ToolResult::Text(results.dump(2, ' ', false, Json::error_handler_t::replace));
}

}  // namespace
}  // namespace talaria::rl

TALARIA_TOOL(
    RlTestInference,
    talaria::rl::RlToolSpec(
        "rl_test_inference",
        R"json({"name": "rl_test_inference", "description": "Quick inference test for any environment. Runs a few steps of inference + scoring using OpenRouter. Default: 3 steps x 16 completions = 48 rollouts per model, testing 3 models = 144 total. Tests environment loading, prompt construction, inference parsing, and verifier logic. Use BEFORE training to catch issues.", "parameters": {"type": "object", "properties": {"num_steps": {"type": "integer", "description": "Number of steps to run (default: 3, recommended max for testing)", "default": 3}, "group_size": {"type": "integer", "description": "Completions per step (default: 16, like training)", "default": 16}, "models": {"type": "array", "items": {"type": "string"}, "description": "Optional list of OpenRouter model IDs. Default: qwen/qwen3-8b, z-ai/glm-4.7-flash, minimax/minimax-m2.7"}}, "required": []}})json",
        talaria::rl::TestInference, talaria::rl::RlAccess::kWrite));
