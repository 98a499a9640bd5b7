#include "talaria/core/toolsets.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace talaria {
namespace {

ToolSpec MakeToolsetSpec(const std::string& name, const std::string& toolset) {
  ToolSpec spec;
  spec.name = name;
  spec.toolset = toolset;
  spec.schema = R"({"name":"x","description":"d","parameters":{"type":"object"}})";
  spec.handler = [](const Json&, ToolContext&) { return ToolResult::Text("{}"); };
  return spec;
}

std::vector<std::string> Names(const Result<ToolList>& r) {
  EXPECT_TRUE(r) << (r ? "" : r.error().message());
  return r ? **r : std::vector<std::string>{};
}

using V = std::vector<std::string>;

TEST(Toolsets, ResolvesToolsAndIncludesSortedWithoutDuplicates) {
  Registry r;
  Toolsets ts(r, {{"a", "", {"z", "y"}, {"b"}}, {"b", "", {"y", "x"}, {}}});
  EXPECT_EQ(Names(ts.Resolve("a")), (V{"x", "y", "z"}));
  EXPECT_EQ(Names(ts.Resolve("b")), (V{"x", "y"}));
}

TEST(Toolsets, DiamondsAndCyclesTerminate) {
  Registry r;
  Toolsets ts(r, {{"A", "", {"a"}, {"B", "C"}},
                  {"B", "", {"b"}, {"D"}},
                  {"C", "", {"c"}, {"D", "A"}},  // C -> A is a cycle
                  {"D", "", {"d"}, {"D"}}});     // self cycle
  EXPECT_EQ(Names(ts.Resolve("A")), (V{"a", "b", "c", "d"}));
  EXPECT_EQ(Names(ts.Resolve("C")), (V{"a", "b", "c", "d"}));
  EXPECT_EQ(Names(ts.Resolve("D")), (V{"d"}));
}

TEST(Toolsets, AllAndStarAreTheUnionOfEverything) {
  Registry r;
  ASSERT_TRUE(r.Register(MakeToolsetSpec("plug", "my-plugin")).ok());
  Toolsets ts(r, {{"a", "", {"x"}, {}}, {"b", "", {"y"}, {"a"}}});
  EXPECT_EQ(Names(ts.Resolve("all")), (V{"plug", "x", "y"}));
  EXPECT_EQ(Names(ts.Resolve("*")), (V{"plug", "x", "y"}));
}

TEST(Toolsets, UnknownNameListsTheValidOnes) {
  Registry r;
  Toolsets ts(r, {{"web", "", {"web_query"}, {}}});
  auto res = ts.Resolve("wbe");
  ASSERT_FALSE(res);
  EXPECT_EQ(res.error().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(res.error().message().find("unknown toolset 'wbe'"), std::string::npos);
  EXPECT_NE(res.error().message().find("web"), std::string::npos);
  EXPECT_FALSE(ts.Exists("wbe"));
  EXPECT_TRUE(ts.Exists("all"));
}

TEST(Toolsets, RegistryToolsMergeIntoStaticToolsetsAndRegistryOnlyToolsetsExist) {
  Registry r;
  ASSERT_TRUE(r.Register(MakeToolsetSpec("browser_extra", "browser")).ok());
  ASSERT_TRUE(r.Register(MakeToolsetSpec("mcp_gh_issue", "mcp-github")).ok());
  r.RegisterToolsetAlias("github", "mcp-github");
  Toolsets ts(r, {{"browser", "", {"browser_navigate"}, {}}, {"dev", "", {}, {"github"}}});
  EXPECT_EQ(Names(ts.Resolve("browser")), (V{"browser_extra", "browser_navigate"}));
  EXPECT_EQ(Names(ts.Resolve("mcp-github")), (V{"mcp_gh_issue"}));
  EXPECT_EQ(Names(ts.Resolve("github")), (V{"mcp_gh_issue"}));
  EXPECT_EQ(Names(ts.Resolve("dev")), (V{"mcp_gh_issue"}));
  auto names = ts.Names();
  EXPECT_NE(std::find(names.begin(), names.end(), "mcp-github"), names.end());
  auto def = ts.Find("mcp-github");
  ASSERT_TRUE(def);
  EXPECT_EQ(def->tools, (V{"mcp_gh_issue"}));
}

TEST(Toolsets, MemoFollowsTheRegistryGeneration) {
  Registry r;
  Toolsets ts(r, {{"p", "", {}, {}}});
  EXPECT_EQ(Names(ts.Resolve("p")), V{});
  ASSERT_TRUE(r.Register(MakeToolsetSpec("late", "p")).ok());
  EXPECT_EQ(Names(ts.Resolve("p")), V{"late"});
  ASSERT_TRUE(r.Deregister("late"));
  EXPECT_EQ(Names(ts.Resolve("p")), V{});
}

TEST(Toolsets, DefineAddsUserToolsetsAndInvalidatesTheMemo) {
  Registry r;
  Toolsets ts(r, {{"web", "", {"web_query"}, {}}});
  EXPECT_FALSE(ts.Resolve("mine"));
  ts.Define({"mine", "user set", {"reader"}, {"web"}});
  EXPECT_EQ(Names(ts.Resolve("mine")), (V{"reader", "web_query"}));
  ts.Define({"web", "", {"web_fetch"}, {}});
  EXPECT_EQ(Names(ts.Resolve("mine")), (V{"reader", "web_fetch"}));
}

TEST(Toolsets, DisabledToolsetsAreSubtractedLast) {
  Registry r;
  Toolsets ts(r, {{"file", "", {"reader", "writer"}, {}},
                  {"shell", "", {"shell"}, {}},
                  {"debugging", "", {}, {"file", "shell"}}});
  const V enabled{"debugging", "file"};
  const V disabled{"file"};
  EXPECT_EQ(Names(ts.ResolveSelection(enabled, disabled)), V{"shell"});
  EXPECT_EQ(Names(ts.ResolveSelection({}, disabled)), V{"shell"});
  const V unknown{"nope"};
  EXPECT_FALSE(ts.ResolveSelection(unknown, {}));
  EXPECT_FALSE(ts.ResolveSelection({}, unknown));
}

TEST(Toolsets, DefinitionsCoverTheSelectionsRegisteredTools) {
  Registry r;
  ASSERT_TRUE(r.Register(MakeToolsetSpec("reader", "file")).ok());
  Toolsets ts(r, {{"file", "", {"reader", "writer"}, {}}});
  const V enabled{"file"};
  auto defs = ts.Definitions(enabled, {});
  ASSERT_TRUE(defs);
  auto parsed = ParseJson(**defs);
  ASSERT_TRUE(parsed);
  ASSERT_EQ(parsed->size(), 1u) << "writer is not registered";
  EXPECT_EQ((*parsed)[0]["function"]["name"], "reader");
  auto again = ts.Definitions(enabled, {});
  EXPECT_EQ(again->get(), defs->get()) << "memoized";
  ASSERT_TRUE(r.Register(MakeToolsetSpec("writer", "file")).ok());
  EXPECT_EQ(ParseJson(**ts.Definitions(enabled, {}))->size(), 2u)
      << "a registry change invalidates";
}

}  // namespace
}  // namespace talaria
