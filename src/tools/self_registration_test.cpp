// Proves that a tool declared in a new file, with no list anywhere naming it, is registered:
// this file is the only place that mentions self_registration_probe.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "talaria/core/dispatcher.h"
#include "talaria/core/tool_registration.h"
#include "talaria/core/toolsets.h"

namespace {

talaria::ToolSpec ProbeSpec() {
  talaria::ToolSpec spec;
  spec.name = "self_registration_probe";
  spec.toolset = "probe";
  spec.schema = R"json({"name": "self_registration_probe", "description": "Echoes n",
    "parameters": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}})json";
  spec.handler = [](const talaria::Json& args, talaria::ToolContext&) {
    return talaria::ToolResult::FromJson({{"n", args["n"]}});
  };
  return spec;
}

TALARIA_TOOL(SelfRegistrationProbe, ProbeSpec());

TEST(SelfRegistration, AToolInANewFileIsRegisteredWithoutAnyList) {
  auto& registry = talaria::Registry::Global();
  auto entry = registry.GetEntry("self_registration_probe");
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(entry->toolset(), "probe");

  talaria::Toolsets toolsets(registry);
  auto all = toolsets.Resolve("all");
  ASSERT_TRUE(all);
  EXPECT_NE(std::find((*all)->begin(), (*all)->end(), "self_registration_probe"), (*all)->end());

  talaria::Dispatcher dispatcher(registry);
  talaria::ToolContext ctx;
  EXPECT_EQ(dispatcher.Dispatch("self_registration_probe", R"({"n": "5"})", ctx).text,
            R"({"n":5})");
}

TEST(SelfRegistration, BuiltInToolsAreAllPresent) {
  auto& registry = talaria::Registry::Global();
  for (const char* name : {"todo", "memory", "session_search", "delegate_task", "clarify"}) {
    EXPECT_NE(registry.GetEntry(name), nullptr) << name;
  }
}

}  // namespace
