// mixture_of_agents against the scripted server (one endpoint, several models: each turn is
// routed by the request's model) and, through an agent, the usage charged to the session.
#include "agent/mixture_of_agents.h"

#include <gtest/gtest.h>

#include <fstream>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/agent_test_util.h"
#include "talaria/core/registry.h"
#include "talaria/core/runtime.h"

namespace talaria::agent::testing {
namespace {

using Json = nlohmann::ordered_json;

class MixtureOfAgents : public AgentFixture {
 protected:
  // config.yaml with a moa: section pointing at the scripted server.
  void ConfigureMoa(const std::string& extra = "") {
    std::ofstream(home_ / "config.yaml")
        << "terminal:\n  backend: local\n"
        << "moa:\n  base_url: " << server_->base_url() << "\n"
        << "  max_retries: 0\n"
        << "  reference_models: [ref-one, {name: ref-two, temperature: 0.6}, "
           "{name: ref-three, max_tokens: 500}]\n"
        << "  aggregator: {name: agg, temperature: 0.4}\n"
        << "  pricing: {input: 1, output: 2}\n"
        << extra;
    Registry::Global().InvalidateAvailabilityCache();
  }
  Result<Config> LoadedConfig() const { return LoadConfig(home_ / "config.yaml"); }
  // A Runtime on the global registry reads config.yaml: the process's config from then on.
  void LoadProcessConfig() {
    RuntimeOptions options;
    options.config_path = home_ / "config.yaml";
    auto rt = Runtime::Create(options);
    ASSERT_TRUE(rt.has_value()) << rt.error().message();
    runtimes_.push_back(std::move(*rt));
  }

  std::vector<std::unique_ptr<Runtime>> runtimes_;
};

constexpr std::string_view kThreeModels = R"({"turns": [
    {"match": {"model": "ref-one"}, "expect": {"last_content_contains": "PROBLEM"},
     "text": "answer one", "usage": {"prompt_tokens": 10, "completion_tokens": 5}},
    {"match": {"model": "ref-two"}, "fault": {"kind": "500", "message": "ref-two is down"}},
    {"match": {"model": "ref-three"}, "text": "answer three",
     "usage": {"prompt_tokens": 10, "completion_tokens": 5}},
    {"match": {"model": "agg"},
     "expect": {"system_contains": "Responses from models:\n1. answer one\n2. answer three",
                "last_content_contains": "PROBLEM"},
     "text": "the synthesis", "usage": {"prompt_tokens": 30, "completion_tokens": 7}},
    {"match": {"model": "fake-model", "last_role": "tool"}, "text": "Done."}]})";

// Every model answers (turns without the braces of a script, to combine with others).
constexpr std::string_view kEveryModelAnswers = R"(
    {"match": {"model": "ref-one"}, "text": "answer one"},
    {"match": {"model": "ref-two"}, "text": "answer two"},
    {"match": {"model": "ref-three"}, "text": "answer three"},
    {"match": {"model": "agg"}, "text": "the synthesis"})";

// A script of these turns, in this order.
std::string MoaScript(std::initializer_list<std::string_view> parts) {
  std::string turns;
  for (std::string_view part : parts) {
    if (!turns.empty()) turns += ",";
    turns += part;
  }
  return R"({"turns": [)" + turns + "]}";
}

TEST_F(MixtureOfAgents, ThreeReferencesOneFailingThenTheAggregator) {
  Serve(kThreeModels);
  ConfigureMoa();
  auto config = LoadedConfig();
  ASSERT_TRUE(config.has_value()) << config.error().message();
  auto settings = MoaSettingsFromConfig(*config);
  ASSERT_TRUE(settings.has_value()) << settings.error().message();
  ASSERT_TRUE(settings->has_value());
  ASSERT_EQ((*settings)->references.size(), 3u);
  EXPECT_EQ((*settings)->references[1].temperature, 0.6);
  EXPECT_EQ((*settings)->references[2].max_tokens, 500);

  MoaOutcome out = RunMixture(**settings, "PROBLEM: prove it", {});
  EXPECT_EQ(out.result["success"], true) << out.result.dump();
  EXPECT_EQ(out.result["response"], "the synthesis");
  EXPECT_EQ(out.result["models_used"]["aggregator_model"], "agg");
  EXPECT_EQ(out.result["models_used"]["reference_models"].size(), 3u);
  ASSERT_EQ(out.result["failed_models"].size(), 1u);
  EXPECT_EQ(out.result["failed_models"][0]["model"], "ref-two");
  EXPECT_EQ(out.usage.input_tokens, 50);
  EXPECT_EQ(out.usage.output_tokens, 17);
  EXPECT_EQ(server_->ProblemsText(), "");
  // The reference models' requests carry their own settings.
  for (const auto& r : server_->requests()) {
    const auto body = r.Json();
    if (body["model"] == "ref-two") {
      EXPECT_EQ(body["temperature"], 0.6);
    }
    if (body["model"] == "agg") {
      EXPECT_EQ(body["temperature"], 0.4);
    }
  }
}

TEST_F(MixtureOfAgents, WithNoReferenceAnswerItFailsWithTheReferenceShape) {
  Serve(R"({"turns": [
      {"match": {"model": "ref-one"}, "fault": {"kind": "500"}},
      {"match": {"model": "ref-two"}, "fault": {"kind": "401"}},
      {"match": {"model": "ref-three"}, "text": ""}]})");
  ConfigureMoa();
  auto settings = MoaSettingsFromConfig(*LoadedConfig());
  ASSERT_TRUE(settings.has_value() && settings->has_value());
  MoaOutcome out = RunMixture(**settings, "PROBLEM", {});
  EXPECT_EQ(out.result["success"], false);
  EXPECT_EQ(out.result["response"],
            "MoA processing failed. Please try again or use a single model for this query.");
  EXPECT_NE(out.result["error"].get<std::string>().find("0 of 3"), std::string::npos)
      << out.result.dump();
  for (const auto& r : server_->requests()) EXPECT_NE(r.Json()["model"], "agg");
}

TEST_F(MixtureOfAgents, ASlowReferenceModelIsCutOffAtItsTimeout) {
  Serve(R"({"turns": [
      {"match": {"model": "ref-one"}, "text": "answer one"},
      {"match": {"model": "ref-two"}, "text": "too late", "fault": {"kind": "stall", "ms": 60000}},
      {"match": {"model": "ref-three"}, "text": "answer three"},
      {"match": {"model": "agg"}, "expect": {"system_contains": "2. answer three"},
       "text": "combined"}]})");
  ConfigureMoa("  reference_timeout_seconds: 0.5\n");
  auto settings = MoaSettingsFromConfig(*LoadedConfig());
  ASSERT_TRUE(settings.has_value() && settings->has_value());
  MoaOutcome out = RunMixture(**settings, "PROBLEM", {});
  EXPECT_EQ(out.result["success"], true) << out.result.dump();
  EXPECT_EQ(out.result["response"], "combined");
  ASSERT_EQ(out.result["failed_models"].size(), 1u);
  EXPECT_EQ(out.result["failed_models"][0]["model"], "ref-two");
  EXPECT_EQ(server_->ProblemsText(), "");
}

// Availability follows the config the process loaded (its Runtime's), not config.yaml as it is
// on disk when the registry asks.
TEST_F(MixtureOfAgents, TheToolNeedsAConfiguredEndpointAndItsKey) {
  Serve(R"({"turns": []})");
  auto available = [] {
    Registry::Global().InvalidateAvailabilityCache();
    return Registry::Global().CheckAvailability("mixture_of_agents");
  };
  LoadProcessConfig();
  EXPECT_FALSE(available().available) << "no moa: section";
  ConfigureMoa();
  EXPECT_FALSE(available().available) << "the section is on disk, not in the loaded config";
  LoadProcessConfig();
  EXPECT_TRUE(available().available) << available().reason;
  std::ofstream(home_ / "config.yaml") << "terminal:\n  backend: local\n";
  EXPECT_TRUE(available().available) << "the section went from disk, not from the loaded config";

  ConfigureMoa("  api_key_env: TALARIA_TEST_MOA_KEY_UNSET\n");
  ::unsetenv("TALARIA_TEST_MOA_KEY_UNSET");
  LoadProcessConfig();
  const Availability without_key = available();
  EXPECT_FALSE(without_key.available) << "its key variable is not set";
  EXPECT_NE(without_key.reason.find("TALARIA_TEST_MOA_KEY_UNSET"), std::string::npos)
      << without_key.reason;
  auto missing = MoaSettingsFromConfig(*LoadedConfig());
  ASSERT_FALSE(missing.has_value());
  EXPECT_NE(missing.error().message().find("TALARIA_TEST_MOA_KEY_UNSET"), std::string::npos);
  ConfigureMoa();
  LoadProcessConfig();
  EXPECT_TRUE(available().available);
  std::ofstream(home_ / "config.yaml") << "moa:\n  reference_models: [a]\n  colour: red\n";
  auto bad = MoaSettingsFromConfig(*LoadedConfig());
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message().find("moa.colour"), std::string::npos);
  Registry::Global().InvalidateAvailabilityCache();
}

TEST_F(MixtureOfAgents, AnAgentsCallIsChargedToItsSession) {
  std::string script(kThreeModels);
  script.replace(script.find(R"({"turns": [)"), 11,
                 R"({"turns": [
    {"match": {"model": "fake-model", "last_role": "user"},
     "tool_calls": [{"id": "m1", "name": "mixture_of_agents",
                     "arguments": {"user_prompt": "PROBLEM: hard"}}],
     "usage": {"prompt_tokens": 1000, "completion_tokens": 20}},)");
  Serve(script);
  ConfigureMoa();
  AgentOptions options = Options();
  options.toolsets = {"file", "moa"};
  Open(options);
  TurnResult r = Turn("think hard");
  EXPECT_EQ(r.exit, TurnExit::kAnswered) << r.error;
  EXPECT_EQ(r.text, "Done.");
  EXPECT_EQ(server_->ProblemsText(), "");
  std::string tool_text;
  for (const auto& m : History()) {
    if (m.role == "tool") tool_text = m.content;
  }
  auto result = Json::parse(tool_text, nullptr, false);
  ASSERT_FALSE(result.is_discarded()) << tool_text;
  EXPECT_EQ(result["response"], "the synthesis");
  // 50 input tokens of the mixture on top of the parent's own.
  const int64_t parent_own = r.usage.input_tokens;  // the turn's own requests only
  EXPECT_EQ(agent_->SessionUsage().input_tokens, parent_own + 50);
  auto row = store_->GetSession(agent_->session_id());
  ASSERT_TRUE(row.has_value() && row->has_value());
  EXPECT_EQ((*row)->totals.input_tokens, parent_own + 50);
  Registry::Global().InvalidateAvailabilityCache();
}

// The reference asks every model for its highest reasoning effort ("xhigh"); a model's own
// setting wins, and "none" leaves the field out.
TEST_F(MixtureOfAgents, EveryRequestCarriesTheReasoningEffortTheConfigNames) {
  Serve(MoaScript({kEveryModelAnswers}));
  ConfigureMoa();
  auto settings = MoaSettingsFromConfig(*LoadedConfig());
  ASSERT_TRUE(settings.has_value() && settings->has_value());
  EXPECT_EQ((*settings)->reasoning_effort, "xhigh") << "the reference's default";
  (*settings)->references[1].reasoning_effort = "low";
  (*settings)->references[2].reasoning_effort = "";
  MoaOutcome out = RunMixture(**settings, "PROBLEM", {});
  ASSERT_EQ(out.result["success"], true) << out.result.dump();
  int seen = 0;
  for (const auto& r : server_->requests()) {
    const auto body = r.Json();
    const std::string model = body["model"];
    ++seen;
    if (model == "ref-one" || model == "agg") {
      EXPECT_EQ(body["reasoning"], Json::parse(R"({"enabled": true, "effort": "xhigh"})")) << model;
    } else if (model == "ref-two") {
      EXPECT_EQ(body["reasoning"]["effort"], "low");
    } else {
      EXPECT_FALSE(body.contains("reasoning")) << model;
    }
  }
  EXPECT_EQ(seen, 4);

  std::ofstream(home_ / "config.yaml")
      << "moa:\n  reference_models: [{name: a, reasoning_effort: none}]\n"
      << "  aggregator: b\n  reasoning_effort: medium\n";
  auto read = MoaSettingsFromConfig(*LoadedConfig());
  ASSERT_TRUE(read.has_value() && read->has_value()) << read.error().message();
  EXPECT_EQ((*read)->reasoning_effort, "medium");
  EXPECT_EQ((*read)->references[0].reasoning_effort, "");
  EXPECT_FALSE((*read)->aggregator.reasoning_effort.has_value());
  std::ofstream(home_ / "config.yaml")
      << "moa:\n  reference_models: [a]\n  aggregator: b\n  reasoning_effort: maximal\n";
  auto bad = MoaSettingsFromConfig(*LoadedConfig());
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message().find("moa.reasoning_effort"), std::string::npos);
}

// The session reads its moa: section once: an edit to config.yaml mid-session changes nothing
// until the next session (the second call would ask "other-agg", which nothing answers).
TEST_F(MixtureOfAgents, ASessionReadsTheSectionOnceNotOnEveryCall) {
  constexpr std::string_view kCall = R"(
    {"match": {"model": "fake-model", "last_role": "user"},
     "tool_calls": [{"id": "ID", "name": "mixture_of_agents",
                     "arguments": {"user_prompt": "PROBLEM"}}]})";
  constexpr std::string_view kDone = R"(
    {"match": {"model": "fake-model", "last_role": "tool"}, "text": "Done."})";
  std::string first(kCall);
  first.replace(first.find("ID"), 2, "m1");
  std::string second(kCall);
  second.replace(second.find("ID"), 2, "m2");
  Serve(MoaScript({first, kEveryModelAnswers, kDone, second, kEveryModelAnswers, kDone}));
  ConfigureMoa();
  AgentOptions options = Options();
  options.toolsets = {"file", "moa"};
  Open(options);
  ASSERT_EQ(Turn("think hard").exit, TurnExit::kAnswered);
  std::ofstream(home_ / "config.yaml")
      << "terminal:\n  backend: local\n"
      << "moa:\n  base_url: " << server_->base_url() << "\n  max_retries: 0\n"
      << "  reference_models: [ref-one]\n  aggregator: other-agg\n";
  ASSERT_EQ(Turn("once more").exit, TurnExit::kAnswered);
  std::vector<std::string> answers;
  for (const auto& m : History()) {
    if (m.role != "tool") continue;
    auto result = Json::parse(m.content, nullptr, false);
    ASSERT_FALSE(result.is_discarded()) << m.content;
    answers.push_back(result.value("response", ""));
  }
  EXPECT_EQ(answers, (std::vector<std::string>{"the synthesis", "the synthesis"}));
  for (const auto& r : server_->requests()) EXPECT_NE(r.Json()["model"], "other-agg");
  EXPECT_EQ(server_->ProblemsText(), "");
  Registry::Global().InvalidateAvailabilityCache();
}

// A call with no session behind it (`talaria mcp`, `talaria call`) uses the config the process
// loaded, read once: an edit to config.yaml between two calls changes nothing.
TEST_F(MixtureOfAgents, ACallWithNoSessionUsesTheProcesssConfig) {
  Serve(MoaScript({kEveryModelAnswers, kEveryModelAnswers}));
  ConfigureMoa();
  LoadProcessConfig();
  Runtime& rt = *runtimes_.back();
  ToolContext first;
  ToolResult r1 =
      rt.dispatcher().Dispatch("mixture_of_agents", R"({"user_prompt": "PROBLEM"})", first);
  ASSERT_EQ(r1.status, CallStatus::kOk) << r1.text;
  EXPECT_EQ(Json::parse(r1.text)["response"], "the synthesis") << r1.text;
  std::ofstream(home_ / "config.yaml")
      << "terminal:\n  backend: local\n"
      << "moa:\n  base_url: " << server_->base_url() << "\n  max_retries: 0\n"
      << "  reference_models: [ref-one]\n  aggregator: other-agg\n";
  ToolContext second;
  ToolResult r2 =
      rt.dispatcher().Dispatch("mixture_of_agents", R"({"user_prompt": "PROBLEM"})", second);
  ASSERT_EQ(r2.status, CallStatus::kOk) << r2.text;
  EXPECT_EQ(Json::parse(r2.text)["response"], "the synthesis") << r2.text;
  for (const auto& r : server_->requests()) EXPECT_NE(r.Json()["model"], "other-agg");
  EXPECT_EQ(server_->requests().size(), 8u);
  EXPECT_EQ(server_->ProblemsText(), "");
  Registry::Global().InvalidateAvailabilityCache();
}

// As the reference: each reference model is asked for up to 32,000 tokens unless its entry
// says otherwise; the aggregator's limit is left to the endpoint (none sent).
TEST_F(MixtureOfAgents, ReferenceModelsAskForUpTo32000Tokens) {
  Serve(MoaScript({kEveryModelAnswers}));
  ConfigureMoa();
  auto settings = MoaSettingsFromConfig(*LoadedConfig());
  ASSERT_TRUE(settings.has_value() && settings->has_value());
  MoaOutcome out = RunMixture(**settings, "PROBLEM", {});
  ASSERT_EQ(out.result["success"], true) << out.result.dump();
  std::map<std::string, Json> limits;
  for (const auto& r : server_->requests()) {
    const auto body = r.Json();
    limits[body["model"].get<std::string>()] =
        body.contains("max_tokens") ? body["max_tokens"] : Json();
  }
  EXPECT_EQ(limits["ref-one"], 32000);
  EXPECT_EQ(limits["ref-two"], 32000);
  EXPECT_EQ(limits["ref-three"], 500) << "its own max_tokens";
  ASSERT_EQ(limits.count("agg"), 1u);
  EXPECT_TRUE(limits["agg"].is_null()) << limits["agg"].dump();
  EXPECT_EQ(server_->ProblemsText(), "");
}

}  // namespace
}  // namespace talaria::agent::testing
