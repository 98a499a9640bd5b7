#include "agent/compaction.h"

#include <algorithm>

#include "agent/messages.h"
#include "agent/text_util.h"

namespace talaria::agent {
namespace {

constexpr int64_t kMessageOverheadTokens = 4;

std::string_view Clip(std::string_view text, size_t max_chars) {
  return Utf8Prefix(text, max_chars);
}

// The first index >= i that does not start inside a run of tool results (a cut there would
// orphan them from their assistant message).
size_t SkipToolResults(const std::vector<Message>& history, size_t i) {
  while (i < history.size() && history[i].role == Role::kTool) ++i;
  return i;
}

// The last index <= i at which a cut leaves every call with its results: moved back over tool
// results to the assistant message that called them.
size_t BackOverToolResults(const std::vector<Message>& history, size_t i) {
  while (i > 1 && i < history.size() && history[i].role == Role::kTool) --i;
  return i;
}

std::string Transcript(const std::vector<Message>& middle, size_t max_chars,
                       const CompactionSettings& settings) {
  std::vector<std::string> parts;
  parts.reserve(middle.size());
  for (const Message& m : middle) {
    std::string part;
    switch (m.role) {
      case Role::kUser:
        part = "[user]\n" + m.content;
        break;
      case Role::kAssistant:
        part = "[assistant]\n" + m.content;
        for (const ToolCall& call : m.tool_calls) {
          part += "\n(called " + call.name + " " +
                  std::string(Clip(call.arguments, settings.transcript_tool_chars)) + ")";
        }
        break;
      case Role::kTool: {
        part = "[tool result: " + m.name + "]\n";
        part += Clip(m.content, settings.transcript_tool_chars);
        if (m.content.size() > settings.transcript_tool_chars) part += "\n[... cut ...]";
        break;
      }
      case Role::kSystem:
        part = "[system]\n" + m.content;
        break;
    }
    parts.push_back(std::move(part));
  }
  // Too long: the most recent parts matter most; the oldest are dropped first.
  size_t total = 0;
  size_t first = parts.size();
  while (first > 0 && total + parts[first - 1].size() + 2 <= max_chars) {
    total += parts[first - 1].size() + 2;
    --first;
  }
  std::string out;
  if (first > 0) {
    out += "[" + std::to_string(first) + " older messages left out: too long to include]\n\n";
  }
  for (size_t i = first; i < parts.size(); ++i) {
    out += parts[i];
    out += "\n\n";
  }
  return out;
}

constexpr std::string_view kSummaryInstructions =
    "You compact the history of a conversation between a user and a coding agent so the agent "
    "can go on without it. Write the summary in the user's language, as facts in the past tense "
    "for what was done. Replace secrets (keys, tokens, passwords) with [REDACTED]. Be specific: "
    "file paths, function names, commands, error messages, numbers. Use exactly these sections:\n"
    "## Historical Task Snapshot\n(the latest request of the user that is not fulfilled yet, "
    "quoted verbatim)\n"
    "## Goal\n## Constraints & Preferences\n"
    "## Completed Actions\n(numbered; with the tools used and what they showed)\n"
    "## Historical In-Progress State\n## Pending User Asks\n## Remaining Work\n"
    "## Relevant Files\n"
    "If the transcript starts with an earlier summary, update it with what happened after it "
    "instead of summarizing the summary. Answer with the summary only.";

}  // namespace

int64_t EstimateTokens(const Message& message) {
  size_t bytes = message.content.size() + message.name.size() + message.tool_call_id.size();
  for (const ToolCall& call : message.tool_calls) {
    bytes += call.id.size() + call.name.size() + call.arguments.size() + 24;
  }
  return static_cast<int64_t>(bytes / 4) + kMessageOverheadTokens;
}

int64_t EstimateTokens(const std::vector<Message>& messages) {
  int64_t total = 0;
  for (const Message& m : messages) total += EstimateTokens(m);
  return total;
}

size_t PruneToolOutputs(std::vector<Message>& history, size_t end, size_t prune_min_chars) {
  size_t pruned = 0;
  end = std::min(end, history.size());
  for (size_t i = 1; i < end; ++i) {
    Message& m = history[i];
    if (m.role != Role::kTool || m.content.size() < prune_min_chars) continue;
    if (m.content == kPrunedToolOutput) continue;
    m.content = std::string(kPrunedToolOutput);
    ++pruned;
  }
  return pruned;
}

std::optional<CompactionSplit> SplitForCompaction(const std::vector<Message>& history,
                                                  int64_t tail_token_budget,
                                                  const CompactionSettings& settings) {
  if (history.size() < 3) return std::nullopt;
  CompactionSplit split;
  split.head_end = SkipToolResults(history, std::min(history.size(), 1 + settings.protect_first));
  // The tail: back from the end within the budget, at least min_tail_messages.
  size_t begin = history.size();
  int64_t tokens = 0;
  while (begin > split.head_end) {
    const int64_t next = EstimateTokens(history[begin - 1]);
    const size_t kept = history.size() - begin;
    if (kept >= settings.min_tail_messages && tokens + next > tail_token_budget) break;
    tokens += next;
    --begin;
  }
  begin = BackOverToolResults(history, begin);
  split.tail_begin = std::max(begin, split.head_end);
  if (split.tail_begin <= split.head_end) return std::nullopt;
  return split;
}

std::vector<Message> SummaryRequest(const std::vector<Message>& middle, size_t max_chars,
                                    const CompactionSettings& settings) {
  std::vector<Message> request;
  request.push_back(TextMessage(Role::kSystem, std::string(kSummaryInstructions)));
  std::string body = "The conversation to compact:\n\n" + Transcript(middle, max_chars, settings);
  request.push_back(TextMessage(Role::kUser, std::move(body)));
  return request;
}

std::vector<Message> CompactedHistory(const Message& system, const std::vector<Message>& history,
                                      const CompactionSplit& split, const std::string& summary,
                                      const std::string& todo_injection) {
  std::vector<Message> out;
  out.reserve(2 + split.head_end + (history.size() - split.tail_begin));
  out.push_back(system);
  for (size_t i = 1; i < split.head_end && i < history.size(); ++i) out.push_back(history[i]);
  std::string text(kCompactionPrefix);
  text += "\n\n";
  text += summary;
  // The latest user ask stays verbatim when the summary swallowed it.
  bool tail_has_user = false;
  for (size_t i = split.tail_begin; i < history.size(); ++i) {
    if (history[i].role == Role::kUser) tail_has_user = true;
  }
  if (!tail_has_user) {
    for (size_t i = split.tail_begin; i-- > split.head_end;) {
      if (history[i].role == Role::kUser) {
        text += "\n\n[The user's latest message, verbatim]\n" + history[i].content;
        break;
      }
    }
  }
  if (!todo_injection.empty()) text += "\n\n" + todo_injection;
  text += "\n\n[END OF COMPACTION SUMMARY]";
  out.push_back(TextMessage(Role::kUser, std::move(text)));
  for (size_t i = split.tail_begin; i < history.size(); ++i) out.push_back(history[i]);
  return out;
}

}  // namespace talaria::agent
