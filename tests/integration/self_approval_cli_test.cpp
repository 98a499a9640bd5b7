// An agent cannot approve or trust itself (issue 17, findings 1 and 2), tried end to end the
// way a prompt-injected model would, with approvals at the default `deny`: every tool it has
// is pointed at $TALARIA_HOME, and the next session still refuses the dangerous command.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli_harness.h"
#include "support/file_text.h"

namespace talaria::testing_cli {
namespace {

class SelfApproval : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    home_.WriteConfig("terminal: {backend: " + GetParam() + "}\n");
    std::filesystem::create_directories(home_.path() + "/victim/keep");
  }
  CliRun Call(const std::vector<std::string>& args) const {
    CliInvocation how;
    how.home = home_.path();
    how.cwd = home_.path();  // --root ~: a root that contains $TALARIA_HOME
    how.timeout = std::chrono::seconds(30);
    std::vector<std::string> full = {"call"};
    full.insert(full.end(), args.begin(), args.end());
    return RunTalaria(how, full);
  }
  std::string approvals() const { return home_.talaria_home() + "/approvals.json"; }
  std::string trusted() const { return home_.talaria_home() + "/trusted.json"; }
  TempHome home_;
};

TEST_P(SelfApproval, NoToolCanWriteApprovalsOrTrust) {
  const std::string grant = R"(["recursive_delete"])";
  const std::vector<std::vector<std::string>> attempts = {
      {"terminal", "command=echo '" + grant + "' > ~/.talaria/approvals.json"},
      {"terminal", "command=printf '%s' '" + grant + "' | tee " + approvals()},
      {"terminal", "command=cd ~/.talaria && echo '" + grant + "' > approvals.json"},
      {"terminal", "command=python3 -c \"open('" + approvals() + "','w').write('" + grant + "')\""},
      {"terminal", "command=cp /dev/null " + trusted()},
      {"write_file", "path=" + approvals(), "content=" + grant},
      {"write_file", "path=.talaria/trusted.json", "content={\"files\":{}}"},
      {"patch", "path=" + home_.talaria_home() + "/config.yaml", "old_string=backend",
       "new_string=backend"},
  };
  for (const auto& attempt : attempts) {
    CliRun run = Call(attempt);
    EXPECT_NE(run.exit_code, 0) << Describe(attempt, run);
  }
  EXPECT_FALSE(std::filesystem::exists(approvals())) << test_support::ReadWholeFile(approvals());
  EXPECT_FALSE(std::filesystem::exists(trusted())) << test_support::ReadWholeFile(trusted());

  // The next session, still at the default deny: the recursive delete is refused.
  CliRun rm = Call({"terminal", "command=rm -rf victim"});
  EXPECT_EQ(rm.exit_code, 1) << Describe({"terminal", "rm -rf victim"}, rm);
  EXPECT_TRUE(std::filesystem::exists(home_.path() + "/victim/keep"));
}

INSTANTIATE_TEST_SUITE_P(Backends, SelfApproval, ::testing::Values("local", "auto"));

}  // namespace
}  // namespace talaria::testing_cli
