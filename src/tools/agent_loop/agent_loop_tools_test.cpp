// The agent-loop tools are registered with their real schemas (so models see them) and a
// handler that only reports misrouting.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "talaria/core/registry.h"
#include "talaria/core/schema_validator.h"
#include "talaria/core/tool_context.h"

namespace talaria {
namespace {

struct AgentLoopTool {
  std::string name;
  std::string toolset;
  std::vector<std::string> required;  // top-level "required" of the parameters
  ParallelClass parallel;
  bool read_only;
};

const std::vector<AgentLoopTool>& AgentLoopTools() {
  static const std::vector<AgentLoopTool> kTools = {
      {"todo", "todo", {}, ParallelClass::kNever, false},
      {"memory", "memory", {"target"}, ParallelClass::kNever, false},
      {"session_search", "session_search", {}, ParallelClass::kSafe, true},
      {"delegate_task", "delegation", {}, ParallelClass::kNever, false},
      {"clarify", "clarify", {}, ParallelClass::kNever, true},
  };
  return kTools;
}

Json SchemaOf(const ToolEntry& entry) {
  auto parsed = ParseJson(entry.schema_text());
  EXPECT_TRUE(parsed.has_value()) << entry.name() << ": schema does not parse";
  return parsed ? *parsed : Json::object();
}

std::vector<std::string> RequiredOf(const Json& object_schema) {
  std::vector<std::string> out;
  auto it = object_schema.find("required");
  if (it == object_schema.end()) return out;
  for (const auto& name : *it) out.push_back(name.get<std::string>());
  return out;
}

bool Valid(std::string_view tool, std::string_view args_text) {
  auto entry = Registry::Global().GetEntry(tool);
  if (entry == nullptr) return false;
  auto args = ParseJson(args_text);
  auto schema = ParseJson(entry->schema_text());
  if (!args || !schema) return false;
  auto validator = SchemaValidator::Compile((*schema)["parameters"]);
  return validator && validator->Validate(*args);
}

TEST(AgentLoopTools, AreRegisteredInTheirToolsets) {
  for (const auto& tool : AgentLoopTools()) {
    auto entry = Registry::Global().GetEntry(tool.name);
    ASSERT_NE(entry, nullptr) << tool.name;
    EXPECT_EQ(entry->toolset(), tool.toolset) << tool.name;
    EXPECT_EQ(Registry::Global().ToolsetOf(tool.name), tool.toolset) << tool.name;
    EXPECT_NE(entry->emoji(), kDefaultEmoji) << tool.name << " should pick its own emoji";
    EXPECT_FALSE(entry->is_async()) << tool.name;
  }
}

TEST(AgentLoopTools, SchemasAreOpenAiFunctionsWithTheReferenceRequiredLists) {
  for (const auto& tool : AgentLoopTools()) {
    auto entry = Registry::Global().GetEntry(tool.name);
    ASSERT_NE(entry, nullptr) << tool.name;
    Json schema = SchemaOf(*entry);
    ASSERT_TRUE(schema.is_object()) << tool.name;
    EXPECT_EQ(schema.value("name", ""), tool.name);
    ASSERT_TRUE(schema.contains("description")) << tool.name;
    EXPECT_FALSE(schema["description"].get<std::string>().empty()) << tool.name;
    EXPECT_EQ(entry->description(), schema["description"].get<std::string>()) << tool.name;
    ASSERT_TRUE(schema.contains("parameters")) << tool.name;
    const Json& params = schema["parameters"];
    EXPECT_EQ(params.value("type", ""), "object") << tool.name;
    ASSERT_TRUE(params.contains("properties")) << tool.name;
    EXPECT_TRUE(params["properties"].is_object()) << tool.name;
    EXPECT_EQ(RequiredOf(params), tool.required) << tool.name;
  }
}

TEST(AgentLoopTools, ParametersMatchTheReference) {
  auto props = [](std::string_view tool) {
    auto entry = Registry::Global().GetEntry(tool);
    EXPECT_NE(entry, nullptr) << tool;
    return entry ? SchemaOf(*entry)["parameters"]["properties"] : Json::object();
  };
  auto keys = [](const Json& object) {
    std::vector<std::string> out;
    for (const auto& [key, value] : object.items()) out.push_back(key);
    return out;
  };

  Json todo = props("todo");
  EXPECT_EQ(keys(todo), (std::vector<std::string>{"todos", "merge"}));
  EXPECT_EQ(todo["merge"]["type"], "boolean");
  EXPECT_EQ(todo["todos"]["items"]["properties"]["status"]["enum"],
            Json::parse(R"(["pending","in_progress","completed","cancelled"])"));
  EXPECT_EQ(RequiredOf(todo["todos"]["items"]),
            (std::vector<std::string>{"id", "content", "status"}));
  EXPECT_TRUE(todo["todos"]["items"]["properties"].contains("parent"));

  Json memory = props("memory");
  EXPECT_EQ(keys(memory),
            (std::vector<std::string>{"target", "action", "content", "old_text", "operations"}));
  EXPECT_EQ(memory["target"]["enum"], Json::parse(R"(["memory","user"])"));
  EXPECT_EQ(memory["action"]["enum"], Json::parse(R"(["add","replace","remove"])"));
  EXPECT_EQ(RequiredOf(memory["operations"]["items"]), (std::vector<std::string>{"action"}));

  Json search = props("session_search");
  EXPECT_EQ(keys(search),
            (std::vector<std::string>{"query", "limit", "sort", "detail", "session_id",
                                      "around_message_id", "window", "role_filter", "scope"}));
  EXPECT_EQ(search["limit"]["type"], "integer");
  EXPECT_EQ(search["around_message_id"]["type"], "integer");
  EXPECT_EQ(search["window"]["type"], "integer");
  EXPECT_EQ(search["sort"]["enum"], Json::parse(R"(["newest","oldest"])"));
  EXPECT_EQ(search["detail"]["enum"], Json::parse(R"(["adaptive","full"])"));
  EXPECT_EQ(search["scope"]["enum"], Json::parse(R"(["current","all"])"));

  Json delegate = props("delegate_task");
  EXPECT_EQ(keys(delegate), (std::vector<std::string>{"goal", "context", "toolsets", "tasks",
                                                      "role", "background"}));
  EXPECT_EQ(delegate["role"]["enum"], Json::parse(R"(["leaf","orchestrator"])"));
  EXPECT_EQ(delegate["background"]["type"], "boolean");
  EXPECT_EQ(RequiredOf(delegate["tasks"]["items"]), (std::vector<std::string>{"goal"}));

  Json clarify = props("clarify");
  EXPECT_EQ(keys(clarify),
            (std::vector<std::string>{"question", "choices", "multi_select", "questions"}));
  EXPECT_EQ(clarify["choices"]["maxItems"], 4);
  EXPECT_EQ(clarify["questions"]["maxItems"], 5);
  EXPECT_EQ(RequiredOf(clarify["questions"]["items"]), (std::vector<std::string>{"question"}));
}

TEST(AgentLoopTools, HandlersReportThatTheAgentLoopMustHandleThem) {
  for (const auto& tool : AgentLoopTools()) {
    auto entry = Registry::Global().GetEntry(tool.name);
    ASSERT_NE(entry, nullptr) << tool.name;
    ASSERT_TRUE(static_cast<bool>(entry->handler())) << tool.name;
    ToolContext ctx;
    ToolResult result = entry->handler()(Json::object(), ctx);
    EXPECT_FALSE(result.ok()) << tool.name;
    EXPECT_EQ(result.status, CallStatus::kError) << tool.name;
    auto body = ParseJson(result.text);
    ASSERT_TRUE(body.has_value()) << result.text;
    EXPECT_EQ(body->value("error", ""), tool.name + " must be handled by the agent loop");
  }
}

TEST(AgentLoopTools, DeclareParallelClassAndAnnotations) {
  for (const auto& tool : AgentLoopTools()) {
    auto entry = Registry::Global().GetEntry(tool.name);
    ASSERT_NE(entry, nullptr) << tool.name;
    EXPECT_EQ(entry->parallel(), tool.parallel) << tool.name;
    EXPECT_EQ(entry->annotations().read_only, tool.read_only) << tool.name;
    EXPECT_FALSE(entry->annotations().destructive) << tool.name;
  }
  auto search = Registry::Global().GetEntry("session_search");
  ASSERT_NE(search, nullptr);
  EXPECT_EQ(search->parallel(), ParallelClass::kSafe);
  EXPECT_TRUE(search->annotations().idempotent);
}

TEST(AgentLoopTools, SchemasAcceptAndRejectTheExpectedArguments) {
  // No arguments: read the list / browse / a model omitted everything.
  EXPECT_TRUE(Valid("todo", "{}"));
  EXPECT_TRUE(
      Valid("todo", R"({"todos":[{"id":"1","content":"a","status":"pending"}],"merge":true})"));
  EXPECT_FALSE(Valid("todo", R"({"todos":[{"id":"1","content":"a","status":"done"}]})"));
  EXPECT_FALSE(Valid("todo", R"({"todos":[{"id":"1","content":"a"}]})"));

  EXPECT_FALSE(Valid("memory", R"({"action":"add","content":"x"})"));  // target is required
  EXPECT_TRUE(Valid("memory", R"({"target":"user","action":"add","content":"x"})"));
  EXPECT_TRUE(
      Valid("memory", R"({"target":"memory","operations":[{"action":"remove","old_text":"y"}]})"));
  EXPECT_FALSE(Valid("memory", R"({"target":"memory","operations":[{"content":"y"}]})"));
  EXPECT_FALSE(Valid("memory", R"({"target":"notes"})"));

  EXPECT_TRUE(Valid("session_search", "{}"));
  EXPECT_TRUE(Valid("session_search", R"({"query":"deploy*","limit":5,"sort":"newest"})"));
  EXPECT_FALSE(Valid("session_search", R"({"detail":"brief"})"));

  EXPECT_TRUE(Valid("delegate_task", R"({"goal":"g","toolsets":["file"],"role":"leaf"})"));
  EXPECT_TRUE(
      Valid("delegate_task", R"({"tasks":[{"goal":"a"},{"goal":"b","role":"orchestrator"}]})"));
  EXPECT_FALSE(Valid("delegate_task", R"({"tasks":[{"context":"no goal"}]})"));

  EXPECT_TRUE(Valid("clarify", R"({"question":"Which?","choices":["a","b","c","d"]})"));
  EXPECT_FALSE(Valid("clarify", R"({"question":"Which?","choices":["a","b","c","d","e"]})"));
  EXPECT_TRUE(Valid("clarify", R"({"questions":[{"question":"q1"},{"id":"x","question":"q2"}]})"));
  constexpr std::string_view kSixQuestions =
      R"({"questions":[{"question":"1"},{"question":"2"},{"question":"3"},)"
      R"({"question":"4"},{"question":"5"},{"question":"6"}]})";
  EXPECT_FALSE(Valid("clarify", kSixQuestions));
  EXPECT_FALSE(Valid("clarify", R"({"questions":[{"id":"no question"}]})"));
}

}  // namespace
}  // namespace talaria
