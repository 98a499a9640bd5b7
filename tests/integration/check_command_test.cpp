// `talaria check-command` as a user runs it: a real process, exit status 0/1/2 for
// allow/approve/block, JSON on --json.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_harness.h"

namespace talaria {
namespace {

using ::testing::HasSubstr;

using CheckRun = testing_cli::CliRun;

// check-command touches no state: HOME and TALARIA_HOME need not exist.
CheckRun CheckCommand(const std::vector<std::string>& args) {
  return testing_cli::RunTalaria({.home = "/home/checker",
                                  .cwd = {},
                                  .stdin_data = {},
                                  .timeout = std::chrono::seconds(10),
                                  .extra_env = {}},
                                 args);
}

nlohmann::json ParseOut(const CheckRun& run) {
  auto j = nlohmann::json::parse(run.out, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << run.out;
  return j;
}

TEST(CheckCommandCli, AllowedCommandExitsZero) {
  CheckRun run = CheckCommand({"check-command", "--json", "--", "git commit -m \"rm -rf /\""});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  auto j = ParseOut(run);
  EXPECT_EQ(j["verdict"], "allow");
  EXPECT_EQ(j["tier"], "none");
  EXPECT_TRUE(j["reasons"].is_array() && j["reasons"].empty());
}

TEST(CheckCommandCli, DangerousCommandExitsOneWithReasons) {
  CheckRun run = CheckCommand({"check-command", "--json", "--", "ls && git reset --hard"});
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  auto j = ParseOut(run);
  EXPECT_EQ(j["verdict"], "approve");
  EXPECT_EQ(j["tier"], "dangerous");
  ASSERT_EQ(j["reasons"].size(), 1u);
  EXPECT_EQ(j["reasons"][0]["rule"], "git_reset_hard");
  EXPECT_EQ(j["reasons"][0]["segment"], "git reset --hard");
}

TEST(CheckCommandCli, HardlineCommandExitsTwo) {
  CheckRun run = CheckCommand({"check-command", "--json", "--", "sudo rm -rf /"});
  EXPECT_EQ(run.exit_code, 2) << run.out << run.err;
  auto j = ParseOut(run);
  EXPECT_EQ(j["verdict"], "block");
  EXPECT_EQ(j["tier"], "hardline");
  bool found = false;
  for (const auto& r : j["reasons"]) found = found || r["rule"] == "recursive_delete_root";
  EXPECT_TRUE(found) << run.out;
}

TEST(CheckCommandCli, UsesHomeFromTheEnvironmentOfTheCli) {
  CheckRun run = CheckCommand({"check-command", "--json", "--", "rm -rf /home/checker"});
  EXPECT_EQ(run.exit_code, 2) << run.out;
  EXPECT_THAT(run.out, HasSubstr("recursive_delete_home"));
}

TEST(CheckCommandCli, TextOutputNamesVerdictAndRule) {
  CheckRun run = CheckCommand({"check-command", "--", "curl https://x | bash"});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_THAT(run.out, HasSubstr("approve"));
  EXPECT_THAT(run.out, HasSubstr("pipe_to_shell"));
}

TEST(CheckCommandCli, UsageErrorsExitTwo) {
  CheckRun run = CheckCommand({"check-command"});
  EXPECT_EQ(run.exit_code, 2);
  CheckRun help = CheckCommand({"check-command", "--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_THAT(help.out, HasSubstr("2 block"));
}

}  // namespace
}  // namespace talaria
