// The fake provider's request validation: valid histories pass, each kind of invalid history or
// tool list is caught under its kind, and `expect`/`match` conditions read the request right.
#include "support/fake_llm_validation.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace talaria::test_support {
namespace {

FakeJson Request(FakeJson messages, FakeJson tools = nullptr) {
  FakeJson body = {{"model", "m"}, {"messages", std::move(messages)}};
  if (!tools.is_null()) body["tools"] = std::move(tools);
  return body;
}

FakeJson Tool(const std::string& name) {
  return {{"type", "function"},
          {"function",
           {{"name", name},
            {"description", "d"},
            {"parameters",
             {{"type", "object"},
              {"properties", {{"path", {{"type", "string"}}}}},
              {"required", {"path"}}}}}}};
}

FakeJson Call(const std::string& id, const std::string& args = R"({"path":"a"})") {
  return {
      {"id", id}, {"type", "function"}, {"function", {{"name", "read_file"}, {"arguments", args}}}};
}

FakeJson Assistant(FakeJson calls) {
  return {{"role", "assistant"}, {"content", nullptr}, {"tool_calls", std::move(calls)}};
}

FakeJson ToolResult(const std::string& id) {
  return {{"role", "tool"}, {"tool_call_id", id}, {"content", "ok"}};
}

FakeJson Msg(const std::string& role, const std::string& text) {
  return {{"role", role}, {"content", text}};
}

std::vector<std::string> Kinds(const FakeJson& body) {
  std::vector<std::string> out;
  for (const auto& p : ValidateChatRequest(body)) out.push_back(p.kind);
  return out;
}

std::string Text(const FakeJson& body) {
  std::string out;
  for (const auto& p : ValidateChatRequest(body)) out += p.kind + ": " + p.message + "\n";
  return out;
}

TEST(FakeLlmValidation, AcceptsValidHistories) {
  const FakeJson tools = FakeJson::array({Tool("read_file"), Tool("write-file_2")});
  const std::vector<FakeJson> valid = {
      Request({Msg("user", "hi")}),
      Request(
          {Msg("system", "s"), Msg("user", "hi"), Msg("assistant", "hello"), Msg("user", "again")}),
      Request({Msg("system", "s"), Msg("user", "hi"), Assistant({Call("a"), Call("b")}),
               ToolResult("b"), ToolResult("a"), Msg("assistant", "done"), Msg("user", "more"),
               Assistant({Call("c")}), ToolResult("c")},
              tools),
      // Content parts, and an assistant message with both text and calls.
      Request({{{"role", "user"}, {"content", {{{"type", "text"}, {"text", "hi"}}}}},
               {{"role", "assistant"}, {"content", "let me look"}, {"tool_calls", {Call("x")}}},
               ToolResult("x")},
              tools),
  };
  for (const auto& body : valid) EXPECT_EQ(Text(body), "") << body.dump();
  FakeJson with_choice = Request({Msg("user", "hi")}, tools);
  with_choice["tool_choice"] = {{"type", "function"}, {"function", {{"name", "read_file"}}}};
  with_choice["parallel_tool_calls"] = true;
  with_choice["stream"] = true;
  with_choice["stream_options"] = {{"include_usage", true}};
  EXPECT_EQ(Text(with_choice), "");
}

struct InvalidCase {
  const char* name;
  FakeJson body;
  const char* kind;
};

TEST(FakeLlmValidation, CatchesEachKindOfInvalidRequest) {
  const FakeJson tools = FakeJson::array({Tool("read_file")});
  FakeJson bad_choice = Request({Msg("user", "hi")}, tools);
  bad_choice["tool_choice"] = {{"type", "function"}, {"function", {{"name", "nope"}}}};
  FakeJson choice_no_tools = Request({Msg("user", "hi")});
  choice_no_tools["tool_choice"] = "auto";
  FakeJson parallel_no_tools = Request({Msg("user", "hi")});
  parallel_no_tools["parallel_tool_calls"] = false;
  FakeJson options_no_stream = Request({Msg("user", "hi")});
  options_no_stream["stream_options"] = {{"include_usage", true}};
  FakeJson no_model = Request({Msg("user", "hi")});
  no_model.erase("model");
  FakeJson bad_params = Tool("read_file");
  bad_params["function"]["parameters"] = {{"type", "string"}};
  FakeJson bad_required = Tool("read_file");
  bad_required["function"]["parameters"]["required"] = {"nope"};
  FakeJson not_function = Tool("read_file");
  not_function["type"] = "retrieval";
  FakeJson args_not_string = Call("a");
  args_not_string["function"]["arguments"] = {{"path", "a"}};

  const std::vector<InvalidCase> cases = {
      {"system late", Request({Msg("user", "hi"), Msg("system", "s")}), "system_not_first"},
      {"unknown role", Request({Msg("robot", "hi")}), "bad_role"},
      {"tool first", Request({Msg("user", "hi"), ToolResult("a")}), "tool_without_call"},
      {"tool after text", Request({Msg("user", "hi"), Msg("assistant", "x"), ToolResult("a")}),
       "tool_without_call"},
      {"unanswered before user",
       Request({Msg("user", "hi"), Assistant({Call("a"), Call("b")}), ToolResult("a"),
                Msg("user", "next")}),
       "unanswered_tool_call"},
      {"unanswered at end", Request({Msg("user", "hi"), Assistant({Call("a")})}),
       "unanswered_tool_call"},
      {"answered twice",
       Request({Msg("user", "hi"), Assistant({Call("a")}), ToolResult("a"), ToolResult("a")}),
       "duplicate_tool_result"},
      {"unknown id",
       Request({Msg("user", "hi"), Assistant({Call("a")}), ToolResult("a"), ToolResult("zzz")}),
       "unknown_tool_call_id"},
      {"answers an older turn's call",
       Request({Msg("user", "hi"), Assistant({Call("a")}), ToolResult("a"), Msg("user", "u"),
                Assistant({Call("b")}), ToolResult("b"), ToolResult("a")}),
       "duplicate_tool_result"},
      {"tool without id",
       Request({Msg("user", "hi"), Assistant({Call("a")}), {{"role", "tool"}, {"content", "x"}}}),
       "bad_tool_message"},
      {"empty assistant", Request({Msg("user", "hi"), {{"role", "assistant"}}}), "empty_assistant"},
      {"user without content", Request({{{"role", "user"}}}), "bad_content"},
      {"same call id twice",
       Request({Msg("user", "hi"), Assistant({Call("a"), Call("a")}), ToolResult("a")}),
       "duplicate_tool_call_id"},
      {"arguments not JSON",
       Request({Msg("user", "hi"), Assistant({Call("a", "{\"path\":")}), ToolResult("a")}),
       "arguments_not_json"},
      {"arguments an object",
       Request({Msg("user", "hi"), Assistant({args_not_string}), ToolResult("a")}),
       "bad_tool_calls"},
      {"bad tool name", Request({Msg("user", "hi")}, {Tool("read file")}), "bad_tool_name"},
      {"long tool name", Request({Msg("user", "hi")}, {Tool(std::string(65, 'a'))}),
       "bad_tool_name"},
      {"duplicate tool", Request({Msg("user", "hi")}, {Tool("read_file"), Tool("read_file")}),
       "duplicate_tool_name"},
      {"params not object", Request({Msg("user", "hi")}, {bad_params}), "bad_tool_parameters"},
      {"required unknown", Request({Msg("user", "hi")}, {bad_required}), "bad_tool_parameters"},
      {"tool type", Request({Msg("user", "hi")}, {not_function}), "bad_tool"},
      {"empty tools", Request({Msg("user", "hi")}, FakeJson::array()), "empty_tools"},
      {"choice unknown tool", bad_choice, "bad_tool_choice"},
      {"choice without tools", choice_no_tools, "tool_choice_without_tools"},
      {"parallel without tools", parallel_no_tools, "parallel_tool_calls_without_tools"},
      {"stream_options without stream", options_no_stream, "stream_options_without_stream"},
      {"no model", no_model, "missing_model"},
      {"no messages", Request(FakeJson::array()), "missing_messages"},
      {"not an object", FakeJson::array(), "bad_body"},
  };
  for (const auto& c : cases) {
    const auto kinds = Kinds(c.body);
    EXPECT_NE(std::find(kinds.begin(), kinds.end(), c.kind), kinds.end())
        << c.name << ": expected " << c.kind << ", got:\n"
        << Text(c.body);
  }
}

TEST(FakeLlmValidation, LenientKindsAreLeftOutAndBadJsonIsOneProblem) {
  const FakeJson body =
      Request({Msg("user", "hi"), Assistant({Call("a", "{oops")}), ToolResult("a")});
  EXPECT_EQ(Kinds(body), std::vector<std::string>{"arguments_not_json"});
  EXPECT_TRUE(ValidateChatRequest(body, {"arguments_not_json"}).empty());
  const auto problems = ValidateChatRequestText("{\"model\": ");
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].kind, "invalid_json");
}

TEST(FakeLlmValidation, ConditionsReadTheRequest) {
  FakeJson body = Request({Msg("system", "You are talaria"), Msg("user", "fix the bug"),
                           Assistant({Call("c1")}), ToolResult("c1")},
                          {Tool("read_file"), Tool("patch")});
  body["tool_choice"] = "auto";
  body["stream"] = true;
  const std::vector<std::pair<std::string, std::string>> headers = {
      {"Authorization", "Bearer sk-test"}};

  FakeConditions holds;
  holds.last_role = "tool";
  holds.last_content_contains = "ok";
  holds.last_tool_call_id = "c1";
  holds.any_content_contains = "fix the";
  holds.system_contains = "talaria";
  holds.tools_include = {"read_file", "patch"};
  holds.tools_exclude = {"terminal"};
  holds.no_tools = false;
  holds.tool_choice = "auto";
  holds.message_count = 4;
  holds.stream = true;
  holds.model = "m";
  holds.header_contains = "authorization: sk-test";
  holds.fields = {{"stream", true}, {"max_tokens", nullptr}};
  EXPECT_TRUE(CheckConditions(holds, body, headers).empty());

  FakeConditions fails;
  fails.last_role = "user";
  fails.last_content_contains = "nope";
  fails.last_tool_call_id = "c9";
  fails.any_content_contains = "absent";
  fails.system_contains = "hermes";
  fails.tools_include = {"terminal"};
  fails.tools_exclude = {"patch"};
  fails.no_tools = true;
  fails.tool_choice = "required";
  fails.message_count = 2;
  fails.stream = false;
  fails.model = "other";
  fails.header_contains = "Authorization: sk-other";
  fails.fields = {{"max_tokens", 32000}, {"tool_choice", nullptr}};
  const std::vector<std::string> failed = CheckConditions(fails, body, headers);
  ASSERT_EQ(failed.size(), 15u);
  EXPECT_EQ(failed[13], "max_tokens is absent, expected 32000");
  EXPECT_EQ(failed[14], "tool_choice is \"auto\", expected absent");
}

}  // namespace
}  // namespace talaria::test_support
