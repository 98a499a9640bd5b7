// The static toolset table the tools module declares to core's Toolsets.
#include "talaria/tools/builtin_toolsets.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace talaria::tools {
namespace {

std::vector<std::string> Names(const Result<ToolList>& r) {
  EXPECT_TRUE(r) << (r ? "" : r.error().message());
  return r ? **r : std::vector<std::string>{};
}

bool Has(const std::vector<std::string>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

TEST(BuiltinToolsets, AreWhatCoreResolvesByDefault) {
  const std::vector<ToolsetDef> declared = BuiltinToolsets();
  const std::vector<ToolsetDef> table = BuiltinToolsetTable();
  ASSERT_EQ(declared.size(), table.size());
  for (size_t i = 0; i < table.size(); ++i) EXPECT_EQ(declared[i].name, table[i].name);
}

TEST(BuiltinToolsets, HaveTheSharedCoreAndScenarioSets) {
  Registry r;
  Toolsets ts(r);
  auto cli = Names(ts.Resolve("talaria-cli"));
  for (const auto& tool : CoreTools()) EXPECT_TRUE(Has(cli, tool)) << tool;
  auto debugging = Names(ts.Resolve("debugging"));
  for (const char* tool : {"terminal", "process", "web_search", "read_file", "patch"}) {
    EXPECT_TRUE(Has(debugging, tool)) << tool;
  }
  EXPECT_FALSE(Has(Names(ts.Resolve("safe")), "terminal"));
  auto mcp = Names(ts.Resolve("talaria-mcp"));
  EXPECT_FALSE(Has(mcp, "todo")) << "agent-loop tools are not served";
  EXPECT_TRUE(Has(mcp, "read_file"));
}

}  // namespace
}  // namespace talaria::tools
