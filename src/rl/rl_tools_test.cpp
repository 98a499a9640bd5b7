// The RL tools end to end through the registry: environments discovered in a temp directory by
// syntax tree, and training runs made of real processes (small Python programs standing in for
// run-api, launch_training.py and an environment, listening on real loopback ports), with the
// run's metrics from a fake W&B GraphQL API that checks the key, the path and the query.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "rl/rl_state.h"
#include "support/loopback_http.h"
#include "support/registered_tool.h"
#include "support/temp_dir.h"
#include "support/wait_until.h"
#include "talaria/core/registry.h"
#include "talaria/core/tool_context.h"

namespace talaria::rl {
namespace {

using talaria::test_support::TempDir;
using talaria::test_support::WaitUntil;
using talaria_test::LoopbackHttpServer;

// "api:wandb-key" in base64: the Basic credentials W&B's API takes.
constexpr const char* kWandbAuth = "Basic YXBpOndhbmRiLWtleQ==";

// A port nothing listens on right now (the kernel's next ephemeral one).
int FreePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

void Write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Listens on argv[1] until killed.
constexpr const char* kFakeApi = R"py(
import socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(16)
print("fake run-api listening", flush=True)
while True:
    c, _ = s.accept()
    c.close()
)py";

// launch_training.py: reads the run config, keeps a copy, then serves the inference port the
// config names; exits 3 at once when the file "trainer_fails" exists.
constexpr const char* kFakeTrainer = R"py(
import json, os, socket, sys
config = json.load(open(sys.argv[sys.argv.index("--config") + 1]))
json.dump(config, open("config_seen.json", "w"))
if os.path.exists("trainer_fails"):
    print("trainer: no GPU quota", flush=True)
    sys.exit(3)
port = int(config["openai"][0]["base_url"].split(":")[2].split("/")[0])
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", port))
s.listen(16)
print("fake trainer serving", port, flush=True)
while True:
    c, _ = s.accept()
    c.close()
)py";

// An environment: discovered by its class, `serve` runs until the file "finish" appears (then
// exits 0), `process` writes scored groups (or fails for the model bad/model).
constexpr const char* kGsmEnv = R"py(
import json, os, sys, time

# Runs first and exits: the classes below name things (pydantic, Atropos) this machine lacks.
if __name__ == "__main__":
    if sys.argv[1] == "serve":
        print("env serving", flush=True)
        while not os.path.exists("finish"):
            time.sleep(0.02)
        sys.exit(0)
    if sys.argv[1] == "process":
        args = dict(zip(sys.argv[2::2], sys.argv[3::2]))
        json.dump(args, open("process_args_" + args["--openai.model_name"].replace("/", "_") + ".json", "w"))
        if args["--openai.model_name"] == "bad/model":
            print("model not found", file=sys.stderr)
            sys.exit(3)
        with open(args["--env.data_path_to_save_groups"], "w") as out:
            for step in range(int(args["--env.total_steps"])):
                scores = [1.0 if i <= step else -1.0 for i in range(int(args["--env.group_size"]))]
                out.write(json.dumps({"scores": scores}) + "\n")
        sys.exit(0)
    sys.exit(2)

from pydantic import Field

class GsmConfig(BaseEnvConfig):
    group_size: int = Field(default=16, description="Completions per question")
    dataset: str = "gsm8k-train"

class GsmEnv(atroposlib.envs.BaseEnv):
    """Grade-school math word problems.

    Scored by exact match."""
    name = "gsm8k"
    env_config_cls = GsmConfig
)py";

// Writes the marker when anything runs it: discovery must not.
constexpr const char* kTrapEnv = R"py(
open("/tmp/talaria-rl-trap-ran", "w").write("ran")
class Trap(atropos.BaseEnv):
    open("/tmp/talaria-rl-trap-ran", "w").write("ran")
)py";

class FakeWandb {
 public:
  FakeWandb()
      : server_([this](httplib::Server& s) {
          s.Post("/graphql", [this](const httplib::Request& req, httplib::Response& res) {
            std::lock_guard lock(mu_);
            ++requests_;
            if (req.get_header_value("Authorization") != kWandbAuth) {
              res.status = 401;
              res.set_content(R"({"errors":[{"message":"user is not logged in"}]})",
                              "application/json");
              return;
            }
            const Json body = Json::parse(req.body, nullptr, false);
            const Json& vars = body["variables"];
            last_vars_ = vars;
            const bool shape = body["query"].get<std::string>().find("runs(filters: $filters") !=
                               std::string::npos;
            const Json filters = Json::parse(vars.value("filters", "{}"), nullptr, false);
            if (!shape || vars["entity"] != "test-entity" || !filters.contains("display_name")) {
              res.status = 400;
              res.set_content(R"({"errors":[{"message":"bad query"}]})", "application/json");
              return;
            }
            Json node = {{"name", "abc123"},
                         {"displayName", filters["display_name"]},
                         {"state", "running"},
                         {"summaryMetrics", R"({"_step": 42, "train/reward_mean": 0.61,
                                                 "train/loss": 0.12, "train/percent_correct": 0.7})"}};
            if (vars["withHistory"] == true) {
              node["history"] = {R"({"_step": 1, "train/loss": 0.9})",
                                 R"({"_step": 2, "train/loss": 0.5})", "not json"};
            }
            const Json edge = {{"node", node}};
            const Json answer = {
                {"data", {{"project", {{"runs", {{"edges", Json::array({edge})}}}}}}}};
            res.set_content(answer.dump(), "application/json");
          });
        }) {}
  std::string url() const { return server_.url(); }
  Json last_vars() {
    std::lock_guard lock(mu_);
    return last_vars_;
  }

 private:
  std::mutex mu_;
  int requests_ = 0;  // Guarded by mu_.
  Json last_vars_;    // Guarded by mu_.
  LoopbackHttpServer server_;
};

class RlToolsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RlState::ResetForTesting();
    ::setenv("TALARIA_HOME", home_.path().c_str(), 1);
    ::setenv("TINKER_API_KEY", "tinker-key", 1);
    ::setenv("WANDB_API_KEY", "wandb-key", 1);
    ::setenv("WANDB_ENTITY", "test-entity", 1);
    ::setenv("WANDB_BASE_URL", wandb_.url().c_str(), 1);
    ::setenv("OPENROUTER_API_KEY", "or-secret-key", 1);
    root_ = home_.path() + "/tinker-atropos";
    envs_ = root_ + "/tinker_atropos/environments";
    std::filesystem::create_directories(envs_);
    Write(root_ + "/fake_api.py", kFakeApi);
    Write(root_ + "/launch_training.py", kFakeTrainer);
    Write(envs_ + "/gsm_env.py", kGsmEnv);
    api_port_ = FreePort();
    inference_port_ = FreePort();
    WriteConfig("");
  }
  void TearDown() override {
    RlState::ResetForTesting();
    for (const char* v : {"TINKER_API_KEY", "WANDB_API_KEY", "WANDB_ENTITY", "WANDB_BASE_URL",
                          "OPENROUTER_API_KEY"}) {
      ::unsetenv(v);
    }
  }
  void WriteConfig(const std::string& extra) {
    Write(home_.path() + "/config.yaml",
          "rl:\n  root: " + root_ + "\n  python: python3\n  api_command: [python3, " + root_ +
              "/fake_api.py, '" + std::to_string(api_port_) +
              "']\n  api_url: http://127.0.0.1:" + std::to_string(api_port_) +
              "\n  inference_url: http://127.0.0.1:" + std::to_string(inference_port_) +
              "/v1\n  stop_grace: 2\n  startup_timeout: 30\n" + extra);
  }
  static Json Call(const std::string& tool, const Json& args = Json::object(), bool* ok = nullptr) {
    ToolContext ctx;
    ToolResult r;
    Json j = talaria::test_support::CallRegisteredTool(tool, args, ctx, &r);
    if (ok != nullptr) *ok = r.ok();
    return j;
  }
  // Waits (bounded) until the run's status is `want`, or another final one (then false).
  static bool WaitForStatus(const std::string& run_id, const std::string& want) {
    std::string status;
    WaitUntil(
        [&] {
          const Json runs = Call("rl_list_runs");  // held: the loop reads into it
          for (const Json& r : runs["runs"]) {
            if (r["run_id"] == run_id) status = r["status"].get<std::string>();
          }
          return status == want || status == "failed" || status == "completed" ||
                 status == "stopped";
        },
        std::chrono::seconds(30), std::chrono::milliseconds(20));
    EXPECT_EQ(status, want) << "run " << run_id;
    return status == want;
  }
  std::string StartSelected() {
    EXPECT_EQ(Call("rl_select_environment", {{"name", "gsm8k"}})["environment"], "gsm8k");
    Json started = Call("rl_start_training");
    EXPECT_EQ(started["status"], "starting") << started.dump();
    return started.value("run_id", "");
  }

  TempDir home_;
  FakeWandb wandb_;
  std::string root_;
  std::string envs_;
  int api_port_ = 0;
  int inference_port_ = 0;
};

TEST_F(RlToolsTest, UnavailableWithoutTheKeysAndSaysWhichIsMissing) {
  ::unsetenv("WANDB_API_KEY");
  for (const char* tool :
       {"rl_list_environments", "rl_select_environment", "rl_get_current_config", "rl_edit_config",
        "rl_start_training", "rl_check_status", "rl_stop_training", "rl_get_results",
        "rl_list_runs", "rl_test_inference"}) {
    auto entry = Registry::Global().GetEntry(tool);
    ASSERT_NE(entry, nullptr) << tool;
    EXPECT_EQ(entry->toolset(), "rl");
    Availability a = Registry::Global().CheckAvailability(*entry);
    EXPECT_FALSE(a.available) << tool;
    EXPECT_EQ(a.reason, "environment variable WANDB_API_KEY is not set");
  }
  ::setenv("WANDB_API_KEY", "wandb-key", 1);
  EXPECT_TRUE(Registry::Global().CheckAvailability("rl_list_runs").available);
}

TEST_F(RlToolsTest, DiscoversEnvironmentsBySyntaxTreeWithoutRunningThem) {
  ::unlink("/tmp/talaria-rl-trap-ran");
  Write(envs_ + "/trap_env.py", kTrapEnv);
  Write(envs_ + "/_private.py", "class Hidden(BaseEnv):\n    name = 'hidden'\n");
  Write(envs_ + "/broken.py", "class Broken(BaseEnv:\n");
  Write(envs_ + "/plain.py", "class NotAnEnv(object):\n    name = 'nope'\n");
  Write(envs_ + "/notes.txt", "class Txt(BaseEnv): pass\n");
  Json r = Call("rl_list_environments");
  ASSERT_EQ(r["count"], 2) << r.dump();
  const Json& gsm = r["environments"][0];
  EXPECT_EQ(gsm["name"], "gsm8k");
  EXPECT_EQ(gsm["class_name"], "GsmEnv");
  EXPECT_EQ(gsm["file_path"], envs_ + "/gsm_env.py");
  EXPECT_EQ(gsm["description"], "Grade-school math word problems.");
  const Json& trap = r["environments"][1];
  EXPECT_EQ(trap["name"], "trap_env");  // no name attribute: the file's stem
  EXPECT_EQ(trap["description"], "Environment from trap_env.py");
  ASSERT_EQ(r["skipped"].size(), 1U);
  EXPECT_EQ(r["skipped"][0].get<std::string>().rfind("broken.py: SyntaxError", 0), 0U)
      << r["skipped"].dump();
  EXPECT_EQ(r["tips"].size(), 3U);
  EXPECT_NE(::access("/tmp/talaria-rl-trap-ran", F_OK), 0);
}

TEST_F(RlToolsTest, AMissingEnvironmentsDirectoryNamesTheSetting) {
  std::filesystem::remove_all(envs_);
  bool ok = true;
  Json r = Call("rl_list_environments", Json::object(), &ok);
  EXPECT_FALSE(ok);
  EXPECT_NE(r["error"].get<std::string>().find("rl.root"), std::string::npos) << r.dump();
}

TEST_F(RlToolsTest, ConfigShowsEditableAndLockedFieldsAndRefusesLockedEdits) {
  bool ok = true;
  Json none = Call("rl_get_current_config", Json::object(), &ok);
  EXPECT_FALSE(ok);
  EXPECT_EQ(none["error"], "No environment selected. Use rl_select_environment(name) first.");
  Json missing = Call("rl_select_environment", {{"name", "nope"}});
  EXPECT_EQ(missing["error"], "Environment 'nope' not found");
  EXPECT_EQ(missing["available"], Json::array({"gsm8k"}));

  Json selected = Call("rl_select_environment", {{"name", "gsm8k"}});
  EXPECT_EQ(selected["message"], "Selected environment: gsm8k");
  Json config = Call("rl_get_current_config");
  Json editable = Json::object();
  for (const Json& f : config["configurable_fields"]) editable[f["name"].get<std::string>()] = f;
  Json locked = Json::object();
  for (const Json& f : config["locked_fields"]) locked[f["name"].get<std::string>()] = f;
  // The environment's own config class overrides the base default and adds its fields.
  EXPECT_EQ(editable["group_size"]["default"], 16);
  EXPECT_EQ(editable["group_size"]["description"], "Completions per question");
  EXPECT_EQ(editable["dataset"]["current_value"], "gsm8k-train");
  EXPECT_EQ(editable["wandb_name"]["current_value"].get<std::string>().rfind("gsm8k-", 0), 0U);
  EXPECT_EQ(locked["tokenizer_name"]["locked_value"], "Qwen/Qwen3-8B");
  EXPECT_EQ(locked["total_steps"]["locked_value"], 2500);
  EXPECT_EQ(locked["rollout_server_url"]["locked_value"],
            "http://127.0.0.1:" + std::to_string(api_port_));
  EXPECT_FALSE(editable.contains("max_token_length"));

  Json refused = Call("rl_edit_config", {{"field", "max_token_length"}, {"value", 99999}}, &ok);
  EXPECT_FALSE(ok);
  EXPECT_EQ(refused["error"], "Field 'max_token_length' is locked and cannot be changed");
  EXPECT_EQ(refused["locked_value"], 8192);
  Json unknown = Call("rl_edit_config", {{"field", "lora_rank"}, {"value", 64}});
  EXPECT_EQ(unknown["error"], "Unknown field 'lora_rank'");
  Json edited = Call("rl_edit_config", {{"field", "group_size"}, {"value", 32}});
  EXPECT_EQ(edited["message"], "Updated group_size = 32");
  EXPECT_EQ(edited["config"]["group_size"], 32);
}

TEST_F(RlToolsTest, ARunStartsItsProcessesInOrderReportsMetricsAndStops) {
  ASSERT_EQ(Call("rl_select_environment", {{"name", "gsm8k"}})["environment"], "gsm8k");
  Call("rl_edit_config", {{"field", "group_size"}, {"value", 32}});
  Json started = Call("rl_start_training");
  const std::string run_id = started.value("run_id", "");
  ASSERT_EQ(run_id.size(), 8U) << started.dump();
  EXPECT_EQ(started["wandb_run_name"], "gsm8k-" + run_id);
  EXPECT_EQ(started["wandb_project"], "atropos-tinker");
  ASSERT_TRUE(WaitForStatus(run_id, "running")) << Call("rl_list_runs").dump();

  // The trainer read the config talaria wrote: locked settings plus the edited field.
  const Json seen = Json::parse(Read(root_ + "/config_seen.json"));
  EXPECT_EQ(seen["env"]["group_size"], 32);
  EXPECT_EQ(seen["env"]["tokenizer_name"], "Qwen/Qwen3-8B");
  EXPECT_EQ(seen["tinker"]["lora_rank"], 32);
  EXPECT_EQ(seen["tinker"]["wandb_run_name"], "gsm8k-" + run_id);
  EXPECT_EQ(seen["openai"][0]["server_type"], "sglang");

  Json status = Call("rl_check_status", {{"run_id", run_id}});
  EXPECT_EQ(status["status"], "running") << status.dump();
  EXPECT_EQ(status["processes"],
            Json({{"api", "running"}, {"trainer", "running"}, {"env", "running"}}));
  EXPECT_EQ(status["metrics"]["step"], 42);
  EXPECT_EQ(status["metrics"]["reward_mean"], 0.61);
  EXPECT_EQ(status["metrics"]["loss"], 0.12);
  EXPECT_EQ(status["metrics"]["state"], "running");
  EXPECT_EQ(status["wandb_url"], wandb_.url() + "/test-entity/atropos-tinker/runs/abc123");
  EXPECT_EQ(Json::parse(wandb_.last_vars()["filters"].get<std::string>()),
            Json({{"display_name", "gsm8k-" + run_id}}));

  // A second look within the interval is refused with the time left.
  Json again = Call("rl_check_status", {{"run_id", run_id}});
  EXPECT_EQ(again["rate_limited"], true);
  EXPECT_GT(again["next_check_in_seconds"].get<double>(), 1700);

  Json results = Call("rl_get_results", {{"run_id", run_id}});
  EXPECT_EQ(results["final_metrics"]["train/percent_correct"], 0.7);
  ASSERT_EQ(results["history"].size(), 2U);  // the row that is not JSON is dropped
  EXPECT_EQ(results["history"][1]["train/loss"], 0.5);

  // The environment is started last and may still be starting Python: let it say it serves.
  const std::string env_log = home_.path() + "/logs/rl_training/env_" + run_id + ".log";
  EXPECT_TRUE(WaitUntil([&] { return Read(env_log).find("env serving") != std::string::npos; },
                        std::chrono::seconds(20), std::chrono::milliseconds(10)));
  Json stopped = Call("rl_stop_training", {{"run_id", run_id}});
  EXPECT_EQ(stopped["status"], "stopped") << stopped.dump();
  EXPECT_FALSE(PortAccepts("127.0.0.1", api_port_, std::chrono::milliseconds(200)));
  EXPECT_FALSE(PortAccepts("127.0.0.1", inference_port_, std::chrono::milliseconds(200)));
  EXPECT_NE(Read(home_.path() + "/logs/rl_training/api_" + run_id + ".log").find("listening"),
            std::string::npos);
  Json not_running = Call("rl_stop_training", {{"run_id", run_id}});
  EXPECT_EQ(not_running["message"], "Run '" + run_id + "' is not running (status: stopped)");
}

TEST_F(RlToolsTest, ATrainerThatExitsFailsTheRunNamingItsLog) {
  Write(root_ + "/trainer_fails", "");
  const std::string run_id = StartSelected();
  ASSERT_TRUE(WaitForStatus(run_id, "failed"));
  Json status = Call("rl_check_status", {{"run_id", run_id}});
  const std::string log = home_.path() + "/logs/rl_training/trainer_" + run_id + ".log";
  EXPECT_EQ(status["error"], "Trainer exited with code 3. Check " + log);
  EXPECT_EQ(status["processes"]["api"].get<std::string>().rfind("exited", 0), 0U);
  EXPECT_EQ(status["processes"]["env"], "not started");
  EXPECT_NE(Read(log).find("no GPU quota"), std::string::npos);
  EXPECT_FALSE(PortAccepts("127.0.0.1", api_port_, std::chrono::milliseconds(200)));
}

TEST_F(RlToolsTest, AnEnvironmentThatFinishesCompletesTheRun) {
  const std::string run_id = StartSelected();
  ASSERT_TRUE(WaitForStatus(run_id, "running"));
  Write(root_ + "/finish", "");
  ASSERT_TRUE(WaitForStatus(run_id, "completed"));
  EXPECT_FALSE(PortAccepts("127.0.0.1", inference_port_,
                           std::chrono::milliseconds(200)));  // the rest was stopped
}

TEST_F(RlToolsTest, AServerThatNeverListensTimesOutAndIsKilled) {
  Write(root_ + "/silent.py", "import time\nprint('pid', flush=True)\ntime.sleep(60)\n");
  Write(home_.path() + "/config.yaml",
        "rl:\n  root: " + root_ + "\n  api_command: [python3, " + root_ +
            "/silent.py]\n  api_url: http://127.0.0.1:" + std::to_string(api_port_) +
            "\n  startup_timeout: 1\n  stop_grace: 1\n");
  const std::string run_id = StartSelected();
  ASSERT_TRUE(WaitForStatus(run_id, "failed"));
  Json status = Call("rl_check_status", {{"run_id", run_id}});
  EXPECT_NE(status["error"].get<std::string>().find("API server did not accept connections on "
                                                    "127.0.0.1:" +
                                                    std::to_string(api_port_) + " within 1 s"),
            std::string::npos)
      << status.dump();
  EXPECT_EQ(status["processes"]["api"].get<std::string>().rfind("exited", 0), 0U);
}

TEST_F(RlToolsTest, UnknownRunsAreErrorsListingTheRuns) {
  bool ok = true;
  Json r = Call("rl_check_status", {{"run_id", "nope"}}, &ok);
  EXPECT_FALSE(ok);
  EXPECT_EQ(r["error"], "Run 'nope' not found");
  EXPECT_EQ(r["active_runs"], Json::array());
  EXPECT_EQ(Call("rl_stop_training", {{"run_id", "nope"}})["error"], "Run 'nope' not found");
  EXPECT_EQ(Call("rl_get_results", {{"run_id", "nope"}})["error"], "Run 'nope' not found");
  EXPECT_EQ(Call("rl_list_runs")["count"], 0);
  EXPECT_EQ(Call("rl_start_training")["error"],
            "No environment selected. Use rl_select_environment(name) first.");
}

TEST_F(RlToolsTest, TestInferenceRunsEachModelAndScoresItsGroups) {
  ASSERT_EQ(Call("rl_select_environment", {{"name", "gsm8k"}})["environment"], "gsm8k");
  Json r = Call("rl_test_inference",
                {{"num_steps", 2}, {"group_size", 4}, {"models", {"custom/good", "bad/model"}}});
  ASSERT_EQ(r["models_tested"].size(), 2U) << r.dump();
  const Json& good = r["models_tested"][0];
  EXPECT_EQ(good["scale"], "custom");
  EXPECT_EQ(good["steps_tested"], 2);
  EXPECT_EQ(good["total_completions"], 8);
  EXPECT_EQ(good["correct_completions"], 3);  // step 0: 1 of 4, step 1: 2 of 4
  EXPECT_EQ(good["accuracy"], 0.375);
  EXPECT_EQ(good["step_success_rate"], 1.0);
  const Json& bad = r["models_tested"][1];
  EXPECT_EQ(bad["error"], "Process exited with code 3");
  EXPECT_NE(bad["stderr"].get<std::string>().find("model not found"), std::string::npos);
  EXPECT_EQ(r["summary"]["models_succeeded"], 1);
  EXPECT_EQ(r["summary"]["best_model"], "custom/good");
  EXPECT_EQ(r["summary"]["environment_working"], true);
  EXPECT_EQ(r["test_config"]["total_rollouts"], 16);

  const Json args = Json::parse(Read(root_ + "/process_args_custom_good.json"));
  EXPECT_EQ(args["--openai.api_key"], "or-secret-key");
  EXPECT_EQ(args["--openai.base_url"], "https://openrouter.ai/api/v1");
  EXPECT_EQ(args["--env.tokenizer_name"], "Qwen/Qwen3-8B");
  EXPECT_EQ(args["--env.max_token_length"], "8192");
  // The key is on the child's command line (Atropos' CLI reads it there), never in the logs.
  EXPECT_EQ(Read(bad.value("log_file", "")).find("or-secret-key"), std::string::npos);

  ::unsetenv("OPENROUTER_API_KEY");
  EXPECT_EQ(Call("rl_test_inference")["error"],
            "OPENROUTER_API_KEY not set. Required for inference testing.");
}

}  // namespace
}  // namespace talaria::rl
