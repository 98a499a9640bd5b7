#include "talaria/core/config.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "talaria/core/runtime.h"

namespace talaria {
namespace {

TEST(Config, MissingFileGivesDefaults) {
  auto config = LoadConfig("/nonexistent/talaria/config.yaml");
  ASSERT_TRUE(config);
  EXPECT_TRUE(config->toolsets.empty());
  EXPECT_EQ(config->hooks, nullptr);
  EXPECT_EQ(config->budget.default_result_chars, kDefaultResultChars);
}

TEST(Config, MissingFileTheCallerNamedIsNotFound) {
  auto config = LoadConfig("/nonexistent/talaria/config.yaml", MissingConfig::kError);
  ASSERT_FALSE(config);
  EXPECT_EQ(config.error().code(), StatusCode::kNotFound);
  EXPECT_NE(config.error().message().find("/nonexistent/talaria/config.yaml"), std::string::npos);

  RuntimeOptions options;
  options.config_path = "/nonexistent/talaria/config.yaml";
  Registry registry;
  options.registry = &registry;
  auto rt = Runtime::Create(options);
  ASSERT_FALSE(rt);
  EXPECT_EQ(rt.error().code(), StatusCode::kNotFound);
}

TEST(Config, UnknownTopLevelKeysAreWarnedAboutWithTheClosestSection) {
  DeclareConfigSection("declared_by_a_module");
  auto config = ParseConfig(
      "aproovals: {mode: yolo}\ntoolset: {}\ndeclared_by_a_module: {}\nbanana: 1\n", "cfg.yaml");
  ASSERT_TRUE(config) << config.error().message();
  EXPECT_EQ(config->warnings,
            (std::vector<std::string>{
                "cfg.yaml: unknown top-level key 'aproovals' is ignored; did you mean 'approvals'?",
                "cfg.yaml: unknown top-level key 'toolset' is ignored; did you mean 'toolsets'?",
                "cfg.yaml: unknown top-level key 'banana' is ignored",
            }));
  for (std::string_view section : KnownConfigSections()) {
    auto clean = ParseConfig(std::string(section) + ": {}\n");
    ASSERT_TRUE(clean) << section;
    EXPECT_TRUE(clean->warnings.empty()) << section;
  }
}

// The README's sample config.yaml names every section a user may set: a section some module
// reads but the known list lacks would warn there (and for every user who copies it).
TEST(Config, TheReadmesSampleConfigParsesWithoutWarnings) {
  std::ifstream readme(std::string(TALARIA_SOURCE_DIR) + "/README.md");
  ASSERT_TRUE(readme) << "README.md not found";
  std::string line, yaml;
  bool in_sample = false, seen_intro = false;
  while (std::getline(readme, line)) {
    if (line.find("`config.yaml` there:") != std::string::npos) seen_intro = true;
    if (seen_intro && !in_sample && line == "```yaml") {
      in_sample = true;
      continue;
    }
    if (in_sample && line == "```") break;
    if (in_sample) yaml += line + "\n";
  }
  ASSERT_FALSE(yaml.empty()) << "no sample config found in the README";
  auto config = ParseConfig(yaml, "README sample");
  ASSERT_TRUE(config) << config.error().message();
  EXPECT_TRUE(config->warnings.empty()) << config->warnings.front();
}

TEST(Config, ReadsToolsetsHooksAndBudgets) {
  auto config = ParseConfig(R"(
toolsets:
  review:
    description: Read-only review
    tools: [reader, searcher]
    includes: [web]
hooks:
  PreToolUse:
    - matcher: "writer"
      hooks: [{type: command, command: "true", timeout: 5}]
tool_budget:
  result_size_chars: 50000
  turn_budget_chars: 90000
  tool_overrides: {shell: 20000}
)");
  ASSERT_TRUE(config) << config.error().message();
  ASSERT_EQ(config->toolsets.size(), 1u);
  EXPECT_EQ(config->toolsets[0].name, "review");
  EXPECT_EQ(config->toolsets[0].tools, (std::vector<std::string>{"reader", "searcher"}));
  EXPECT_EQ(config->toolsets[0].includes, std::vector<std::string>{"web"});
  ASSERT_NE(config->hooks, nullptr);
  EXPECT_EQ((*config->hooks)["PreToolUse"][0]["hooks"][0]["timeout"], 5);
  EXPECT_EQ(config->budget.default_result_chars, 50000);
  EXPECT_EQ(config->budget.turn_budget_chars, 90000);
  EXPECT_EQ(config->budget.tool_overrides.at("shell"), 20000);
}

TEST(Config, ContextWindowScalesTheBudgets) {
  auto config = ParseConfig("tool_budget: {context_window_tokens: 32000}");
  ASSERT_TRUE(config);
  EXPECT_EQ(config->budget.default_result_chars, 19200);  // 15 % of 128,000 chars
  EXPECT_EQ(config->budget.turn_budget_chars, 38400);     // 30 %
}

TEST(Config, QuotedScalarsStayStrings) {
  auto config = ParseConfig("toolsets: {x: {tools: [\"true\", \"42\"]}}");
  ASSERT_TRUE(config) << config.error().message();
  EXPECT_EQ(config->toolsets[0].tools, (std::vector<std::string>{"true", "42"}));
}

TEST(Config, BadShapesAreClearErrors) {
  struct Case {
    const char* yaml;
    const char* mentions;
  };
  const Case cases[] = {
      {"toolsets: [a, b]", "toolsets must be a mapping"},
      {"toolsets: {x: {tools: reader}}", "toolsets.x.tools"},
      {"tool_budget: {result_size_chars: -5}", "result_size_chars"},
      {"tool_budget: {tool_overrides: {shell: lots}}", "tool_overrides.shell"},
      {"hooks: [1]", "hooks must be a mapping"},
      {"- just\n- a list", "top level"},
      {"key: [unclosed", "not valid YAML"},
  };
  for (const auto& c : cases) {
    auto config = ParseConfig(c.yaml, "cfg.yaml");
    ASSERT_FALSE(config) << c.yaml;
    EXPECT_NE(config.error().message().find(c.mentions), std::string::npos)
        << config.error().message();
    EXPECT_NE(config.error().message().find("cfg.yaml"), std::string::npos);
  }
}

TEST(Runtime, AppliesUserToolsetsFromTheConfigFile) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("talaria-rt-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto path = dir / "config.yaml";
  std::ofstream(path)
      << "toolsets:\n  base: {tools: [notes]}\n  mine: {tools: [tasks], includes: [base]}\n";
  Registry registry;
  RuntimeOptions options;
  options.config_path = path.string();
  options.registry = &registry;
  auto rt = Runtime::Create(options);
  ASSERT_TRUE(rt) << rt.error().message();
  auto mine = (*rt)->toolsets().Resolve("mine");
  ASSERT_TRUE(mine);
  EXPECT_EQ(**mine, (std::vector<std::string>{"notes", "tasks"}));

  std::ofstream(path) << "hooks:\n  PreToolUse:\n    - matcher: \"(\"\n      hooks: [{type: "
                         "command, command: x}]\n";
  auto broken = Runtime::Create(options);
  ASSERT_FALSE(broken) << "a bad hook regex refuses the whole config";
  EXPECT_NE(broken.error().message().find("config.yaml"), std::string::npos);
  std::filesystem::remove_all(dir);
}

// A tool call reads the config the process's Runtime loaded, not config.yaml as it is on disk
// when the call runs; before any Runtime (a program using the registry alone) it reads the file.
TEST(Runtime, ToolCallsReadTheConfigTheProcessLoaded) {
  const std::filesystem::path home =
      std::filesystem::temp_directory_path() / ("talaria-toolcfg-" + std::to_string(::getpid()));
  std::filesystem::create_directories(home);
  ::setenv("TALARIA_HOME", home.c_str(), 1);
  const std::filesystem::path path = home / "config.yaml";
  auto toolset_of = [](const Config& config) {
    return config.toolsets.empty() ? std::string() : config.toolsets[0].name;
  };

  std::ofstream(path) << "toolsets:\n  first: {tools: [a]}\n";
  auto before = ToolCallConfig();
  ASSERT_TRUE(before) << before.error().message();
  EXPECT_EQ(toolset_of(**before), "first") << "no Runtime yet: the file";
  std::ofstream(path) << "toolsets:\n  second: {tools: [a]}\n";
  EXPECT_EQ(toolset_of(**ToolCallConfig()), "second") << "no Runtime yet: the file, each call";

  auto rt = Runtime::Create({.config_path = "",
                             .registry = nullptr,
                             .install_command_hooks = true,
                             .command_policy = CommandPolicySetup::kNone});
  ASSERT_TRUE(rt) << rt.error().message();
  std::ofstream(path) << "toolsets:\n  third: {tools: [a]}\n";
  auto during = ToolCallConfig();
  ASSERT_TRUE(during) << during.error().message();
  EXPECT_EQ(toolset_of(**during), "second") << "an edit mid-run changes nothing";
  EXPECT_EQ(during->get(), LoadedProcessConfig().get()) << "the loaded config, not a copy";
  std::ofstream(path) << "toolsets: [not, a, mapping\n";
  EXPECT_TRUE(ToolCallConfig()) << "a broken file mid-run breaks no call";

  ::unsetenv("TALARIA_HOME");
  std::filesystem::remove_all(home);
}

}  // namespace
}  // namespace talaria
