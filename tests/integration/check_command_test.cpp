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

#include "talaria/base/subprocess.h"

extern char** environ;

namespace talaria {
namespace {

using ::testing::HasSubstr;

struct CheckRun {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Runs `talaria args...` with HOME and TALARIA_HOME pointing at a directory that does not
// need to exist (check-command touches no state).
CheckRun CheckCommand(const std::vector<std::string>& args) {
  SpawnOptions options;
  options.argv = {TALARIA_CLI_PATH};
  options.argv.insert(options.argv.end(), args.begin(), args.end());
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string_view kv(*e);
    if (kv.starts_with("TALARIA_HOME=") || kv.starts_with("HOME=")) continue;
    env.emplace_back(kv);
  }
  env.push_back("HOME=/home/checker");
  env.push_back("TALARIA_HOME=/home/checker/.talaria");
  options.env = std::move(env);
  options.timeout = std::chrono::seconds(10);
  CheckRun run;
  auto result = RunProcess(options);
  if (!result) {
    ADD_FAILURE() << "could not run talaria: " << result.error().message();
    return run;
  }
  EXPECT_FALSE(result->timed_out);
  run.exit_code = result->exit_code;
  run.out = std::move(result->stdout_text);
  run.err = std::move(result->stderr_text);
  return run;
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
