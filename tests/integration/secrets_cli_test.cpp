// talaria's own secrets out of its children's reach: a command that reads its parent's start-up
// environment (/proc/$PPID/environ, or every process's) finds no secret-named variable's value,
// even spelled backwards to dodge the output redaction.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "cli_harness.h"

namespace talaria::testing_cli {
namespace {

TEST(Secrets, ACommandCannotReadTalariasKeysFromProc) {
  TempHome home;
  const std::string canary = "canary-7f3a9c21-do-not-leak";
  std::string reversed = canary;
  std::reverse(reversed.begin(), reversed.end());
  CliInvocation how;
  how.home = home.path();
  how.cwd = home.path();
  how.timeout = std::chrono::seconds(30);
  how.extra_env = {"OPENAI_API_KEY=" + canary, "TALARIA_MCP_TOKEN=" + canary};
  home.WriteConfig("terminal: {backend: local}\n");
  const std::vector<std::string> args = {
      "call", "terminal",
      "command=cat /proc/$PPID/environ /proc/*/environ 2>/dev/null | tr '\\0' '\\n' | rev; "
      "echo done"};
  CliRun run = RunTalaria(how, args);
  ASSERT_EQ(run.exit_code, 0) << Describe(args, run);
  EXPECT_NE(run.out.find("done"), std::string::npos) << Describe(args, run);
  EXPECT_EQ(run.out.find(reversed), std::string::npos) << Describe(args, run);
  EXPECT_EQ(run.out.find(canary), std::string::npos) << Describe(args, run);
  // The names are still there: only the values are wiped (talaria itself still has them).
  EXPECT_NE(run.out.find("YEK_IPA_IANEPO"), std::string::npos) << Describe(args, run);
}

}  // namespace
}  // namespace talaria::testing_cli
