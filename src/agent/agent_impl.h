// AgentImpl: the loop behind talaria::agent::Agent (agent.h). Split by job:
//   agent_open.cpp       opening or resuming a session, the tools it offers, the system prompt
//   agent_turn.cpp       RunTurn: the model requests, the iteration budget, the exits
//   agent_tool_round.cpp one response's tool calls: hygiene, guardrails, the batch, the answers
//   agent_compact.cpp    context compaction and its trigger
//   loop_tools.cpp       the loop-owned tools (todo, clarify)
// Thread-safety: as Agent: one RunTurn or Compact at a time; the loop-owned tools may be called
// from the batch's threads (todo_mu_ guards what they touch).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <unordered_set>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/compaction.h"
#include "agent/delegation.h"
#include "agent/loop_guard.h"
#include "agent/todo_store.h"
#include "talaria/agent/agent.h"
#include "talaria/core/runtime.h"
#include "talaria/memory/memory_store.h"
#include "talaria/store/session_store.h"
#include "talaria/tools/session.h"

namespace talaria::agent {

// The session state key holding background subagents' undelivered results (loop_delegate.cpp).
inline constexpr std::string_view kDelegationNoticesKey = "delegation_notices";

struct MoaSessionSettings;  // mixture_of_agents.h

// What one turn has used and seen so far.
struct TurnState {
  AgentEvents* events = nullptr;
  std::stop_token stop;
  TurnResult result;
  int iterations = 0;  // model requests charged to the budget (execute_code-only ones refunded)
  int correction_rounds = 0;
  bool compacted = false;
  std::string streamed_text;  // the text of the response being streamed
  int continuations = 0;      // answers cut off at the output limit and continued
  std::string partial_text;   // their text, which the final answer's completes
};

// How one round of tool calls ended.
struct RoundOutcome {
  bool invalid = false;            // some call was refused or failed validation: a correction
  bool only_execute_code = false;  // every call that ran was execute_code: refunded
  bool halted = false;             // the loop guard stopped the turn
  bool interrupted = false;
  std::string error;  // the store failed
};

class AgentImpl final : public Agent {
 public:
  AgentImpl(AgentOptions options, ModelSettings model, std::shared_ptr<store::SessionStore> store,
            std::unique_ptr<ModelClient> client);
  ~AgentImpl() override;

  Status Init();

  const std::string& session_id() const override { return session_id_; }
  TurnResult RunTurn(std::string_view user_message, AgentEvents* events,
                     std::stop_token stop) override;
  Status Compact(AgentEvents* events, std::stop_token stop) override;
  Usage SessionUsage() const override;
  double SessionCostUsd() const override;
  std::vector<std::string> ToolNames() const override { return offered_; }

  // The router (agent_routing.cpp) and delegation (delegation.cpp, loop_delegate.cpp):
  // the loop-owned tools this loop takes, delegate_task included.
  static bool TakesAgentCall(std::string_view name);
  std::optional<ToolResult> RouteAgentCall(std::string_view name, const Json& args,
                                           ToolContext& ctx);
  // Finished background subagents' results, to append to the next tool result.
  std::string TakeDelegationNotices();
  // At close: stops the children and keeps what they left to say in the store.
  void KeepDelegationNotices();
  // Usage spent for this session outside its own requests (its subagents, mixture_of_agents):
  // added to SessionUsage now and to the store's totals with the next message.
  void AddOutsideUsage(const Usage& usage, double cost);
  // mixture_of_agents.cpp: this session's moa: settings, read from its config at the first
  // call and kept for the session (an edit to config.yaml applies to the next session).
  std::shared_ptr<const MoaSessionSettings> MoaSettingsOfSession();

 private:
  // agent_open.cpp
  Status SetUpRuntime();
  Status SetUpTools();
  Status OpenNewSession();
  Status ResumeSession();
  std::string MakeSystemPrompt(bool compacted) const;
  std::string ResolveOffered(std::string_view name) const;
  bool IsIdempotent(std::string_view tool) const;

  // agent_turn.cpp
  // Appends to the history and commits to the store.
  Status Persist(Message message, const Usage* usage = nullptr, double cost = 0);
  // The same for several, in one transaction.
  Status PersistAll(std::vector<Message> messages);
  Result<ChatResponse> Ask(TurnState& turn, bool with_tools);
  void FinishBudget(TurnState& turn);
  void Account(TurnState& turn, const Usage& usage);

  // agent_tool_round.cpp
  RoundOutcome RunToolRound(Message assistant, const Usage& usage, double cost, TurnState& turn);
  std::string UniqueCallId(std::string id);

  // agent_compact.cpp
  int64_t PromptTokens() const;
  int64_t ThresholdTokens() const;
  Status CompactNow(AgentEvents* events, std::stop_token stop, bool forced, Usage* usage);

  // loop_tools.cpp
  // The loop-owned tools this loop runs; memory, session_search and delegate_task come with
  // the next issue and stay unavailable (not offered) until then.
  static bool TakesLoopTool(std::string_view name);
  std::optional<ToolResult> RouteLoopTool(std::string_view name, const Json& args);
  ToolResult RunTodo(const Json& args);
  ToolResult RunClarify(const Json& args);
  // loop_session_search.cpp
  ToolResult RunSessionSearchTool(const Json& args);

  // loop_memory.cpp: the memory tool (issue 21). SetUpMemory makes the store when memory is
  // offered and takes the session's frozen snapshot.
  Status SetUpMemory();
  ToolResult RunMemory(const Json& args);
  std::unique_ptr<memory::MemoryStore> memory_;  // null when memory is not offered

  AgentOptions options_;
  ModelSettings model_;
  std::shared_ptr<store::SessionStore> store_;
  std::unique_ptr<ModelClient> client_;
  std::unique_ptr<Runtime> own_runtime_;
  Runtime* runtime_ = nullptr;
  bool registered_code_execution_ = false;
  std::shared_ptr<tools::Session> session_;
  std::string session_id_;
  std::string cwd_;
  std::string started_;  // the date the session started, as the prompt shows it

  std::vector<std::string> offered_;  // the tools the model is offered
  std::unordered_set<std::string> offered_set_;
  ChatRequest request_;  // request_.messages is the history; [0] the system prompt
  size_t messages_at_last_request_ = 0;
  int64_t last_prompt_tokens_ = 0;
  int64_t tools_tokens_ = 0;
  std::unordered_set<std::string> used_call_ids_;
  int turns_ = 0;  // user turns of the session so far

  CompactionSettings compaction_;
  LoopGuard guard_;
  Usage session_usage_;
  double session_cost_ = 0;
  Usage pending_usage_;  // spent by requests that left no message (summaries); on the next one

  std::mutex todo_mu_;
  TodoStore todo_;                                  // Guarded by todo_mu_.
  std::atomic<AgentEvents*> turn_events_{nullptr};  // for clarify, during a turn

  std::mutex moa_mu_;
  std::shared_ptr<const MoaSessionSettings> moa_;  // Guarded by moa_mu_; null until first used.

  // Delegation (delegation.h): set for a subagent before Init; this agent's children.
  friend class Delegator;
  // Adds what AddOutsideUsage collected to `row` (the next message stored) and the session's.
  void ChargeOutsideUsage(store::StoredMessage& row);
  bool routing_attached_ = false;
  std::unique_ptr<ChildRole> child_;
  // Background subagents' results that reached no tool result before the session closed, kept
  // in the store and delivered with the first turn after it resumes.
  std::string carried_notices_;
  std::unique_ptr<Delegator> delegator_;  // last: destroyed (children stopped) first
};

}  // namespace talaria::agent
