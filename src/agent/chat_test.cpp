#include "talaria/agent/chat.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "agent/hermes_text.h"

namespace talaria::agent {
namespace {

TEST(Chat, RoleNamesRoundTrip) {
  for (Role role : {Role::kSystem, Role::kUser, Role::kAssistant, Role::kTool}) {
    EXPECT_EQ(ParseRole(RoleName(role)), role);
  }
  EXPECT_EQ(ParseRole("developer"), std::nullopt);
}

TEST(Chat, UsageAddsAndPricingCostsCachedTokensAtTheirRate) {
  Usage total{
      .input_tokens = 1000, .cached_tokens = 400, .output_tokens = 100, .reasoning_tokens = 10};
  total += Usage{
      .input_tokens = 1000, .cached_tokens = 600, .output_tokens = 100, .reasoning_tokens = 0};
  EXPECT_EQ(total.input_tokens, 2000);
  EXPECT_EQ(total.cached_tokens, 1000);
  EXPECT_EQ(total.output_tokens, 200);
  EXPECT_EQ(total.reasoning_tokens, 10);
  Pricing pricing{.input_per_mtok = 2.0, .cached_per_mtok = 0.5, .output_per_mtok = 8.0};
  EXPECT_TRUE(pricing.known());
  // 1000 uncached * 2 + 1000 cached * 0.5 + 200 * 8 = 4100 per million.
  EXPECT_DOUBLE_EQ(pricing.Cost(total), 4100.0 / 1e6);
  Pricing no_cache_rate{.input_per_mtok = 2.0, .cached_per_mtok = 0, .output_per_mtok = 0};
  EXPECT_DOUBLE_EQ(no_cache_rate.Cost(total), 4000.0 / 1e6);
  EXPECT_FALSE(Pricing{}.known());
  EXPECT_EQ(Pricing{}.Cost(total), 0.0);
}

TEST(Chat, MessagesInTheWireShape) {
  Message assistant;
  assistant.role = Role::kAssistant;
  assistant.reasoning = "private";
  ToolCall call;
  call.id = "c1";
  call.name = "terminal";
  call.arguments = "{\"command\":\"ls\"}";
  assistant.tool_calls = {call};
  const Json wire = MessageToWire(assistant);
  EXPECT_EQ(wire["role"], "assistant");
  EXPECT_TRUE(wire["content"].is_null());
  EXPECT_FALSE(wire.contains("reasoning"));
  EXPECT_EQ(wire["tool_calls"][0]["id"], "c1");
  EXPECT_EQ(wire["tool_calls"][0]["type"], "function");
  EXPECT_EQ(wire["tool_calls"][0]["function"]["arguments"], "{\"command\":\"ls\"}");

  Message tool;
  tool.role = Role::kTool;
  tool.tool_call_id = "c1";
  tool.name = "terminal";
  tool.content = "a b";
  const Json result = MessageToWire(tool);
  EXPECT_EQ(result["tool_call_id"], "c1");
  EXPECT_EQ(result["content"], "a b");

  Message user;
  user.content = "hi";
  EXPECT_EQ(DumpJson(MessageToWire(user)), R"({"role":"user","content":"hi"})");
}

TEST(HermesText, ExtractsCallsAndKeepsTheRestOfTheContent) {
  HermesExtraction got = ExtractHermesToolCalls(
      "Sure.\n<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}\n"
      "</tool_call>\n<tool_call>{\"name\": \"t\", \"parameters\": {\"x\": 1}}</tool_call>");
  EXPECT_EQ(got.content, "Sure.");
  ASSERT_EQ(got.tool_calls.size(), 2u);
  EXPECT_EQ(got.tool_calls[0].name, "read_file");
  EXPECT_EQ(got.tool_calls[0].arguments, "{\"path\":\"a\"}");
  EXPECT_EQ(got.tool_calls[1].arguments, "{\"x\":1}");

  HermesExtraction broken = ExtractHermesToolCalls("<tool_call>{not json}</tool_call>");
  ASSERT_EQ(broken.tool_calls.size(), 1u);
  EXPECT_EQ(broken.tool_calls[0].name, "");
  EXPECT_EQ(broken.tool_calls[0].arguments, "{not json}");

  HermesExtraction open = ExtractHermesToolCalls("x <tool_call>{\"name\": \"w\", \"argu");
  ASSERT_EQ(open.tool_calls.size(), 1u);
  EXPECT_TRUE(open.tool_calls[0].truncated);
  EXPECT_EQ(open.content, "x");

  EXPECT_TRUE(ExtractHermesToolCalls("no calls here").tool_calls.empty());
}

}  // namespace
}  // namespace talaria::agent
