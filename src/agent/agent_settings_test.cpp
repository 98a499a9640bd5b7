#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "talaria/agent/agent.h"

namespace talaria::agent {
namespace {

Result<AgentOptions> FromYaml(std::string_view yaml) {
  auto config = ParseConfig(yaml);
  if (!config) return Err(config.error());
  return AgentOptionsFromConfig(*config);
}

TEST(AgentSettings, AbsentSectionKeepsTheDefaults) {
  auto options = FromYaml("toolsets: {}\n");
  ASSERT_TRUE(options) << options.error().message();
  EXPECT_EQ(options->max_iterations, 90);
  EXPECT_DOUBLE_EQ(options->compression_threshold, 0.50);
  EXPECT_TRUE(options->load_context_files);
}

TEST(AgentSettings, ReadsEveryKey) {
  auto options = FromYaml(
      "agent:\n  max_iterations: 12\n  compression_threshold: 0.7\n  compaction_tail_ratio: 0.1\n"
      "  load_context_files: false\n  system_prompt: Answer in French.\n");
  ASSERT_TRUE(options) << options.error().message();
  EXPECT_EQ(options->max_iterations, 12);
  EXPECT_DOUBLE_EQ(options->compression_threshold, 0.7);
  EXPECT_DOUBLE_EQ(options->compaction_tail_ratio, 0.1);
  EXPECT_FALSE(options->load_context_files);
  EXPECT_EQ(options->extra_system_prompt, "Answer in French.");
}

TEST(AgentSettings, NamesTheBadKey) {
  for (const char* yaml : {"agent:\n  max_iterations: 0\n", "agent:\n  max_iterations: many\n",
                           "agent:\n  compression_threshold: 2\n", "agent:\n  maxiterations: 5\n",
                           "agent:\n  load_context_files: maybe\n", "agent: [1]\n"}) {
    auto options = FromYaml(yaml);
    ASSERT_FALSE(options) << yaml;
    EXPECT_NE(options.error().message().find("agent"), std::string::npos) << yaml;
  }
  EXPECT_NE(FromYaml("agent:\n  maxiterations: 5\n").error().message().find("maxiterations"),
            std::string::npos);
}

TEST(AgentSettings, TheConfigDoesNotWarnAboutTheSection) {
  auto config = ParseConfig("agent:\n  max_iterations: 3\n");
  ASSERT_TRUE(config);
  EXPECT_TRUE(config->warnings.empty()) << config->warnings.front();
}

}  // namespace
}  // namespace talaria::agent
