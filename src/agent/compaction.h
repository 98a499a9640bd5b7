// Context compaction, the pure parts (reference a.8): when to compact, pruning old tool
// outputs, choosing the head and the token-budgeted tail that stay verbatim, the summary
// request for the middle, and the history that replaces the old one.
//
// History shape: [system, head..., middle..., tail...]. Cuts never separate an assistant
// message's tool calls from their results, so the compacted history is valid for any provider.
// Thread-safety: free functions, no shared state.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "talaria/agent/chat.h"

namespace talaria::agent {

inline constexpr std::string_view kPrunedToolOutput =
    "[Old tool output cleared to save context space]";
inline constexpr std::string_view kCompactionPrefix =
    "[CONTEXT COMPACTION — REFERENCE ONLY] Earlier turns of this conversation were compacted "
    "into the summary below. Do not redo finished work or resume old tasks because of it; the "
    "latest user message is what to do now.";

struct CompactionSettings {
  double threshold = 0.50;               // share of the usable window that triggers
  double tail_ratio = 0.20;              // tail budget: threshold tokens x this
  size_t protect_first = 2;              // messages after the system prompt kept verbatim
  size_t min_tail_messages = 8;          // at least this many kept at the end
  size_t prune_min_chars = 400;          // tool outputs shorter than this are not worth pruning
  size_t transcript_tool_chars = 2'000;  // per tool output in the summary request
};

// A rough token count: 4 bytes a token, plus a few per message; tool-call text included.
int64_t EstimateTokens(const std::vector<Message>& messages);
int64_t EstimateTokens(const Message& message);

// Replaces the content of tool messages in [1, end) longer than prune_min_chars with the
// pruned marker. Returns how many were pruned.
size_t PruneToolOutputs(std::vector<Message>& history, size_t end, size_t prune_min_chars);

struct CompactionSplit {
  size_t head_end = 1;    // [1, head_end): kept verbatim after the system prompt
  size_t tail_begin = 1;  // [head_end, tail_begin): summarized; [tail_begin, end): kept
};

// Where to cut `history` (history[0] is the system prompt); nullopt when the middle would be
// empty (nothing to compact).
std::optional<CompactionSplit> SplitForCompaction(const std::vector<Message>& history,
                                                  int64_t tail_token_budget,
                                                  const CompactionSettings& settings);

// The summary request: a system message with the template and a user message carrying the
// middle as a transcript (bounded to about `max_chars`). `previous_summary` is updated rather
// than summarized again when the middle starts with one.
std::vector<Message> SummaryRequest(const std::vector<Message>& middle, size_t max_chars,
                                    const CompactionSettings& settings);

// The replacement history: system prompt, head, one user message with the summary (and the
// latest user ask and the todo list when given), then the tail.
std::vector<Message> CompactedHistory(const Message& system, const std::vector<Message>& history,
                                      const CompactionSplit& split, const std::string& summary,
                                      const std::string& todo_injection);

}  // namespace talaria::agent
