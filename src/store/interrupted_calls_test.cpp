#include "store/interrupted_calls.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace talaria::store {
namespace {

StoredMessage Assistant(Json calls) {
  StoredMessage m;
  m.role = "assistant";
  m.tool_calls = std::move(calls);
  return m;
}

StoredMessage Tool(std::string id) {
  StoredMessage m;
  m.role = "tool";
  m.tool_call_id = std::move(id);
  return m;
}

Json Call(const std::string& id, const std::string& name) {
  return Json{
      {"id", id}, {"type", "function"}, {"function", {{"name", name}, {"arguments", "{}"}}}};
}

TEST(InterruptedCalls, FindsCallsWithoutResultsInOrder) {
  std::vector<StoredMessage> h = {Assistant(Json::array({Call("a", "read_file")})), Tool("a"),
                                  Assistant(Json::array({Call("b", "terminal"), Call("c", "x")})),
                                  Tool("c")};
  auto missing = FindUnansweredCalls(h);
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_EQ(missing[0].id, "b");
  EXPECT_EQ(missing[0].name, "terminal");
}

TEST(InterruptedCalls, SkipsMalformedCallsAndRepeatedIds) {
  std::vector<StoredMessage> h = {
      Assistant(Json::array(
          {Json("junk"), Json{{"function", {{"name", "no_id"}}}}, Call("d", "y"), Call("d", "y")})),
      Assistant(Json{{"not", "an array"}})};
  auto missing = FindUnansweredCalls(h);
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_EQ(missing[0].id, "d");
}

TEST(InterruptedCalls, ResultSaysInterruptedAndNamesTheCall) {
  StoredMessage m = InterruptedResult({"call_1", "terminal"});
  EXPECT_EQ(m.role, "tool");
  EXPECT_EQ(m.tool_call_id, "call_1");
  EXPECT_EQ(m.name, "terminal");
  auto body = ParseJson(m.content);
  ASSERT_TRUE(body);
  EXPECT_NE(JsonStringField(*body, "error").find("interrupted"), std::string::npos);
  EXPECT_NE(JsonStringField(*body, "error").find("side effects"), std::string::npos);
}

}  // namespace
}  // namespace talaria::store
