// RunTurn: ask the model, run the tools it called, answer each call, repeat until it answers
// without calls, the iteration budget is spent, a guardrail halts the turn, the model fails or
// the stop token fires. Every message is committed to the store as it happens.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <utility>

#include "agent/agent_impl.h"
#include "agent/message_rows.h"
#include "agent/text_util.h"

namespace talaria::agent {
namespace {

constexpr int kMaxCorrectionRounds = 2;
constexpr size_t kTitleChars = 80;

// An answer cut off at the output limit (finish_reason "length", no tool calls) is kept and
// the model asked to go on, at most this many times, each time with a larger output cap (as
// the original does): a long answer arrives whole instead of ending mid-sentence.
constexpr int kMaxContinuations = 3;
constexpr int64_t kContinuationBaseTokens = 4096;
constexpr int64_t kContinuationCapTokens = 32768;
constexpr std::string_view kContinuePrompt =
    "Your previous answer was cut off at the output limit. Continue exactly where you left off, "
    "without repeating anything you already wrote.";

// The output cap of the `retry`th continuation: (retry + 1) x the configured cap (4096 when
// none), at most 32,768, never below the configured cap.
int64_t ContinuationMaxTokens(int64_t configured, int retry) {
  const int64_t base = configured > 0 ? configured : kContinuationBaseTokens;
  return std::max(std::min(base * (retry + 1), kContinuationCapTokens), configured);
}

// The stream, as the front end sees it; the text is kept for a turn cut short.
class TurnObserver final : public StreamObserver {
 public:
  explicit TurnObserver(TurnState& turn) : turn_(turn) {}
  void OnText(std::string_view delta) override {
    turn_.streamed_text.append(delta);
    if (turn_.events != nullptr) turn_.events->OnText(delta);
  }
  void OnReasoning(std::string_view delta) override {
    if (turn_.events != nullptr) turn_.events->OnReasoning(delta);
  }
  void OnRetry(int attempt, std::chrono::milliseconds delay, std::string_view reason) override {
    turn_.streamed_text.clear();  // the retry streams the answer again
    if (turn_.events == nullptr) return;
    char line[96];
    std::snprintf(line, sizeof line,
                  "model request failed (attempt %d); retrying in %.1f s: ", attempt,
                  static_cast<double>(delay.count()) / 1000.0);
    turn_.events->OnNotice(std::string(line) + std::string(reason));
  }

 private:
  TurnState& turn_;
};

std::string BudgetMessage(int max_iterations) {
  return "[The iteration budget of this turn is spent: " + std::to_string(max_iterations) +
         " model requests.] Do not call any more tools. Answer now: summarize what you did, "
         "what is left to do, and what the user should check.";
}

}  // namespace

Status AgentImpl::Persist(Message message, const Usage* usage, double cost) {
  store::StoredMessage row = ToRow(message);
  if (usage != nullptr) row.usage = ToTotals(*usage, cost);
  ChargeOutsideUsage(row);
  TALARIA_RETURN_IF_ERROR(store_->AppendMessage(session_id_, row));
  request_.messages.push_back(std::move(message));
  return Status::Ok();
}

Status AgentImpl::PersistAll(std::vector<Message> messages) {
  std::vector<store::StoredMessage> rows = ToRows(messages);
  if (!rows.empty()) ChargeOutsideUsage(rows.front());
  TALARIA_RETURN_IF_ERROR(store_->AppendMessages(session_id_, rows));
  for (Message& m : messages) request_.messages.push_back(std::move(m));
  return Status::Ok();
}

void AgentImpl::Account(TurnState& turn, const Usage& usage) {
  turn.result.usage += usage;
  turn.result.cost_usd += model_.pricing.Cost(usage);
  session_usage_ += usage;
  session_cost_ += model_.pricing.Cost(usage);
}

Result<ChatResponse> AgentImpl::Ask(TurnState& turn, bool with_tools) {
  TurnObserver observer(turn);
  turn.streamed_text.clear();
  Json tools = Json::array();
  if (!with_tools) std::swap(tools, request_.tools);
  messages_at_last_request_ = request_.messages.size();
  Result<ChatResponse> response = client_->Complete(request_, &observer, turn.stop);
  if (!with_tools) std::swap(tools, request_.tools);
  ++turn.result.api_calls;
  if (response) {
    Account(turn, response->usage);
    if (response->usage.input_tokens > 0) last_prompt_tokens_ = response->usage.input_tokens;
  }
  return response;
}

TurnResult AgentImpl::RunTurn(std::string_view user_message, AgentEvents* events,
                              std::stop_token stop) {
  TurnState turn;
  turn.events = events;
  turn.stop = stop;
  guard_.Reset();
  request_.max_tokens.reset();  // a continuation's larger cap ends with its turn
  turn_events_.store(events);
  struct ClearEvents {
    std::atomic<AgentEvents*>& events;
    ~ClearEvents() { events.store(nullptr); }
  } clear_events{turn_events_};

  auto fail = [&turn](TurnExit exit, std::string error) {
    turn.result.exit = exit;
    turn.result.error = std::move(error);
    return turn.result;
  };

  const bool first_user_message = request_.messages.size() <= 1;
  // Background subagents that finished after the last tool result (or before the session last
  // closed) report with this message: a result no tool call carried is never dropped.
  const bool had_carried = !carried_notices_.empty();
  const std::string notices = std::exchange(carried_notices_, {}) + TakeDelegationNotices();
  if (Status s = Persist(TextMessage(Role::kUser, std::string(user_message) + notices)); !s.ok()) {
    return fail(TurnExit::kModelFailed, "session store: " + s.message());
  }
  if (had_carried) (void)store_->PutState(session_id_, kDelegationNoticesKey, Json(nullptr));
  if (first_user_message) {
    (void)store_->SetTitle(session_id_, Utf8Prefix(user_message, kTitleChars));
  }
  ++turns_;
  session_->NewTurn();  // checkpoints: each project is snapshotted again before its next change
  if (events != nullptr) events->OnTurnStarted(turns_);

  // Preflight: a resumed or long session may already be over the threshold.
  if (PromptTokens() >= ThresholdTokens()) {
    Usage used;
    Status s = CompactNow(events, stop, /*forced=*/false, &used);
    Account(turn, used);
    turn.compacted = s.ok();
    if (!s.ok() && s.code() != StatusCode::kFailedPrecondition) {
      if (s.code() == StatusCode::kCancelled) return fail(TurnExit::kInterrupted, "");
      return fail(TurnExit::kModelFailed, s.message());
    }
  }

  while (true) {
    if (stop.stop_requested()) return fail(TurnExit::kInterrupted, "");
    // Refunded rounds (execute_code only) do not count against the budget, but a turn never
    // makes more than twice its budget in requests: a model looping on scripts must still stop.
    if (turn.iterations >= options_.max_iterations ||
        turn.result.api_calls >= 2 * options_.max_iterations) {
      FinishBudget(turn);
      return turn.result;
    }
    ++turn.iterations;
    Result<ChatResponse> response = Ask(turn, /*with_tools=*/!request_.tools.empty());
    if (!response) {
      if (response.error().code() == StatusCode::kCancelled || stop.stop_requested()) {
        turn.result.text = turn.partial_text + turn.streamed_text;
        return fail(TurnExit::kInterrupted, "");
      }
      return fail(TurnExit::kModelFailed, response.error().message());
    }
    Usage usage = response->usage;
    usage += pending_usage_;
    pending_usage_ = Usage{};
    const double cost = model_.pricing.Cost(usage);
    Message& answer = response->message;
    answer.role = Role::kAssistant;

    if (answer.tool_calls.empty()) {
      const bool cut_off = response->finish_reason == "length";
      if (cut_off && !answer.content.empty() && turn.continuations < kMaxContinuations) {
        ++turn.continuations;
        turn.partial_text += answer.content;
        if (events != nullptr) {
          events->OnNotice(
              "the answer was cut off at the model's output limit; asking it to "
              "continue (" +
              std::to_string(turn.continuations) + "/" + std::to_string(kMaxContinuations) + ")");
        }
        Status s = Persist(std::move(answer), &usage, cost);
        if (s.ok()) s = Persist(TextMessage(Role::kUser, std::string(kContinuePrompt)));
        if (!s.ok()) return fail(TurnExit::kModelFailed, "session store: " + s.message());
        request_.max_tokens = ContinuationMaxTokens(model_.max_output_tokens, turn.continuations);
        continue;
      }
      request_.max_tokens.reset();
      turn.result.text = turn.partial_text + answer.content;
      if (cut_off && events != nullptr) {
        events->OnNotice(turn.continuations == 0
                             ? "the answer was cut off at the model's output limit"
                             : "the answer was still cut off after " +
                                   std::to_string(turn.continuations) + " continuations");
      }
      // An empty answer is not stored: providers refuse an assistant message with no content.
      if (answer.content.empty() && events != nullptr) {
        events->OnNotice("the model answered with nothing");
      }
      if (!answer.content.empty()) {
        answer.tool_calls.clear();
        if (Status s = Persist(std::move(answer), &usage, cost); !s.ok()) {
          return fail(TurnExit::kModelFailed, "session store: " + s.message());
        }
      }
      turn.result.exit = TurnExit::kAnswered;
      return turn.result;
    }

    RoundOutcome round = RunToolRound(std::move(answer), usage, cost, turn);
    if (!round.error.empty()) return fail(TurnExit::kModelFailed, round.error);
    if (round.interrupted || stop.stop_requested()) return fail(TurnExit::kInterrupted, "");
    if (round.halted) {
      if (events != nullptr) events->OnNotice("loop guard: " + guard_.halt_reason());
      return fail(TurnExit::kHalted, guard_.halt_reason());
    }
    if (round.invalid && ++turn.correction_rounds > kMaxCorrectionRounds) {
      std::string why = "the model sent invalid tool calls " +
                        std::to_string(turn.correction_rounds) +
                        " times in this turn; the turn was stopped";
      if (events != nullptr) events->OnNotice(why);
      return fail(TurnExit::kHalted, std::move(why));
    }
    if (round.only_execute_code) --turn.iterations;  // refunded, as the original does

    if (!turn.compacted && PromptTokens() >= ThresholdTokens()) {
      Usage used;
      Status s = CompactNow(events, stop, /*forced=*/false, &used);
      Account(turn, used);
      // At most one compaction per turn: it cannot loop. (Nothing to compact yet is no
      // compaction: the next round may have enough.)
      turn.compacted = s.code() != StatusCode::kFailedPrecondition;
      if (!s.ok() && s.code() != StatusCode::kFailedPrecondition) {
        if (s.code() == StatusCode::kCancelled) return fail(TurnExit::kInterrupted, "");
        return fail(TurnExit::kModelFailed, s.message());
      }
    }
  }
}

void AgentImpl::FinishBudget(TurnState& turn) {
  turn.result.exit = TurnExit::kBudgetExhausted;
  const std::string notice =
      "iteration budget reached (" + std::to_string(options_.max_iterations) + "/" +
      std::to_string(options_.max_iterations) + "); the answer may be incomplete";
  if (turn.events != nullptr) turn.events->OnNotice(notice);
  if (Status s = Persist(TextMessage(Role::kUser, BudgetMessage(options_.max_iterations)));
      !s.ok()) {
    turn.result.error = "session store: " + s.message();
    return;
  }
  Result<ChatResponse> response = Ask(turn, /*with_tools=*/false);
  if (!response) {
    turn.result.text = turn.streamed_text;
    turn.result.error =
        response.error().code() == StatusCode::kCancelled
            ? notice
            : notice + "; the summary request failed: " + response.error().message();
    return;
  }
  Message& answer = response->message;
  answer.role = Role::kAssistant;
  answer.tool_calls.clear();  // no tools were offered: calls anyway would go unanswered
  turn.result.text = answer.content;
  turn.result.error = notice;
  if (answer.content.empty()) return;
  Usage usage = response->usage;
  (void)Persist(std::move(answer), &usage, model_.pricing.Cost(usage));
}

}  // namespace talaria::agent
