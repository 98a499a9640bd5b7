#include "agent/stream_assembler.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "talaria/agent/model_client.h"

namespace talaria::agent {
namespace {

AssembledTurn Assemble(const std::vector<std::string>& chunks, StreamObserver* observer = nullptr) {
  StreamAssembler assembler(observer);
  for (const std::string& chunk : chunks) {
    Status status = assembler.OnEvent("", chunk);
    EXPECT_TRUE(status.ok()) << status.ToString();
  }
  return assembler.Finish();
}

std::string Delta(const Json& delta, const Json& finish = nullptr) {
  return Json{
      {"choices", Json::array({{{"index", 0}, {"delta", delta}, {"finish_reason", finish}}})}}
      .dump();
}

Json Call(Json index, Json id, Json name, Json args) {
  Json call = Json::object();
  if (!index.is_null()) call["index"] = index;
  if (!id.is_null()) call["id"] = id;
  call["function"] = Json::object();
  if (!name.is_null()) call["function"]["name"] = name;
  if (!args.is_null()) call["function"]["arguments"] = args;
  return call;
}

TEST(StreamAssembler, ReusedIndexWithNewIdOpensANewCall) {
  // Ollama numbers every parallel call 0.
  AssembledTurn turn = Assemble({
      Delta({{"tool_calls", {Call(0, "a", "read_file", "{\"path\":")}}}),
      Delta({{"tool_calls", {Call(0, nullptr, nullptr, "\"x\"}")}}}),
      Delta({{"tool_calls", {Call(0, "b", "terminal", "{\"command\":\"ls\"}")}}}),
      Delta(Json::object(), "tool_calls"),
  });
  ASSERT_EQ(turn.tool_calls.size(), 2u);
  EXPECT_EQ(turn.tool_calls[0].id, "a");
  EXPECT_EQ(turn.tool_calls[0].arguments, "{\"path\":\"x\"}");
  EXPECT_EQ(turn.tool_calls[1].id, "b");
  EXPECT_EQ(turn.tool_calls[1].name, "terminal");
  EXPECT_FALSE(turn.tool_calls[1].truncated);
}

TEST(StreamAssembler, RepeatedNameIsNotAppended) {
  AssembledTurn turn = Assemble({
      Delta({{"tool_calls", {Call(0, "a", "patch", "{")}}}),
      Delta({{"tool_calls", {Call(0, "a", "patch", "}")}}}),
  });
  ASSERT_EQ(turn.tool_calls.size(), 1u);
  EXPECT_EQ(turn.tool_calls[0].name, "patch");
  EXPECT_EQ(turn.tool_calls[0].arguments, "{}");
}

TEST(StreamAssembler, IdOnlyProviderContinuesTheLastCall) {
  AssembledTurn turn = Assemble({
      Delta({{"tool_calls", {Call(nullptr, "a", "f", "{\"x\":")}}}),
      Delta({{"tool_calls", {Call(nullptr, nullptr, nullptr, "1}")}}}),
      Delta({{"tool_calls", {Call(nullptr, "b", "g", "{}")}}}),
      Delta({{"tool_calls", {Call(nullptr, "a", nullptr, "")}}}),
  });
  ASSERT_EQ(turn.tool_calls.size(), 2u);
  EXPECT_EQ(turn.tool_calls[0].arguments, "{\"x\":1}");
  EXPECT_EQ(turn.tool_calls[1].name, "g");
}

TEST(StreamAssembler, ReasoningAsStringObjectOrReasoningContent) {
  AssembledTurn turn = Assemble({
      Delta({{"reasoning_content", "a"}}),
      Delta({{"reasoning", "b"}}),
      Delta({{"reasoning", {{"text", "c"}}}}),
      Delta({{"reasoning", {{"content", "d"}}}}),
      Delta({{"reasoning_content", "e"}, {"reasoning", "e"}}),  // both spellings: once
      Delta({{"content", "answer"}}, "stop"),
  });
  EXPECT_EQ(turn.reasoning, "abcde");
  EXPECT_EQ(turn.content, "answer");
  EXPECT_EQ(turn.finish_reason, "stop");
}

TEST(StreamAssembler, UsageChunkWithEmptyChoicesAndLaterNullFinish) {
  AssembledTurn turn = Assemble({
      Delta({{"content", "hi"}}, "stop"),
      Delta(Json::object(), nullptr),
      R"({"choices":[],"usage":{"prompt_tokens":100,"completion_tokens":20,
          "prompt_tokens_details":{"cached_tokens":60},
          "completion_tokens_details":{"reasoning_tokens":5}}})",
  });
  EXPECT_EQ(turn.finish_reason, "stop");
  EXPECT_TRUE(turn.usage_seen);
  EXPECT_EQ(turn.usage.input_tokens, 100);
  EXPECT_EQ(turn.usage.cached_tokens, 60);
  EXPECT_EQ(turn.usage.output_tokens, 20);
  EXPECT_EQ(turn.usage.reasoning_tokens, 5);
  EXPECT_FALSE(turn.done);
}

TEST(StreamAssembler, LengthDuringACallMarksItTruncated) {
  AssembledTurn turn = Assemble({
      Delta({{"tool_calls", {Call(0, "a", "read_file", "{\"path\":\"a\"}")}}}),
      Delta({{"tool_calls", {Call(1, "b", "write_file", "{\"path\":\"b\",\"content\":\"abc")}}},
            "length"),
  });
  ASSERT_EQ(turn.tool_calls.size(), 2u);
  EXPECT_FALSE(turn.tool_calls[0].truncated);
  EXPECT_TRUE(turn.tool_calls[1].truncated);
}

TEST(StreamAssembler, StreamEndingMidArgumentsMarksTheCallTruncated) {
  AssembledTurn turn = Assemble({Delta({{"tool_calls", {Call(0, "a", "f", "{\"x\": [1,")}}})});
  ASSERT_EQ(turn.tool_calls.size(), 1u);
  EXPECT_TRUE(turn.tool_calls[0].truncated);
  AssembledTurn complete = Assemble({Delta({{"tool_calls", {Call(0, "a", "f", "{}")}}})});
  EXPECT_FALSE(complete.tool_calls[0].truncated);  // TGI sends no finish_reason at all
}

TEST(StreamAssembler, ErrorObjectMidStreamIsKept) {
  StreamAssembler assembler;
  ASSERT_TRUE(assembler.OnEvent("", Delta({{"content", "par"}})).ok());
  ASSERT_TRUE(assembler.OnEvent("error", R"({"error":{"message":"overloaded","code":503}})").ok());
  AssembledTurn turn = assembler.Finish();
  ASSERT_TRUE(turn.error.has_value());
  EXPECT_EQ((*turn.error)["message"], "overloaded");
  EXPECT_EQ(turn.content, "par");
}

TEST(StreamAssembler, NonJsonEventIsAnError) {
  StreamAssembler assembler;
  EXPECT_EQ(assembler.OnEvent("", "<html>").code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(assembler.OnEvent("", "[DONE]").ok());
  EXPECT_TRUE(assembler.turn().done);
}

TEST(StreamAssembler, HostileShapesDoNotCrash) {
  AssembledTurn turn = Assemble({
      R"({"choices":"x"})",
      R"({"choices":[1,null,"a",{"delta":5},{"delta":{"tool_calls":[1,{"function":7},{"index":"x","function":{"name":3,"arguments":{"a":1}}}]}}]})",
      R"({"choices":[{"index":0,"delta":{"content":["a",{"type":"text","text":"b"},{"type":"thinking","thinking":[{"text":"t"},3]}]}}]})",
      R"({"usage":{"prompt_tokens":"many","completion_tokens":1.5}})",
      R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":-5,"id":"z"},{"index":99999999999}]}}]})",
  });
  EXPECT_EQ(turn.content, "b");
  EXPECT_EQ(turn.reasoning, "t");
  EXPECT_EQ(turn.usage.input_tokens, 0);
  EXPECT_EQ(turn.usage.output_tokens, 1);
  EXPECT_GE(turn.tool_calls.size(), 1u);
}

TEST(StreamAssembler, TooManyCallsIsAnError) {
  StreamAssembler assembler;
  for (int i = 0; i < 600; ++i) {
    ASSERT_TRUE(
        assembler
            .OnEvent("", Delta({{"tool_calls", {Call(i, "id" + std::to_string(i), "f", "{}")}}}))
            .ok());
  }
  AssembledTurn turn = assembler.Finish();
  EXPECT_EQ(turn.tool_calls.size(), StreamAssembler::kMaxToolCalls);
  ASSERT_TRUE(turn.error.has_value());
}

TEST(StreamAssembler, ObserverSeesTextReasoningAndCallStarts) {
  struct Seen : StreamObserver {
    std::string text, reasoning, calls;
    void OnText(std::string_view d) override { text += d; }
    void OnReasoning(std::string_view d) override { reasoning += d; }
    void OnToolCallStarted(size_t i, std::string_view name) override {
      calls += std::to_string(i) + ":" + std::string(name) + ";";
    }
  } seen;
  Assemble({Delta({{"reasoning", "r"}}), Delta({{"content", "t"}}),
            Delta({{"tool_calls", {Call(0, "a", "f", "")}}}),
            Delta({{"tool_calls", {Call(0, nullptr, "f", "{}")}}}),
            Delta({{"tool_calls", {Call(1, "b", "g", "{}")}}})},
           &seen);
  EXPECT_EQ(seen.text, "t");
  EXPECT_EQ(seen.reasoning, "r");
  EXPECT_EQ(seen.calls, "0:f;1:g;");
}

TEST(ParseCompletion, ReadsMessageCallsUsageAndModel) {
  auto turn = ParseCompletion(R"({"model":"m1","choices":[{"index":0,"finish_reason":"tool_calls",
    "message":{"role":"assistant","content":"c","reasoning_content":"r",
    "tool_calls":[{"id":"x","type":"function","function":{"name":"f","arguments":"{}"}},
                  {"id":"y","type":"function","function":{"name":"g","arguments":{"a":1}}}]}}],
    "usage":{"prompt_tokens":3,"completion_tokens":4}})");
  ASSERT_TRUE(turn.has_value());
  EXPECT_EQ(turn->model, "m1");
  EXPECT_EQ(turn->content, "c");
  EXPECT_EQ(turn->reasoning, "r");
  ASSERT_EQ(turn->tool_calls.size(), 2u);
  EXPECT_EQ(turn->tool_calls[1].arguments, "{\"a\":1}");
  EXPECT_EQ(turn->usage.output_tokens, 4);
  EXPECT_FALSE(ParseCompletion("not json").has_value());
}

}  // namespace
}  // namespace talaria::agent
