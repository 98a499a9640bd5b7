// The RL training tools (toolset `rl`): environments discovered by syntax tree, the selected
// environment's config with locked fields, and training runs driven as supervised processes
// (training_run.h) with metrics from W&B (run_metrics.h). Results keep the original's shapes;
// failures are {"error": ...} with the fields the original adds. Available when TINKER_API_KEY
// and WANDB_API_KEY are set, as the original.
#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "rl/env_config.h"
#include "rl/environment_scan.h"
#include "rl/rl_settings.h"
#include "rl/rl_state.h"
#include "rl/rl_tool_spec.h"
#include "rl/run_metrics.h"
#include "rl/training_run.h"
#include "talaria/base/file_io.h"
#include "talaria/base/random.h"
#include "talaria/core/tool_registration.h"

namespace talaria::rl {
namespace {

using Clock = std::chrono::steady_clock;

ToolResult Answer(const Json& j) {
  ToolResult r = ToolResult::Text(j.dump(2, ' ', false, Json::error_handler_t::replace));
  if (j.is_object() && j.contains("error")) r.status = CallStatus::kError;
  return r;
}

ToolResult ErrorAnswer(const std::string& message, Json extra = Json::object()) {
  Json j = {{"error", message}};
  for (auto& [k, v] : extra.items()) j[k] = v;
  return Answer(j);
}

constexpr std::string_view kNotSelected =
    "No environment selected. Use rl_select_environment(name) first.";

// The scan, remembered for the run start; errors as the tool's answer.
Result<ScanResult> Scan(const RlSettings& settings) {
  auto scan = ScanEnvironments(settings.environments_dir);
  if (!scan) {
    if (scan.error().code() == StatusCode::kNotFound) {
      return Err(NotFoundError(scan.error().message() +
                               " (set rl.root to the tinker-atropos checkout, or "
                               "rl.environments_dir)"));
    }
    return Err(scan.error());
  }
  std::lock_guard lock(RlState::Get().mu);
  RlState::Get().environments = scan->environments;
  return scan;
}

std::string LogPath(const RlSettings& s, std::string_view role, const std::string& run_id) {
  return s.logs_dir + "/" + std::string(role) + "_" + run_id + ".log";
}

Json LogsOf(const RlSettings& s, const std::string& run_id) {
  return {{"api", LogPath(s, "api", run_id)},
          {"trainer", LogPath(s, "trainer", run_id)},
          {"env", LogPath(s, "env", run_id)}};
}

// --- environments -------------------------------------------------------------------------

ToolResult ListEnvironments(const Json&, ToolContext&) {
  auto settings = LoadRlSettings();
  if (!settings) return ErrorAnswer(settings.error().message());
  auto scan = Scan(*settings);
  if (!scan) return ErrorAnswer(scan.error().message());
  Json envs = Json::array();
  for (const EnvironmentInfo& e : scan->environments) {
    envs.push_back({{"name", e.name},
                    {"class_name", e.class_name},
                    {"file_path", e.file_path},
                    {"description", e.description}});
  }
  Json out = {{"environments", envs},
              {"count", envs.size()},
              {"tips",
               {"Use rl_select_environment(name) to select an environment",
                "Read the file_path with file tools to understand how each environment works",
                "Look for load_dataset(), score_answer(), get_next_item() methods"}}};
  if (!scan->skipped.empty()) out["skipped"] = scan->skipped;
  return Answer(out);
}

std::string Timestamp() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  ::localtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", &tm);
  return buf;
}

ToolResult SelectEnvironment(const Json& args, ToolContext&) {
  const std::string name = JsonStringField(args, "name");
  auto settings = LoadRlSettings();
  if (!settings) return ErrorAnswer(settings.error().message());
  auto scan = Scan(*settings);
  if (!scan) return ErrorAnswer(scan.error().message());
  const EnvironmentInfo* found = nullptr;
  Json available = Json::array();
  for (const EnvironmentInfo& e : scan->environments) {
    available.push_back(e.name);
    if (e.name == name && found == nullptr) found = &e;
  }
  if (found == nullptr) {
    return ErrorAnswer("Environment '" + name + "' not found", {{"available", available}});
  }
  RlState& state = RlState::Get();
  std::lock_guard lock(state.mu);
  state.current_env = name;
  state.current_info = *found;
  state.current_fields = ConfigFieldsFor(*found, *settings);
  state.current_config = Json::object();
  for (const ConfigField& f : state.current_fields) {
    if (!f.locked) state.current_config[f.name] = f.default_value;
  }
  // A fresh W&B name per selection, so runs never share one.
  state.current_config["wandb_name"] = name + "-" + Timestamp();
  return Answer({{"message", "Selected environment: " + name},
                 {"environment", name},
                 {"file_path", found->file_path}});
}

// --- config -------------------------------------------------------------------------------

ToolResult GetCurrentConfig(const Json&, ToolContext&) {
  RlState& state = RlState::Get();
  std::lock_guard lock(state.mu);
  if (state.current_env.empty()) return ErrorAnswer(std::string(kNotSelected));
  Json configurable = Json::array();
  Json locked = Json::array();
  for (const ConfigField& f : state.current_fields) {
    Json field = {{"name", f.name},
                  {"type", f.type.empty() ? "unknown" : f.type},
                  {"default", f.default_value},
                  {"description", f.description}};
    if (f.locked) {
      field["current_value"] = f.locked_value;
      field["locked_value"] = f.locked_value;
      locked.push_back(std::move(field));
    } else {
      auto it = state.current_config.find(f.name);
      field["current_value"] = it != state.current_config.end() ? *it : f.default_value;
      configurable.push_back(std::move(field));
    }
  }
  return Answer({{"environment", state.current_env},
                 {"configurable_fields", configurable},
                 {"locked_fields", locked},
                 {"tip", "Use rl_edit_config(field, value) to change any configurable field."}});
}

std::string ValueText(const Json& v) { return v.is_string() ? v.get<std::string>() : DumpJson(v); }

ToolResult EditConfig(const Json& args, ToolContext&) {
  const std::string field = JsonStringField(args, "field");
  const Json value = args.contains("value") ? args["value"] : Json();
  RlState& state = RlState::Get();
  std::lock_guard lock(state.mu);
  if (state.current_env.empty()) return ErrorAnswer(std::string(kNotSelected));
  const ConfigField* info = nullptr;
  Json names = Json::array();
  for (const ConfigField& f : state.current_fields) {
    names.push_back(f.name);
    if (f.name == field) info = &f;
  }
  if (info == nullptr) {
    return ErrorAnswer("Unknown field '" + field + "'", {{"available_fields", names}});
  }
  if (info->locked) {
    return ErrorAnswer("Field '" + field + "' is locked and cannot be changed",
                       {{"locked_value", info->locked_value}});
  }
  state.current_config[field] = value;
  return Answer({{"message", "Updated " + field + " = " + ValueText(value)},
                 {"field", field},
                 {"value", value},
                 {"config", state.current_config}});
}

// --- runs ---------------------------------------------------------------------------------

Status MakeDirs(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return UnavailableError("cannot create " + dir + ": " + ec.message());
  return Status::Ok();
}

ToolResult StartTraining(const Json&, ToolContext&) {
  auto settings = LoadRlSettings();
  if (!settings) return ErrorAnswer(settings.error().message());
  RlState& state = RlState::Get();
  std::unique_lock lock(state.mu);
  if (state.current_env.empty()) return ErrorAnswer(std::string(kNotSelected));
  if (EnvValue("TINKER_API_KEY").empty()) {
    return ErrorAnswer("TINKER_API_KEY not set. Add it to talaria's environment");
  }
  const EnvironmentInfo env = state.current_info;
  const std::string env_name = state.current_env;
  const Json editable = state.current_config;
  lock.unlock();

  std::error_code ec;
  if (!std::filesystem::is_regular_file(env.file_path, ec)) {
    return ErrorAnswer("Environment file not found for '" + env_name + "'");
  }
  if (!std::filesystem::is_directory(settings->root, ec)) {
    return ErrorAnswer("tinker-atropos not found at " + settings->root + " (set rl.root)");
  }
  const auto [api_host, api_port] = HostPortOf(settings->api_url);
  const auto [inf_host, inf_port] = HostPortOf(settings->inference_url);
  if (api_port == 0) return ErrorAnswer("rl.api_url is not an http(s) URL with a host");
  if (inf_port == 0) return ErrorAnswer("rl.inference_url is not an http(s) URL with a host");
  if (Status s = MakeDirs(settings->configs_dir); !s.ok()) return ErrorAnswer(s.message());
  if (Status s = MakeDirs(settings->logs_dir); !s.ok()) return ErrorAnswer(s.message());

  const std::string run_id = RandomHex(4);
  Json run_config = LockedRunConfig(*settings);
  for (const auto& [field, value] : editable.items()) {
    if (value.is_null() || (value.is_string() && value.get<std::string>().empty())) continue;
    if (field == "wandb_project") continue;  // the trainer's setting, below
    run_config["env"][field] = value;
  }
  std::string wandb_project = "atropos-tinker";
  if (auto it = editable.find("wandb_project");
      it != editable.end() && it->is_string() && !it->get<std::string>().empty()) {
    wandb_project = it->get<std::string>();
  }
  const std::string wandb_run_name = env_name + "-" + run_id;
  run_config["tinker"]["wandb_project"] = wandb_project;
  run_config["tinker"]["wandb_run_name"] = wandb_run_name;
  // JSON is YAML (1.2, and PyYAML reads this flow style): no second serializer needed.
  const std::string config_path = settings->configs_dir + "/run_" + run_id + ".yaml";
  if (Status s =
          WriteFileAtomic(config_path, run_config.dump(2) + "\n", {.mode = 0644, .sync = false});
      !s.ok()) {
    return ErrorAnswer("cannot write " + config_path + ": " + s.message());
  }

  RunPlan plan;
  plan.run_id = run_id;
  plan.environment = env_name;
  plan.cwd = settings->root;
  plan.startup_timeout = settings->startup_timeout;
  plan.stop_grace = settings->stop_grace;
  plan.processes.push_back(
      {"api", settings->api_command, LogPath(*settings, "api", run_id), api_host, api_port});
  plan.processes.push_back({"trainer",
                            {settings->python, settings->trainer_script, "--config", config_path},
                            LogPath(*settings, "trainer", run_id),
                            inf_host,
                            inf_port});
  plan.processes.push_back({"env",
                            {settings->python, env.file_path, "serve", "--config", config_path},
                            LogPath(*settings, "env", run_id),
                            "",
                            0});
  RunRecord record;
  record.run = std::make_shared<TrainingRun>(std::move(plan));
  record.config = editable;
  record.wandb_project = wandb_project;
  record.wandb_run_name = wandb_run_name;
  record.config_path = config_path;
  record.logs = LogsOf(*settings, run_id);
  lock.lock();
  state.run_order.push_back(run_id);
  state.runs.emplace(run_id, record);
  lock.unlock();
  return Answer({{"run_id", run_id},
                 {"status", "starting"},
                 {"environment", env_name},
                 {"config", editable},
                 {"wandb_project", wandb_project},
                 {"wandb_run_name", wandb_run_name},
                 {"config_path", config_path},
                 {"logs", record.logs},
                 {"message",
                  "Training starting. Use rl_check_status(run_id) to monitor (recommended: every "
                  "30 minutes)."}});
}

Json ActiveRunIds(const RlState& state) {
  Json ids = Json::array();
  for (const std::string& id : state.run_order) ids.push_back(id);
  return ids;
}

ToolResult CheckStatus(const Json& args, ToolContext& ctx) {
  const std::string run_id = JsonStringField(args, "run_id");
  auto settings = LoadRlSettings();
  if (!settings) return ErrorAnswer(settings.error().message());
  RlState& state = RlState::Get();
  std::unique_lock lock(state.mu);
  auto it = state.runs.find(run_id);
  if (it == state.runs.end()) {
    return ErrorAnswer("Run '" + run_id + "' not found", {{"active_runs", ActiveRunIds(state)}});
  }
  // Training takes hours: a run's status is worth a look every status_interval at most.
  const auto now = Clock::now();
  if (auto last = state.last_status_check.find(run_id); last != state.last_status_check.end()) {
    const auto elapsed = now - last->second;
    if (elapsed < settings->status_interval) {
      const double remaining =
          std::chrono::duration<double>(settings->status_interval - elapsed).count();
      return Answer({{"rate_limited", true},
                     {"run_id", run_id},
                     {"message", "Rate limited. Next check available in " +
                                     std::to_string(std::lround(remaining / 60)) + " minutes."},
                     {"next_check_in_seconds", remaining}});
    }
  }
  state.last_status_check[run_id] = now;
  const RunRecord record = it->second;
  lock.unlock();

  const RunSnapshot snap = record.run->Snapshot();
  Json processes = Json::object();
  for (const ProcessState& p : snap.processes) processes[p.role] = p.state;
  Json result = {{"run_id", run_id},
                 {"status", RunStatusName(snap.status)},
                 {"environment", record.run->plan().environment},
                 {"running_time_minutes", snap.running_minutes},
                 {"processes", processes},
                 {"wandb_project", record.wandb_project},
                 {"wandb_run_name", record.wandb_run_name},
                 {"logs", record.logs}};
  if (!snap.error.empty()) result["error"] = snap.error;
  auto metrics =
      FetchRunMetrics(*settings, record.wandb_project, record.wandb_run_name, 0, ctx.cancel);
  if (metrics) {
    result["wandb_url"] = metrics->url;
    Json m = StatusMetrics(metrics->summary);
    m["state"] = metrics->state;
    result["metrics"] = std::move(m);
  } else {
    result["wandb_error"] = metrics.error().message();
  }
  // A failed run carries "error"; the answer is still the status the model asked for.
  ToolResult r = ToolResult::Text(result.dump(2, ' ', false, Json::error_handler_t::replace));
  return r;
}

ToolResult StopTraining(const Json& args, ToolContext&) {
  const std::string run_id = JsonStringField(args, "run_id");
  RlState& state = RlState::Get();
  std::unique_lock lock(state.mu);
  auto it = state.runs.find(run_id);
  if (it == state.runs.end()) {
    return ErrorAnswer("Run '" + run_id + "' not found", {{"active_runs", ActiveRunIds(state)}});
  }
  const std::shared_ptr<TrainingRun> run = it->second.run;
  lock.unlock();
  const RunStatus before = run->Snapshot().status;
  if (before != RunStatus::kRunning && before != RunStatus::kStarting) {
    return Answer({{"message", "Run '" + run_id + "' is not running (status: " +
                                   std::string(RunStatusName(before)) + ")"}});
  }
  run->Stop();
  return Answer({{"message", "Stopped training run '" + run_id + "'"},
                 {"run_id", run_id},
                 {"status", RunStatusName(run->Snapshot().status)}});
}

ToolResult GetResults(const Json& args, ToolContext& ctx) {
  const std::string run_id = JsonStringField(args, "run_id");
  auto settings = LoadRlSettings();
  if (!settings) return ErrorAnswer(settings.error().message());
  RlState& state = RlState::Get();
  std::unique_lock lock(state.mu);
  auto it = state.runs.find(run_id);
  if (it == state.runs.end()) return ErrorAnswer("Run '" + run_id + "' not found");
  const RunRecord record = it->second;
  lock.unlock();
  Json result = {{"run_id", run_id},
                 {"status", RunStatusName(record.run->Snapshot().status)},
                 {"environment", record.run->plan().environment},
                 {"wandb_project", record.wandb_project},
                 {"wandb_run_name", record.wandb_run_name}};
  auto metrics =
      FetchRunMetrics(*settings, record.wandb_project, record.wandb_run_name, 10, ctx.cancel);
  if (metrics) {
    result["wandb_url"] = metrics->url;
    result["final_metrics"] = metrics->summary;
    result["history"] = metrics->history;
  } else {
    result["wandb_error"] = metrics.error().message();
  }
  return ToolResult::Text(result.dump(2, ' ', false, Json::error_handler_t::replace));
}

ToolResult ListRuns(const Json&, ToolContext&) {
  RlState& state = RlState::Get();
  std::vector<std::pair<std::string, RunRecord>> records;
  {
    std::lock_guard lock(state.mu);
    for (const std::string& id : state.run_order) records.emplace_back(id, state.runs.at(id));
  }
  Json runs = Json::array();
  for (const auto& [id, record] : records) {
    runs.push_back({{"run_id", id},
                    {"environment", record.run->plan().environment},
                    {"status", RunStatusName(record.run->Snapshot().status)},
                    {"wandb_run_name", record.wandb_run_name}});
  }
  return Answer({{"runs", runs}, {"count", runs.size()}});
}

}  // namespace
}  // namespace talaria::rl

using talaria::rl::RlToolSpec;

TALARIA_TOOL(
    RlListEnvironments,
    RlToolSpec(
        "rl_list_environments",
        R"json({"name": "rl_list_environments", "description": "List all available RL environments. Returns environment names, paths, and descriptions. TIP: Read the file_path with file tools to understand how each environment works (verifiers, data loading, rewards).", "parameters": {"type": "object", "properties": {}, "required": []}})json",
        talaria::rl::ListEnvironments, talaria::rl::RlAccess::kRead));
TALARIA_TOOL(
    RlSelectEnvironment,
    RlToolSpec(
        "rl_select_environment",
        R"json({"name": "rl_select_environment", "description": "Select an RL environment for training. Loads the environment's default configuration. After selecting, use rl_get_current_config() to see settings and rl_edit_config() to modify them.", "parameters": {"type": "object", "properties": {"name": {"type": "string", "description": "Name of the environment to select (from rl_list_environments)"}}, "required": ["name"]}})json",
        talaria::rl::SelectEnvironment, talaria::rl::RlAccess::kWrite));
TALARIA_TOOL(
    RlGetCurrentConfig,
    RlToolSpec(
        "rl_get_current_config",
        R"json({"name": "rl_get_current_config", "description": "Get the current environment configuration. Returns only fields that can be modified: group_size, max_token_length, total_steps, steps_per_eval, use_wandb, wandb_name, max_num_workers.", "parameters": {"type": "object", "properties": {}, "required": []}})json",
        talaria::rl::GetCurrentConfig, talaria::rl::RlAccess::kRead));
TALARIA_TOOL(
    RlEditConfig,
    RlToolSpec(
        "rl_edit_config",
        R"json({"name": "rl_edit_config", "description": "Update a configuration field. Use rl_get_current_config() first to see all available fields for the selected environment. Each environment has different configurable options. Infrastructure settings (tokenizer, URLs, lora_rank, learning_rate) are locked.", "parameters": {"type": "object", "properties": {"field": {"type": "string", "description": "Name of the field to update (get available fields from rl_get_current_config)"}, "value": {"description": "New value for the field"}}, "required": ["field", "value"]}})json",
        talaria::rl::EditConfig, talaria::rl::RlAccess::kWrite));
TALARIA_TOOL(
    RlStartTraining,
    RlToolSpec(
        "rl_start_training",
        R"json({"name": "rl_start_training", "description": "Start a new RL training run with the current environment and config. Most training parameters (lora_rank, learning_rate, etc.) are fixed. Use rl_edit_config() to set group_size, batch_size, wandb_project before starting. WARNING: Training takes hours.", "parameters": {"type": "object", "properties": {}, "required": []}})json",
        talaria::rl::StartTraining, talaria::rl::RlAccess::kWrite));
TALARIA_TOOL(
    RlCheckStatus,
    RlToolSpec(
        "rl_check_status",
        R"json({"name": "rl_check_status", "description": "Get status and metrics for a training run. RATE LIMITED: enforces 30-minute minimum between checks for the same run. Returns WandB metrics: step, state, reward_mean, loss, percent_correct.", "parameters": {"type": "object", "properties": {"run_id": {"type": "string", "description": "The run ID from rl_start_training()"}}, "required": ["run_id"]}})json",
        talaria::rl::CheckStatus, talaria::rl::RlAccess::kRead));
TALARIA_TOOL(
    RlStopTraining,
    RlToolSpec(
        "rl_stop_training",
        R"json({"name": "rl_stop_training", "description": "Stop a running training job. Use if metrics look bad, training is stagnant, or you want to try different settings.", "parameters": {"type": "object", "properties": {"run_id": {"type": "string", "description": "The run ID to stop"}}, "required": ["run_id"]}})json",
        talaria::rl::StopTraining, talaria::rl::RlAccess::kWrite));
TALARIA_TOOL(
    RlGetResults,
    RlToolSpec(
        "rl_get_results",
        R"json({"name": "rl_get_results", "description": "Get final results and metrics for a completed training run. Returns final metrics and path to trained weights.", "parameters": {"type": "object", "properties": {"run_id": {"type": "string", "description": "The run ID to get results for"}}, "required": ["run_id"]}})json",
        talaria::rl::GetResults, talaria::rl::RlAccess::kRead));
TALARIA_TOOL(
    RlListRuns,
    RlToolSpec(
        "rl_list_runs",
        R"json({"name": "rl_list_runs", "description": "List all training runs (active and completed) with their status.", "parameters": {"type": "object", "properties": {}, "required": []}})json",
        talaria::rl::ListRuns, talaria::rl::RlAccess::kRead));
