// delegate_task's own cost per child (issue 21) at zero model latency: parent turns against the
// scripted server on loopback, with the real session store. A child is a whole agent loop
// (model client, tool session, a stored session, its system prompt, one model request, the
// result entry); what is measured is everything a delegation adds beyond the child's model
// request:
//
//   overhead = (delegating turn - the parent's model time) - (a turn with one no-op call - its
//              model time) - one child-like model request on a fresh client
//
//   METRIC delegate_overhead_ms         one child (single goal)
//   METRIC delegate_overhead_batch3_ms  per child, three at once
//   METRIC runtime_create_ms            what a Runtime per child would add (the option not taken:
//                                       children share the parent's runtime, calls routed by
//                                       session id)
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench_util.h"
#include "support/fake_llm_server.h"
#include "support/temp_dir.h"
#include "talaria/agent/agent.h"
#include "talaria/core/registry.h"
#include "talaria/core/runtime.h"
#include "talaria/store/session_store.h"
#include "talaria/tools/command_policy.h"

namespace {

using Clock = std::chrono::steady_clock;
using Json = nlohmann::ordered_json;

int64_t Since(Clock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count();
}

// The parent's model time, kept apart from the rest.
class TimedClient final : public talaria::agent::ModelClient {
 public:
  explicit TimedClient(std::unique_ptr<ModelClient> inner) : inner_(std::move(inner)) {}
  talaria::Result<talaria::agent::ChatResponse> Complete(const talaria::agent::ChatRequest& request,
                                                         talaria::agent::StreamObserver* observer,
                                                         std::stop_token stop) override {
    const auto t0 = Clock::now();
    auto r = inner_->Complete(request, observer, stop);
    model_ns += Since(t0);
    return r;
  }
  int64_t model_ns = 0;

 private:
  std::unique_ptr<ModelClient> inner_;
};

void RegisterNoop() {
  talaria::ToolSpec spec;
  spec.name = "bench_delegate_noop";
  spec.toolset = "bench_delegate";
  spec.schema = R"({"name": "bench_delegate_noop", "description": "Returns at once.",
      "parameters": {"type": "object", "properties": {}}})";
  spec.parallel = talaria::ParallelClass::kSafe;
  spec.handler = [](const talaria::Json&, talaria::ToolContext&) {
    return talaria::ToolResult::Text("ok");
  };
  if (!talaria::Registry::Global().Register(std::move(spec)).ok()) std::abort();
}

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "%s\n", what.c_str());
  std::abort();
}

struct Setup {
  talaria::test_support::TempDir home;
  std::unique_ptr<talaria::test_support::FakeLlmServer> server;
  std::shared_ptr<talaria::store::SessionStore> store;
  talaria::agent::ModelSettings model;
  talaria::agent::AgentOptions options;
};

void Start(Setup& s, const Json& script) {
  ::setenv("TALARIA_HOME", s.home.path().c_str(), 1);
  std::ofstream(s.home / "config.yaml") << "terminal:\n  backend: local\n";
  std::string error;
  s.server = talaria::test_support::FakeLlmServer::FromScript(script.dump(), &error);
  if (!s.server || !s.server->Start(&error)) Die("fake server: " + error);
  auto store = talaria::store::SessionStore::Open(s.home / "sessions.db");
  if (!store) Die("store: " + store.error().message());
  s.store = std::move(*store);
  s.model.base_url = s.server->base_url();
  s.model.model = "fake-model";
  s.options.roots = {s.home.path()};
  s.options.toolsets = {"bench_delegate", "file", "delegation"};
  s.options.config_path = s.home / "config.yaml";
  s.options.load_context_files = false;
  s.options.enable_code_execution = false;
}

// Median of the loop's own time per turn (total - the parent's model time), over `turns`
// turns whose first response calls `call` (a tool call JSON), after two warm-up turns.
double OwnMsPerTurn(const Json& call, int turns, int children_per_turn) {
  Json script = {{"turns", Json::array()}};
  // Each round's child turns come first: a child's request takes the earliest unused turn it
  // matches, so it never reaches a later round's parent turn.
  for (int t = 0; t < turns + 2; ++t) {
    for (int c = 0; c < children_per_turn; ++c) {
      script["turns"].push_back({{"match", {{"system_contains", "YOUR TASK"}}}, {"text", "done"}});
    }
    script["turns"].push_back(
        {{"match", {{"last_role", "user"}}}, {"tool_calls", Json::array({call})}});
    script["turns"].push_back({{"match", {{"last_role", "tool"}}}, {"text", "finished"}});
  }
  Setup s;
  Start(s, script);
  auto inner = talaria::agent::ModelClient::Open(s.model);
  if (!inner) Die("client");
  auto client = std::make_unique<TimedClient>(std::move(*inner));
  TimedClient* timed = client.get();
  auto agent = talaria::agent::Agent::Open(s.options, s.model, s.store, std::move(client));
  if (!agent) Die("agent: " + agent.error().message());
  std::vector<double> samples;
  for (int t = 0; t < turns + 2; ++t) {
    timed->model_ns = 0;
    const auto t0 = Clock::now();
    auto r = (*agent)->RunTurn("go", nullptr, {});
    const int64_t total = Since(t0);
    if (r.exit != talaria::agent::TurnExit::kAnswered || r.text != "finished") {
      Die("turn ended " + std::to_string(static_cast<int>(r.exit)) + ": " + r.error + r.text);
    }
    if (t >= 2) samples.push_back(static_cast<double>(total - timed->model_ns) / 1e6);
  }
  if (!s.server->ProblemsText().empty()) Die("server problems:\n" + s.server->ProblemsText());
  return talaria_bench::Median(samples);
}

// One model request like a child's first (its system prompt and tools) on a fresh client: the
// child's model time, which a delegation needs anyway.
double ChildRequestMs(int samples_wanted) {
  Setup s;
  Json script = {{"on_exhausted", {{"text", "done"}}}, {"turns", Json::array()}};
  Start(s, script);
  // The child's request shape: an agent over the same toolsets, minus delegation.
  talaria::agent::AgentOptions options = s.options;
  options.toolsets = {"file"};
  options.extra_system_prompt = std::string(600, 'x');
  std::vector<double> samples;
  for (int i = 0; i < samples_wanted + 2; ++i) {
    auto inner = talaria::agent::ModelClient::Open(s.model);
    if (!inner) Die("client");
    auto client = std::make_unique<TimedClient>(std::move(*inner));
    TimedClient* timed = client.get();
    auto agent = talaria::agent::Agent::Open(options, s.model, s.store, std::move(client));
    if (!agent) Die("agent: " + agent.error().message());
    (void)(*agent)->RunTurn("go", nullptr, {});
    if (i >= 2) samples.push_back(static_cast<double>(timed->model_ns) / 1e6);
  }
  return talaria_bench::Median(samples);
}

double RuntimeCreateMs(int samples_wanted) {
  talaria::test_support::TempDir home;
  std::ofstream(home / "config.yaml") << "terminal:\n  backend: local\n";
  std::vector<double> samples;
  for (int i = 0; i < samples_wanted + 2; ++i) {
    const auto t0 = Clock::now();
    talaria::RuntimeOptions options;
    options.config_path = home / "config.yaml";
    auto rt = talaria::Runtime::Create(options);
    if (!rt) Die("runtime: " + rt.error().message());
    if (!talaria::tools::InstallCommandPolicy((*rt)->dispatcher(), (*rt)->config(), nullptr).ok())
      Die("policy");
    const int64_t took = Since(t0);
    if (i >= 2) samples.push_back(static_cast<double>(took) / 1e6);
  }
  return talaria_bench::Median(samples);
}

}  // namespace

int main() {
  RegisterNoop();
  const int turns = 40;
  const Json noop = {{"name", "bench_delegate_noop"}, {"arguments", "{}"}};
  const Json one = {{"name", "delegate_task"},
                    {"arguments", Json{{"goal", "a small task"}, {"toolsets", {"file"}}}.dump()}};
  Json three_tasks = Json::array();
  for (int i = 0; i < 3; ++i) {
    three_tasks.push_back({{"goal", "task " + std::to_string(i)}, {"toolsets", {"file"}}});
  }
  const Json three = {{"name", "delegate_task"},
                      {"arguments", Json{{"tasks", three_tasks}}.dump()}};

  const double base = OwnMsPerTurn(noop, turns, 0);
  const double single = OwnMsPerTurn(one, turns, 1);
  const double batch = OwnMsPerTurn(three, turns, 3);
  const double child_request = ChildRequestMs(turns);
  talaria_bench::PrintMetric("delegate_child_request_ms", child_request, "ms");
  talaria_bench::PrintMetric("delegate_overhead_ms", single - base - child_request, "ms");
  // Three children at once: their requests overlap, so one request's time is taken out once.
  talaria_bench::PrintMetric("delegate_overhead_batch3_ms", (batch - base - child_request) / 3.0,
                             "ms");
  talaria_bench::PrintMetric("runtime_create_ms", RuntimeCreateMs(turns), "ms");
  return 0;
}
