// The audit trail as a user checks it: every command a session runs is a line, and
// `talaria audit verify` says whether anyone cut or edited the log since.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli_harness.h"

namespace talaria::testing_cli {
namespace {

class AuditCli : public ::testing::Test {
 protected:
  void SetUp() override { home_.WriteConfig("terminal: {backend: local}\n"); }
  CliRun Run(const std::vector<std::string>& args) const {
    CliInvocation how;
    how.home = home_.path();
    how.cwd = home_.path();
    how.timeout = std::chrono::seconds(30);
    return RunTalaria(how, args);
  }
  std::string Log() const {
    std::ifstream in(home_.talaria_home() + "/audit.jsonl");
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
  void WriteLog(const std::string& text) const {
    std::ofstream(home_.talaria_home() + "/audit.jsonl", std::ios::trunc) << text;
  }
  TempHome home_;
};

TEST_F(AuditCli, VerifyFindsACutOffOrEditedLog) {
  for (const char* word : {"first", "second", "third"}) {
    CliRun run = Run({"call", "terminal", std::string("command=echo ") + word});
    ASSERT_EQ(run.exit_code, 0) << Describe({"call", "terminal"}, run);
  }
  // A script is a command run too: its hash and start are a line of their own.
  CliRun script = Run({"call", "execute_code", "code=print('from a script')"});
  ASSERT_EQ(script.exit_code, 0) << Describe({"call", "execute_code"}, script);
  const std::string log = Log();
  EXPECT_NE(log.find("\"command\":\"echo second\""), std::string::npos) << log;
  EXPECT_NE(log.find("\"event\":\"execute_code\""), std::string::npos) << log;
  EXPECT_NE(log.find("print('from a script')"), std::string::npos) << log;
  CliRun intact = Run({"audit", "verify"});
  EXPECT_EQ(intact.exit_code, 0) << Describe({"audit", "verify"}, intact);
  EXPECT_NE(intact.out.find("intact, 4 lines"), std::string::npos) << intact.out;

  // The last line removed, as `sed -i '$d'` or a truncate would.
  WriteLog(log.substr(0, log.rfind('\n', log.size() - 2) + 1));
  CliRun cut = Run({"audit", "verify"});
  EXPECT_EQ(cut.exit_code, 1) << Describe({"audit", "verify"}, cut);
  EXPECT_NE(cut.out.find("TAMPERED"), std::string::npos) << cut.out;
  EXPECT_NE(cut.out.find("cut off"), std::string::npos) << cut.out;

  // A command rewritten in place.
  std::string edited = log;
  edited.replace(edited.find("echo first"), 10, "echo FIRST");
  WriteLog(edited);
  CliRun changed = Run({"audit", "verify"});
  EXPECT_EQ(changed.exit_code, 1) << Describe({"audit", "verify"}, changed);
  EXPECT_NE(changed.out.find("line 2"), std::string::npos) << changed.out;

  CliRun missing = Run({"audit", "verify", "--file", home_.path() + "/nope.jsonl"});
  EXPECT_EQ(missing.exit_code, 2) << Describe({"audit", "verify"}, missing);
}

}  // namespace
}  // namespace talaria::testing_cli
