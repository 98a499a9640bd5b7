// Compaction in the running session: the trigger (provider-reported prompt tokens, else an
// estimate that includes the tool schemas, against threshold x the usable window), then prune,
// summarize the middle, and commit the replacement history as a compaction record so a resumed
// session loads it as it is. A failed summary never drops the middle.
#include <algorithm>
#include <utility>

#include "agent/agent_impl.h"
#include "agent/message_rows.h"

namespace talaria::agent {
namespace {

constexpr int64_t kDefaultReservedOutput = 4096;
constexpr std::string_view kTodoStateKey = "todo";

}  // namespace

int64_t AgentImpl::PromptTokens() const {
  const auto& messages = request_.messages;
  if (last_prompt_tokens_ > 0 && messages_at_last_request_ <= messages.size()) {
    // What the provider counted for the last request, plus what was added since.
    int64_t added = 0;
    for (size_t i = messages_at_last_request_; i < messages.size(); ++i) {
      added += EstimateTokens(messages[i]);
    }
    return last_prompt_tokens_ + added;
  }
  return EstimateTokens(messages) + tools_tokens_;
}

int64_t AgentImpl::ThresholdTokens() const {
  int64_t reserved = options_.reserved_output_tokens > 0 ? options_.reserved_output_tokens
                     : model_.max_output_tokens > 0      ? model_.max_output_tokens
                                                         : kDefaultReservedOutput;
  reserved = std::min(reserved, model_.context_window / 4);
  const int64_t usable = std::max<int64_t>(model_.context_window - reserved, 1);
  return std::max<int64_t>(static_cast<int64_t>(compaction_.threshold * usable), 1);
}

Status AgentImpl::Compact(AgentEvents* events, std::stop_token stop) {
  Usage used;
  Status s = CompactNow(events, stop, /*forced=*/true, &used);
  session_usage_ += used;
  session_cost_ += model_.pricing.Cost(used);
  return s;
}

Status AgentImpl::CompactNow(AgentEvents* events, std::stop_token stop, bool forced, Usage* usage) {
  std::vector<Message>& history = request_.messages;
  const int64_t threshold = ThresholdTokens();
  const int64_t tail_budget = static_cast<int64_t>(threshold * compaction_.tail_ratio);
  std::optional<CompactionSplit> split = SplitForCompaction(history, tail_budget, compaction_);
  if (!split) return FailedPreconditionError("nothing to compact: the conversation is short");

  auto notice = [events](const std::string& text) {
    if (events != nullptr) events->OnNotice(text);
  };
  auto adopt = [this](std::vector<Message> replacement, std::string_view summary) -> Status {
    TALARIA_RETURN_IF_ERROR(store_->AppendCompaction(session_id_, summary, ToRows(replacement)));
    request_.messages = std::move(replacement);
    last_prompt_tokens_ = 0;  // the provider's count was for the old history
    session_->ForgetReads();  // earlier read results are gone from the context
    return Status::Ok();
  };

  // Old tool outputs go first: no model call, and often enough.
  std::vector<Message> pruned = history;
  const size_t pruned_count =
      PruneToolOutputs(pruned, split->tail_begin, compaction_.prune_min_chars);
  if (!forced && pruned_count > 0 && EstimateTokens(pruned) + tools_tokens_ < threshold) {
    TALARIA_RETURN_IF_ERROR(adopt(std::move(pruned), "[old tool outputs pruned]"));
    notice("context compaction: pruned " + std::to_string(pruned_count) + " old tool outputs");
    return Status::Ok();
  }

  notice("context compaction: summarizing " + std::to_string(split->tail_begin - split->head_end) +
         " earlier messages");
  std::vector<Message> middle(pruned.begin() + static_cast<std::ptrdiff_t>(split->head_end),
                              pruned.begin() + static_cast<std::ptrdiff_t>(split->tail_begin));
  // The transcript must fit the summarizer's window with room to answer.
  const size_t max_chars = static_cast<size_t>(std::max<int64_t>(threshold, 1000)) * 3;
  ChatRequest summary_request;
  summary_request.messages = SummaryRequest(middle, max_chars, compaction_);
  Result<ChatResponse> response = client_->Complete(summary_request, nullptr, std::move(stop));
  if (response) {
    *usage += response->usage;
    pending_usage_ += response->usage;
  }
  if (!response || response->message.content.empty()) {
    if (response.has_value() || response.error().code() != StatusCode::kCancelled) {
      const std::string why =
          response ? std::string("the summary was empty") : response.error().message();
      if (pruned_count > 0 && EstimateTokens(pruned) + tools_tokens_ < threshold) {
        TALARIA_RETURN_IF_ERROR(adopt(std::move(pruned), "[old tool outputs pruned]"));
        notice("context compaction: the summary failed (" + why + "); pruned " +
               std::to_string(pruned_count) + " old tool outputs instead");
        return Status::Ok();
      }
      return UnavailableError(
          "the context is full and compacting it failed (" + why +
          "); nothing was dropped. Try /compact again, or start a new session.");
    }
    return response.error();
  }

  std::string todo_injection;
  {
    std::lock_guard lock(todo_mu_);
    todo_injection = todo_.FormatForInjection();
  }
  Message system = TextMessage(Role::kSystem, MakeSystemPrompt(/*compacted=*/true));
  std::vector<Message> replacement =
      CompactedHistory(system, pruned, *split, response->message.content, todo_injection);
  if (EstimateTokens(replacement) + tools_tokens_ >= threshold) {
    // A tail of a few huge results can hold the history over the threshold by itself; the next
    // turn would then compact again. Older results in the tail go too, the last round's stay.
    size_t last_round = replacement.size();
    while (last_round > 1 && replacement[last_round - 1].role == Role::kTool) --last_round;
    PruneToolOutputs(replacement, last_round, compaction_.prune_min_chars);
  }
  TALARIA_RETURN_IF_ERROR(adopt(std::move(replacement), response->message.content));
  // The todo list survives in the store too (it is re-read on resume).
  {
    std::lock_guard lock(todo_mu_);
    (void)store_->PutState(session_id_, kTodoStateKey, todo_.Snapshot());
  }
  notice("context compaction: done");
  return Status::Ok();
}

}  // namespace talaria::agent
