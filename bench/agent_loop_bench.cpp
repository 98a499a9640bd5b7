// The agent loop's own cost (issue 20): turns against the scripted OpenAI-compatible server on
// loopback at zero latency, with the real session store (SQLite in a temp dir) and a tool whose
// handler returns at once. The time inside ModelClient::Complete (HTTP, SSE parsing) and inside
// the tool handler is measured and taken out; what is left is the loop: call hygiene, the
// guard, the batch and the dispatcher, committing every message, events.
//
//   METRIC agent_loop_turn_8calls_ms  a turn of one 8-call response and the final answer
//   METRIC agent_loop_call_us         the marginal cost of one more call in a response
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench_util.h"
#include "support/fake_llm_server.h"
#include "support/temp_dir.h"
#include "talaria/agent/agent.h"
#include "talaria/core/registry.h"
#include "talaria/store/session_store.h"

namespace {

using Clock = std::chrono::steady_clock;
using talaria::agent::Agent;

std::atomic<int64_t> g_tool_ns{0};

// The time the loop waits for the model, kept apart from the loop's own.
class TimedClient final : public talaria::agent::ModelClient {
 public:
  explicit TimedClient(std::unique_ptr<ModelClient> inner) : inner_(std::move(inner)) {}
  talaria::Result<talaria::agent::ChatResponse> Complete(const talaria::agent::ChatRequest& request,
                                                         talaria::agent::StreamObserver* observer,
                                                         std::stop_token stop) override {
    const auto t0 = Clock::now();
    auto r = inner_->Complete(request, observer, stop);
    model_ns += std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count();
    return r;
  }
  int64_t model_ns = 0;

 private:
  std::unique_ptr<ModelClient> inner_;
};

// The session store, timed: committing a message is the store's cost (its own benchmark has
// the goal), reported apart so the loop's share is visible.
class TimedStore final : public talaria::store::SessionStore {
 public:
  explicit TimedStore(std::unique_ptr<SessionStore> inner) : inner_(std::move(inner)) {}
  using Row = talaria::store::SessionRow;
  talaria::Result<Row> CreateSession(const talaria::store::NewSession& s) override {
    return inner_->CreateSession(s);
  }
  talaria::Result<std::optional<Row>> GetSession(std::string_view id) override {
    return inner_->GetSession(id);
  }
  talaria::Result<std::vector<Row>> ListSessions(const talaria::store::ListOptions& o) override {
    return inner_->ListSessions(o);
  }
  talaria::Result<std::optional<Row>> LatestSession(std::string_view cwd) override {
    return inner_->LatestSession(cwd);
  }
  talaria::Status SetTitle(std::string_view id, std::string_view title) override {
    return inner_->SetTitle(id, title);
  }
  talaria::Status EndSession(std::string_view id, std::string_view reason) override {
    return inner_->EndSession(id, reason);
  }
  talaria::Status DeleteSession(std::string_view id) override { return inner_->DeleteSession(id); }
  talaria::Status AppendMessage(std::string_view id, talaria::store::StoredMessage& m) override {
    const auto t0 = Clock::now();
    auto s = inner_->AppendMessage(id, m);
    store_ns += std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count();
    ++appends;
    return s;
  }
  talaria::Status AppendMessages(std::string_view id,
                                 std::vector<talaria::store::StoredMessage>& m) override {
    const auto t0 = Clock::now();
    auto s = inner_->AppendMessages(id, m);
    store_ns += std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count();
    appends += static_cast<int64_t>(m.size());
    return s;
  }
  talaria::Result<talaria::store::TokenTotals> SumUsage(std::string_view cwd) override {
    return inner_->SumUsage(cwd);
  }
  talaria::Result<std::vector<talaria::store::StoredMessage>> LoadHistory(
      std::string_view id) override {
    return inner_->LoadHistory(id);
  }
  talaria::Result<std::vector<talaria::store::StoredMessage>> LoadTranscript(
      std::string_view id) override {
    return inner_->LoadTranscript(id);
  }
  talaria::Status AppendCompaction(
      std::string_view id, std::string_view summary,
      const std::vector<talaria::store::StoredMessage>& replacement) override {
    return inner_->AppendCompaction(id, summary, replacement);
  }
  talaria::Result<size_t> RepairInterrupted(std::string_view id) override {
    return inner_->RepairInterrupted(id);
  }
  talaria::Status PutState(std::string_view id, std::string_view key,
                           const talaria::Json& value) override {
    return inner_->PutState(id, key, value);
  }
  talaria::Result<std::optional<talaria::Json>> GetState(std::string_view id,
                                                         std::string_view key) override {
    return inner_->GetState(id, key);
  }
  talaria::Result<std::vector<talaria::store::SearchHit>> Search(
      std::string_view query, const talaria::store::SearchOptions& o) override {
    return inner_->Search(query, o);
  }
  int64_t store_ns = 0;
  int64_t appends = 0;

 private:
  std::unique_ptr<SessionStore> inner_;
};

void RegisterNoop() {
  talaria::ToolSpec spec;
  spec.name = "bench_noop";
  spec.toolset = "bench_loop";
  spec.schema = R"({"name": "bench_noop", "description": "Returns its argument.",
      "parameters": {"type": "object", "properties": {"n": {"type": "integer"}},
                     "required": ["n"]}})";
  spec.parallel = talaria::ParallelClass::kSafe;
  spec.handler = [](const talaria::Json& args, talaria::ToolContext&) {
    const auto t0 = Clock::now();
    auto r = talaria::ToolResult::Text("ok " + std::to_string(args.value("n", 0)));
    g_tool_ns += std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count();
    return r;
  };
  if (!talaria::Registry::Global().Register(std::move(spec)).ok()) std::abort();
}

// `turns` turns, each one response of `calls` calls then a final answer.
std::string Script(int turns, int calls) {
  nlohmann::ordered_json script = {{"turns", nlohmann::ordered_json::array()}};
  int n = 0;
  for (int t = 0; t < turns; ++t) {
    nlohmann::ordered_json round = {{"tool_calls", nlohmann::ordered_json::array()}};
    for (int c = 0; c < calls; ++c) {
      round["tool_calls"].push_back(
          {{"name", "bench_noop"}, {"arguments", {{"n", ++n}}}, {"id", "c" + std::to_string(n)}});
    }
    script["turns"].push_back(round);
    script["turns"].push_back({{"text", "done"}});
  }
  return script.dump();
}

struct TurnCost {
  double loop_ms = 0;           // everything but the model and the tool
  double loop_no_store_ms = 0;  // also without committing messages
  double store_us_per_message = 0;
};

// The loop's own time per turn (medians over `turns`).
TurnCost LoopMsPerTurn(int calls, int turns) {
  talaria::test_support::TempDir home;
  ::setenv("TALARIA_HOME", home.path().c_str(), 1);
  std::ofstream(home / "config.yaml") << "terminal:\n  backend: local\n";
  std::string error;
  auto server = talaria::test_support::FakeLlmServer::FromScript(Script(turns + 2, calls), &error);
  if (!server || !server->Start(&error)) {
    std::fprintf(stderr, "fake server: %s\n", error.c_str());
    std::abort();
  }
  auto store = talaria::store::SessionStore::Open(home / "sessions.db");
  if (!store) std::abort();
  talaria::agent::ModelSettings model;
  model.base_url = server->base_url();
  model.model = "fake-model";
  auto inner = talaria::agent::ModelClient::Open(model);
  if (!inner) std::abort();
  auto client = std::make_unique<TimedClient>(std::move(*inner));
  TimedClient* timed = client.get();
  talaria::agent::AgentOptions options;
  options.roots = {home.path()};
  options.toolsets = {"bench_loop"};
  options.config_path = home / "config.yaml";
  options.load_context_files = false;
  options.enable_code_execution = false;
  auto timed_store = std::make_shared<TimedStore>(std::move(*store));
  auto agent = Agent::Open(options, model, timed_store, std::move(client));
  if (!agent) {
    std::fprintf(stderr, "agent: %s\n", agent.error().message().c_str());
    std::abort();
  }
  std::vector<double> samples;
  std::vector<double> no_store;
  std::vector<double> per_message;
  for (int t = 0; t < turns + 2; ++t) {
    timed->model_ns = 0;
    g_tool_ns = 0;
    timed_store->store_ns = 0;
    timed_store->appends = 0;
    const auto t0 = Clock::now();
    auto r = (*agent)->RunTurn("go", nullptr, {});
    const int64_t total =
        std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count();
    if (r.exit != talaria::agent::TurnExit::kAnswered) {
      std::fprintf(stderr, "turn ended %d: %s\n", static_cast<int>(r.exit), r.error.c_str());
      std::abort();
    }
    if (t < 2) continue;  // warm-up: the first turns page in the code and the pool
    const int64_t loop = total - timed->model_ns - g_tool_ns;
    samples.push_back(static_cast<double>(loop) / 1e6);
    no_store.push_back(static_cast<double>(loop - timed_store->store_ns) / 1e6);
    per_message.push_back(static_cast<double>(timed_store->store_ns) / 1e3 /
                          static_cast<double>(std::max<int64_t>(timed_store->appends, 1)));
  }
  if (!server->ProblemsText().empty()) {
    std::fprintf(stderr, "server problems:\n%s", server->ProblemsText().c_str());
    std::abort();
  }
  return TurnCost{talaria_bench::Median(samples), talaria_bench::Median(no_store),
                  talaria_bench::Median(per_message)};
}

}  // namespace

int main() {
  RegisterNoop();
  const int turns = 60;
  const TurnCost one = LoopMsPerTurn(1, turns);
  const TurnCost eight = LoopMsPerTurn(8, turns);
  talaria_bench::PrintMetric("agent_loop_turn_1call_ms", one.loop_ms, "ms");
  talaria_bench::PrintMetric("agent_loop_turn_8calls_ms", eight.loop_ms, "ms");
  talaria_bench::PrintMetric("agent_loop_call_us", (eight.loop_ms - one.loop_ms) / 7 * 1000, "us");
  // The same without the store's commits (one per message: 11 in an 8-call turn).
  talaria_bench::PrintMetric("agent_loop_turn_8calls_without_store_ms", eight.loop_no_store_ms,
                             "ms");
  talaria_bench::PrintMetric("agent_loop_call_without_store_us",
                             (eight.loop_no_store_ms - one.loop_no_store_ms) / 7 * 1000, "us");
  talaria_bench::PrintMetric("agent_loop_store_append_us", eight.store_us_per_message, "us");
  return 0;
}
