// `talaria trust` and project-local config: a project's MCP server (talaria's own stdio server)
// is not started until the file is trusted, starts once it is, and stops starting after an edit.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "cli_harness.h"
#include "talaria/base/shell_words.h"

namespace talaria::testing_cli {
namespace {

class ProjectTrust : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::create_directories(project() + "/.talaria");
    std::filesystem::create_directories(home_.path() + "/child-home");
    // The server runs with an empty home of its own, so it sees no project trust and starts
    // nothing itself.
    config_ =
        "mcp_servers:\n  self:\n    command: " + ShellQuote(TALARIA_CLI_PATH) +
        "\n    args: [mcp]\n    env: {TALARIA_HOME: " + ShellQuote(home_.path() + "/child-home") +
        "}\ntoolsets:\n  ignored: {tools: [read_file]}\n";
    WriteProjectConfig(config_);
  }
  std::string project() const { return home_.path() + "/project"; }
  void WriteProjectConfig(const std::string& text) const {
    std::ofstream(project() + "/.talaria/config.yaml", std::ios::trunc) << text;
  }
  CliRun Run(const std::vector<std::string>& args) const {
    CliInvocation how;
    how.home = home_.path();
    how.cwd = project();
    how.timeout = std::chrono::seconds(20);
    return RunTalaria(how, args);
  }

  TempHome home_;
  std::string config_;
};

TEST_F(ProjectTrust, ServersStartOnlyWhileTheExactContentIsTrusted) {
  CliRun untrusted = Run({"tools"});
  EXPECT_EQ(untrusted.exit_code, 0) << Describe({"tools"}, untrusted);
  EXPECT_NE(
      untrusted.err.find("declares mcp_servers (self): not started, this file is not trusted"),
      std::string::npos)
      << untrusted.err;
  EXPECT_EQ(untrusted.out.find("mcp_self_read_file"), std::string::npos);

  CliRun trust = Run({"trust"});
  ASSERT_EQ(trust.exit_code, 0) << Describe({"trust"}, trust);
  EXPECT_NE(trust.out.find("mcp server self: " + ShellJoin({TALARIA_CLI_PATH, "mcp"})),
            std::string::npos)
      << trust.out;
  EXPECT_NE(trust.out.find("section 'toolsets' is ignored"), std::string::npos) << trust.out;
  EXPECT_NE(trust.out.find("trusted: this exact content may now run"), std::string::npos)
      << trust.out;

  CliRun trusted = Run({"tools"});
  EXPECT_EQ(trusted.exit_code, 0) << Describe({"tools"}, trusted);
  EXPECT_EQ(trusted.err.find("not trusted"), std::string::npos) << trusted.err;
  EXPECT_NE(trusted.out.find("mcp_self_read_file"), std::string::npos)
      << Describe({"tools"}, trusted);

  // An edit (even a comment) is a different file: untrusted again.
  WriteProjectConfig(config_ + "# harmless?\n");
  CliRun edited = Run({"tools"});
  EXPECT_NE(edited.err.find("not trusted"), std::string::npos) << edited.err;
  EXPECT_EQ(edited.out.find("mcp_self_read_file"), std::string::npos);

  WriteProjectConfig(config_);
  CliRun revoke = Run({"trust", "--revoke", project()});
  EXPECT_EQ(revoke.exit_code, 0) << Describe({"trust", "--revoke"}, revoke);
  EXPECT_EQ(Run({"trust", "--revoke"}).exit_code, 2);  // no longer trusted
}

TEST_F(ProjectTrust, MissingOrBrokenFilesAreUsageErrors) {
  CliRun missing = Run({"trust", home_.path() + "/nowhere"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("no project config at"), std::string::npos) << missing.err;
  WriteProjectConfig("mcp_servers: [not, a, mapping]\n");
  CliRun broken = Run({"trust"});
  EXPECT_EQ(broken.exit_code, 2);
  EXPECT_NE(broken.err.find("mcp_servers must be a mapping"), std::string::npos) << broken.err;
  CliRun tools = Run({"tools"});
  EXPECT_EQ(tools.exit_code, 0);  // a broken project config never stops a command
  EXPECT_NE(tools.err.find("project config"), std::string::npos) << tools.err;
}

}  // namespace
}  // namespace talaria::testing_cli
