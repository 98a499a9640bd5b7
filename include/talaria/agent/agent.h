// Agent: the loop that serves a model — one session of turns, each turn "ask the model, run the
// tools it called, answer each call, repeat until it answers without calls or the budget is
// spent", persisted message by message in the session store.
//
//   auto agent = talaria::agent::Agent::Open(options, model_settings, store);
//   talaria::agent::TurnResult r = (*agent)->RunTurn("fix the failing test", &events, stop);
//
// Thread-safety: one RunTurn at a time; Cancel-by-stop_token from any thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "talaria/agent/chat.h"
#include "talaria/agent/model_client.h"
#include "talaria/base/status.h"
#include "talaria/core/config.h"

namespace talaria {
class Runtime;
}
namespace talaria::safety {
class ApprovalPrompter;
}
namespace talaria::store {
class SessionStore;
}

namespace talaria::agent {

struct AgentOptions {
  std::vector<std::string> roots;     // the workspace; empty: the current directory
  std::vector<std::string> toolsets;  // empty: the default toolsets
  int max_iterations = 90;
  double compression_threshold = 0.50;  // share of (context window - reserved output)
  std::string extra_system_prompt;
  bool load_context_files = true;  // AGENTS.md and the original's names for it
  std::string resume_session_id;   // empty: a new session
  std::string config_path;         // empty: $TALARIA_HOME/config.yaml
  // The embedder's runtime (registry, toolsets, dispatcher with its policy), borrowed: it must
  // outlive the agent, which sets the dispatcher's agent-loop router. Null: the agent makes its
  // own from config_path, with the command policy asking `approval_prompter` (null: nobody can
  // answer, so a command that needs approval is refused).
  Runtime* runtime = nullptr;
  std::shared_ptr<safety::ApprovalPrompter> approval_prompter;
  // Register execute_code for this agent's dispatcher when its toolsets include it. Its scripts
  // call back into one dispatcher, so only one agent per registry can have it at a time.
  bool enable_code_execution = true;
  // The frozen memory block of the system prompt (the memory tool fills it; issue 21).
  std::string memory_snapshot;
  double compaction_tail_ratio = 0.20;  // the verbatim tail: threshold tokens x this
  // Output tokens kept free of the prompt; 0: the model's max_output_tokens, else 4096.
  int64_t reserved_output_tokens = 0;
};

// config.yaml's `agent:` section over `base` (what is absent keeps base's value):
//   agent:
//     max_iterations: 90            # model requests per turn before it must answer
//     compression_threshold: 0.5    # compact at this share of (window - reserved output)
//     compaction_tail_ratio: 0.2    # the verbatim tail kept by a compaction
//     load_context_files: true      # AGENTS.md and the original's names for it
//     system_prompt: "..."          # added to the system prompt
// Errors: InvalidArgument naming the bad key ("config.yaml: agent.max_iterations must be ...").
Result<AgentOptions> AgentOptionsFromConfig(const Config& config, AgentOptions base = {});

enum class ToolCallStatus : unsigned char { kOk, kError, kBlocked, kCancelled, kTimedOut };

// What a front end is told as a turn goes on; called on the thread running the turn, except
// the tool events, which come from the batch's worker threads (implementations must be
// thread-safe and quick).
class AgentEvents {
 public:
  virtual ~AgentEvents() = default;
  virtual void OnTurnStarted(int /*turn*/) {}
  virtual void OnText(std::string_view /*delta*/) {}
  virtual void OnReasoning(std::string_view /*delta*/) {}
  virtual void OnToolCallStarted(size_t /*index*/, std::string_view /*name*/,
                                 std::string_view /*arguments*/) {}
  virtual void OnToolCallFinished(size_t /*index*/, std::string_view /*name*/,
                                  ToolCallStatus /*status*/,
                                  std::chrono::milliseconds /*duration*/) {}
  // Retries, compaction, guardrail stops: one line for the user.
  virtual void OnNotice(std::string_view /*text*/) {}
  // clarify: the user's answer, or nullopt when no user can answer (then the model is told).
  // Asked once per question of a batch; for a multi-select question, the chosen options one
  // per line. Called on the thread running the turn.
  virtual std::optional<std::string> Clarify(std::string_view /*question*/,
                                             const std::vector<std::string>& /*choices*/) {
    return std::nullopt;
  }
};

enum class TurnExit : unsigned char {
  kAnswered,         // the model answered without tool calls
  kBudgetExhausted,  // the iteration budget ran out (the summary request's answer is the text)
  kModelFailed,      // the endpoint failed after retries and fallbacks
  kInterrupted,      // the stop token fired
  kHalted,           // a loop guardrail stopped a runaway turn
};

struct TurnResult {
  TurnExit exit = TurnExit::kAnswered;
  std::string text;   // the final answer (or what there was)
  std::string error;  // kModelFailed / kHalted: one line for the user
  Usage usage;        // this turn's
  double cost_usd = 0;
  int api_calls = 0;
};

class Agent {
 public:
  // Opens or resumes the session (repairing calls a crash interrupted). Errors: NotFound for an
  // unknown resume id, and those of the model client and the workspace.
  static Result<std::unique_ptr<Agent>> Open(AgentOptions options, ModelSettings model,
                                             std::shared_ptr<store::SessionStore> store);
  // The same with a model client the embedder made (null: ModelClient::Open(model)).
  static Result<std::unique_ptr<Agent>> Open(AgentOptions options, ModelSettings model,
                                             std::shared_ptr<store::SessionStore> store,
                                             std::unique_ptr<ModelClient> client);
  virtual ~Agent() = default;

  virtual const std::string& session_id() const = 0;
  virtual TurnResult RunTurn(std::string_view user_message, AgentEvents* events,
                             std::stop_token stop) = 0;
  // /compact: compacts now (one summary request). Errors: those of the summary request.
  virtual Status Compact(AgentEvents* events, std::stop_token stop) = 0;
  virtual Usage SessionUsage() const = 0;
  // The session's cost estimate in USD from ModelSettings::pricing (0 when unknown).
  virtual double SessionCostUsd() const = 0;
  // The tool names this session offers the model.
  virtual std::vector<std::string> ToolNames() const = 0;
};

}  // namespace talaria::agent
