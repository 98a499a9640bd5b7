// Answers cut off at the output limit (finish_reason "length" without tool calls): the model
// is asked to continue, with a larger output cap, at most three times, and the user gets the
// whole answer.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "agent/agent_test_util.h"

namespace talaria::agent::testing {
namespace {

using Json = nlohmann::ordered_json;
using AgentLength = AgentFixture;

std::string Joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& line : lines) out += line + "\n";
  return out;
}

TEST_F(AgentLength, ACutOffAnswerIsContinuedAndArrivesWhole) {
  Serve(R"({"turns": [
    {"text": "The first half, ", "finish_reason": "length"},
    {"expect": {"last_role": "user", "last_content_contains": "Continue exactly where you left off"},
     "text": "and the second half."},
    {"expect": {"last_role": "user", "last_content_contains": "next"}, "text": "Short."}]})");
  Open();
  TurnResult r = Turn("tell me everything");
  EXPECT_EQ(r.exit, TurnExit::kAnswered) << r.error;
  EXPECT_EQ(r.text, "The first half, and the second half.");
  EXPECT_EQ(r.api_calls, 2);
  EXPECT_NE(Joined(events_.notices()).find("continue (1/3)"), std::string::npos)
      << Joined(events_.notices());

  std::vector<Json> requests;
  for (const auto& req : server_->requests()) requests.push_back(req.Json());
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_FALSE(requests[0].contains("max_tokens"));
  // Nothing configured: twice the 4,096 default.
  EXPECT_EQ(requests[1].value("max_tokens", 0), 8192);
  EXPECT_EQ(server_->ProblemsText(), "");

  // The next turn goes back to the configured cap.
  TurnResult next = Turn("next");
  EXPECT_EQ(next.text, "Short.");
  ASSERT_EQ(server_->requests().size(), 3u);
  EXPECT_FALSE(server_->requests()[2].Json().contains("max_tokens"));
}

TEST_F(AgentLength, GivesUpAfterThreeContinuationsWithWhatItHas) {
  Serve(R"({"turns": [
    {"text": "a", "finish_reason": "length"},
    {"text": "b", "finish_reason": "length"},
    {"text": "c", "finish_reason": "length"},
    {"text": "d", "finish_reason": "length"}]})");
  ModelSettings model = Model();
  model.max_output_tokens = 10000;
  Open(Options(), model);
  TurnResult r = Turn("go on and on");
  EXPECT_EQ(r.exit, TurnExit::kAnswered) << r.error;
  EXPECT_EQ(r.text, "abcd");
  EXPECT_EQ(r.api_calls, 4);
  EXPECT_NE(Joined(events_.notices()).find("still cut off after 3 continuations"),
            std::string::npos)
      << Joined(events_.notices());
  ASSERT_EQ(server_->requests().size(), 4u);
  // (retry + 1) x the configured cap, at most 32,768.
  EXPECT_EQ(server_->requests()[0].Json().value("max_tokens", 0), 10000);
  EXPECT_EQ(server_->requests()[1].Json().value("max_tokens", 0), 20000);
  EXPECT_EQ(server_->requests()[2].Json().value("max_tokens", 0), 30000);
  EXPECT_EQ(server_->requests()[3].Json().value("max_tokens", 0), 32768);
  EXPECT_EQ(server_->ProblemsText(), "");
  // Every part is in the session, so a resumed session sends what the model wrote.
  std::string stored;
  auto history = store_->LoadHistory(agent_->session_id());
  ASSERT_TRUE(history.has_value());
  for (const auto& m : *history) {
    if (m.role == "assistant") stored += m.content;
  }
  EXPECT_EQ(stored, "abcd");
}

TEST_F(AgentLength, AnAnswerCutOffWithNothingInItIsNotContinued) {
  Serve(R"({"turns": [{"text": "", "finish_reason": "length"}]})");
  Open();
  TurnResult r = Turn("hello");
  EXPECT_EQ(r.api_calls, 1);
  EXPECT_EQ(server_->requests().size(), 1u);
}

}  // namespace
}  // namespace talaria::agent::testing
