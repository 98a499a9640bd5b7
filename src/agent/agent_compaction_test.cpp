// Compaction in a running session, against the real store and the scripted server: triggered by
// the provider's prompt count, summarized by the model, stored as a compaction record that a
// resumed session loads without summarizing again; a failed summary drops nothing.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/agent_test_util.h"

namespace talaria::agent::testing {
namespace {

using Json = nlohmann::ordered_json;

class AgentCompaction : public AgentFixture {
 protected:
  void SetUp() override {
    AgentFixture::SetUp();
    std::string line(74, 'x');
    std::string big;
    for (int i = 0; i < 400; ++i) big += line + "\n";  // ~30 KB: ~7,500 tokens once read
    for (int i = 1; i <= 6; ++i) WriteFile("big" + std::to_string(i) + ".txt", big);
  }

  // Six rounds, each reading one big file; the provider reports a small prompt until the
  // sixth, whose count is over the threshold.
  static std::string ReadRounds(int over_at = 6) {
    std::string turns;
    for (int i = 1; i <= 6; ++i) {
      const int prompt = i == over_at ? 30'000 : 100;
      turns += R"({"tool_calls": [{"id": "r)" + std::to_string(i) +
               R"(", "name": "read_file", "arguments": {"path": "big)" + std::to_string(i) +
               R"(.txt"}}], "usage": {"prompt_tokens": )" + std::to_string(prompt) +
               R"(, "completion_tokens": 5}},)";
    }
    return turns;
  }

  ModelSettings SmallWindow() const {
    ModelSettings m = Model();
    m.context_window = 40'000;  // usable 35,904; compaction at 17,952
    return m;
  }
  AgentOptions FileTools() const {
    AgentOptions o = Options();
    o.toolsets = {"file", "todo"};
    return o;
  }
};

TEST_F(AgentCompaction, SummarizesTheMiddleOnceAndAResumedSessionLoadsIt) {
  Serve(R"({"turns": [)" + ReadRounds() + R"(
      {"match": {"no_tools": true}, "expect": {"any_content_contains": "big2.txt"},
       "text": "## Goal\nSUMMARY-XYZ: read six files."},
      {"expect": {"any_content_contains": "SUMMARY-XYZ",
                  "system_contains": "compacted into a summary"},
       "text": "All six read."},
      {"expect": {"any_content_contains": "SUMMARY-XYZ", "last_content_contains": "and now?"},
       "text": "Still here."}]})");
  Open(FileTools(), SmallWindow());
  TurnResult r = Turn("read the six files");
  EXPECT_EQ(r.exit, TurnExit::kAnswered) << r.error;
  EXPECT_EQ(r.text, "All six read.");
  EXPECT_EQ(server_->ProblemsText(), "");
  bool noticed = false;
  for (const auto& n : events_.notices()) noticed = noticed || n.find("summarizing") != n.npos;
  EXPECT_TRUE(noticed);

  auto history = History();
  ASSERT_FALSE(history.empty());
  EXPECT_NE(history[0].content.find("compacted into a summary"), std::string::npos);
  bool has_summary = false;
  for (const auto& m : history)
    has_summary = has_summary || m.content.find("SUMMARY-XYZ") != m.content.npos;
  EXPECT_TRUE(has_summary);
  auto transcript = store_->LoadTranscript(agent_->session_id());
  ASSERT_TRUE(transcript.has_value());
  EXPECT_GT(transcript->size(), history.size()) << "the transcript keeps every message";

  // A resumed session sends the same compacted history; nothing is summarized again.
  const std::string id = agent_->session_id();
  agent_.reset();
  AgentOptions options = FileTools();
  options.resume_session_id = id;
  Open(options, SmallWindow());
  TurnResult again = Turn("and now?");
  EXPECT_EQ(again.exit, TurnExit::kAnswered) << again.error;
  EXPECT_EQ(again.text, "Still here.");
  EXPECT_EQ(server_->ProblemsText(), "");
  EXPECT_EQ(server_->turns_remaining(), 0u);
}

TEST_F(AgentCompaction, PruningOldToolOutputsComesFirstWhenItIsEnough) {
  Serve(R"({"turns": [)" + ReadRounds() + R"(
      {"expect": {"any_content_contains": "Old tool output cleared"}, "text": "All read."}]})");
  ModelSettings model = Model();
  model.context_window = 80'000;  // compaction at 37,952: pruning two results gets under it
  Open(FileTools(), model);
  TurnResult r = Turn("read the six files");
  EXPECT_EQ(r.exit, TurnExit::kAnswered) << r.error;
  EXPECT_EQ(server_->ProblemsText(), "");
  EXPECT_EQ(server_->turns_remaining(), 0u) << "no summary was requested";
  size_t pruned = 0;
  for (const auto& m : History()) {
    if (m.content.find("Old tool output cleared") != std::string::npos) ++pruned;
  }
  EXPECT_EQ(pruned, 2u);
}

TEST_F(AgentCompaction, AFailedSummaryDropsNothingAndStopsWithAClearMessage) {
  Serve(R"({"turns": [)" + ReadRounds() + R"(
      {"match": {"no_tools": true}, "fault": {"kind": "500", "message": "summarizer down"}}]})");
  Open(FileTools(), SmallWindow());
  TurnResult r = Turn("read the six files");
  EXPECT_EQ(r.exit, TurnExit::kModelFailed);
  EXPECT_NE(r.error.find("compacting it failed"), std::string::npos) << r.error;
  auto history = History();
  EXPECT_EQ(history.size(), 14u) << "system, user, six calls and six results: all kept";
  for (const auto& m : history) {
    EXPECT_EQ(m.content.find("CONTEXT COMPACTION"), std::string::npos);
  }
  EXPECT_EQ(server_->ProblemsText(), "");
}

TEST_F(AgentCompaction, CompactOnRequestSummarizesNow) {
  Serve(R"({"turns": [)" + ReadRounds(/*over_at=*/99) + R"(
      {"text": "read"},
      {"match": {"no_tools": true}, "text": "SUMMARY-NOW"},
      {"expect": {"any_content_contains": "SUMMARY-NOW"}, "text": "ok"}]})");
  Open(FileTools(), SmallWindow());
  EXPECT_EQ(Turn("read").exit, TurnExit::kAnswered);
  Status s = agent_->Compact(&events_, {});
  EXPECT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(Turn("next").exit, TurnExit::kAnswered);
  EXPECT_EQ(server_->ProblemsText(), "");
  EXPECT_EQ(server_->turns_remaining(), 0u);
}

}  // namespace
}  // namespace talaria::agent::testing
