// The runtime an embedder creates judges commands by default: following the README
// (Runtime::Create, OpenSession, Dispatch("terminal", ...)) ran mkfs and force pushes before the
// default policy existed (issue 18, finding 3).
#include "talaria/tools/command_policy.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "support/temp_dir.h"
#include "talaria/core/runtime.h"
#include "talaria/tools/session.h"

namespace talaria::tools {
namespace {

class EmbeddedRuntime : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::create_directories(dir_ / "work/victim/keep");
    std::ofstream(dir_ / "config.yaml") << "{}\n";
  }
  ToolResult RunIn(CommandPolicySetup setup, const std::string& command) {
    RuntimeOptions options;
    options.config_path = dir_ / "config.yaml";
    options.command_policy = setup;
    auto rt = Runtime::Create(options);
    EXPECT_TRUE(rt) << rt.error().ToString();
    SessionOptions session_options;
    session_options.roots = {dir_ / "work"};
    session_options.audit = false;
    session_options.terminal.backend = "local";
    auto session = OpenSession(session_options);
    EXPECT_TRUE(session) << session.error().ToString();
    ToolContext ctx = (*session)->NewContext("call_1");
    return (*rt)->dispatcher().Dispatch("terminal", Json{{"command", command}}.dump(), ctx);
  }
  test_support::TempDir dir_;
};

TEST_F(EmbeddedRuntime, JudgesCommandsUnlessTheEmbedderOptsOut) {
  const ToolResult refused = RunIn(CommandPolicySetup::kGuarded, "rm -rf victim");
  EXPECT_EQ(refused.status, CallStatus::kBlocked) << refused.text;
  EXPECT_TRUE(std::filesystem::exists(dir_ / "work/victim/keep"));
  const ToolResult never = RunIn(CommandPolicySetup::kGuarded, "mkfs.ext4 /dev/sda1");
  EXPECT_EQ(never.status, CallStatus::kBlocked) << never.text;

  // An explicit opt-out gets what it asked for.
  const ToolResult unjudged = RunIn(CommandPolicySetup::kNone, "rm -rf victim");
  EXPECT_TRUE(unjudged.ok()) << unjudged.text;
  EXPECT_FALSE(std::filesystem::exists(dir_ / "work/victim"));
}

}  // namespace
}  // namespace talaria::tools
