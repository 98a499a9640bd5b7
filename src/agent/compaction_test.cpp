#include "agent/compaction.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/messages.h"

namespace talaria::agent {
namespace {

Message Assistant(std::vector<std::string> call_ids, std::string content = "") {
  Message m = TextMessage(Role::kAssistant, std::move(content));
  for (auto& id : call_ids) m.tool_calls.push_back(ToolCall{id, "read_file", "{}", false});
  return m;
}

// system, then `turns` x (user, assistant calling 2 tools, 2 results, assistant answer).
std::vector<Message> History(int turns, size_t tool_chars = 1000) {
  std::vector<Message> h = {TextMessage(Role::kSystem, "prompt")};
  for (int t = 0; t < turns; ++t) {
    const std::string n = std::to_string(t);
    h.push_back(TextMessage(Role::kUser, "task " + n));
    h.push_back(Assistant({"a" + n, "b" + n}));
    h.push_back(ToolMessage("a" + n, "read_file", std::string(tool_chars, 'x')));
    h.push_back(ToolMessage("b" + n, "read_file", std::string(tool_chars, 'y')));
    h.push_back(TextMessage(Role::kAssistant, "done " + n));
  }
  return h;
}

// Every tool call answered exactly once, right after its assistant message.
void ExpectPairsWhole(const std::vector<Message>& h) {
  for (size_t i = 0; i < h.size(); ++i) {
    if (h[i].role == Role::kTool) {
      size_t j = i;
      while (j > 0 && h[j].role == Role::kTool) --j;
      ASSERT_EQ(h[j].role, Role::kAssistant) << "orphaned tool result at " << i;
      bool found = false;
      for (const auto& c : h[j].tool_calls) found = found || c.id == h[i].tool_call_id;
      EXPECT_TRUE(found) << "tool result " << h[i].tool_call_id << " at " << i;
    }
    if (!h[i].tool_calls.empty()) {
      for (size_t k = 0; k < h[i].tool_calls.size(); ++k) {
        ASSERT_LT(i + 1 + k, h.size()) << "unanswered call at " << i;
        EXPECT_EQ(h[i + 1 + k].tool_call_id, h[i].tool_calls[k].id);
      }
    }
  }
}

TEST(Compaction, EstimatesAboutFourBytesAToken) {
  EXPECT_EQ(EstimateTokens(TextMessage(Role::kUser, std::string(4000, 'a'))), 1004);
  EXPECT_GT(EstimateTokens(Assistant({"c1"})), 4);
}

TEST(Compaction, SplitKeepsHeadAndABudgetedTailWithPairsWhole) {
  const auto h = History(10);
  CompactionSettings settings;
  for (int64_t budget : {0, 300, 800, 2000}) {
    auto split = SplitForCompaction(h, budget, settings);
    ASSERT_TRUE(split.has_value()) << budget;
    EXPECT_GE(split->head_end, 1 + settings.protect_first);
    EXPECT_LT(split->head_end, split->tail_begin);
    EXPECT_GE(h.size() - split->tail_begin, settings.min_tail_messages) << budget;
    EXPECT_NE(h[split->tail_begin].role, Role::kTool) << budget;
    EXPECT_NE(h[split->head_end].role, Role::kTool) << budget;
    auto compacted = CompactedHistory(h[0], h, *split, "SUMMARY", "");
    ExpectPairsWhole(compacted);
    EXPECT_LT(compacted.size(), h.size());
  }
}

TEST(Compaction, ATailBudgetCoveringEverythingLeavesNothingToSummarize) {
  EXPECT_FALSE(SplitForCompaction(History(10), 1'000'000, CompactionSettings{}).has_value());
}

TEST(Compaction, NothingToCompactInAShortConversation) {
  EXPECT_FALSE(SplitForCompaction(History(1), 100, CompactionSettings{}).has_value());
}

TEST(Compaction, PrunesOnlyLongToolOutputsBeforeTheTail) {
  auto h = History(3);
  h[3].content = "short";
  const size_t pruned = PruneToolOutputs(h, 9, 400);
  EXPECT_EQ(pruned, 2u);  // h[3] is short; h[4] and h[8] are before 9
  EXPECT_EQ(h[3].content, "short");
  EXPECT_EQ(h[4].content, kPrunedToolOutput);
  EXPECT_EQ(h[8].content, kPrunedToolOutput);
  EXPECT_EQ(h[9].content, std::string(1000, 'y'));
  EXPECT_EQ(PruneToolOutputs(h, 9, 400), 0u) << "already pruned";
}

TEST(Compaction, SummaryRequestCarriesTheTemplateAndABoundedTranscript) {
  auto h = History(4, 5000);
  std::vector<Message> middle(h.begin() + 1, h.end());
  auto request = SummaryRequest(middle, 6000, CompactionSettings{});
  ASSERT_EQ(request.size(), 2u);
  EXPECT_EQ(request[0].role, Role::kSystem);
  EXPECT_NE(request[0].content.find("## Historical Task Snapshot"), std::string::npos);
  EXPECT_NE(request[0].content.find("[REDACTED]"), std::string::npos);
  EXPECT_EQ(request[1].role, Role::kUser);
  EXPECT_LT(request[1].content.size(), 7000u);
  EXPECT_NE(request[1].content.find("done 3"), std::string::npos) << "the newest part is kept";
  EXPECT_NE(request[1].content.find("older messages left out"), std::string::npos);
}

TEST(Compaction, CompactedHistoryCarriesSummaryLatestAskAndTodos) {
  auto h = History(6);
  // A long last turn: its user message falls into the middle.
  for (int i = 0; i < 10; ++i) {
    h.push_back(Assistant({"z" + std::to_string(i)}));
    h.push_back(ToolMessage("z" + std::to_string(i), "read_file", "r"));
  }
  auto split = SplitForCompaction(h, 10, CompactionSettings{});
  ASSERT_TRUE(split.has_value());
  auto compacted = CompactedHistory(h[0], h, *split, "SUMMARY", "[todo]\n- [>] 1. x");
  const Message& summary = compacted[split->head_end];
  EXPECT_EQ(summary.role, Role::kUser);
  EXPECT_EQ(summary.content.rfind(std::string(kCompactionPrefix), 0), 0u);
  EXPECT_NE(summary.content.find("SUMMARY"), std::string::npos);
  EXPECT_NE(summary.content.find("task 5"), std::string::npos) << "the latest ask, verbatim";
  EXPECT_NE(summary.content.find("- [>] 1. x"), std::string::npos);
  ExpectPairsWhole(compacted);
}

}  // namespace
}  // namespace talaria::agent
