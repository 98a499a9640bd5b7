// Checkpoints end to end: a `talaria run` turn whose model overwrites a file and deletes another
// through the terminal leaves one snapshot (the project before the turn), `talaria checkpoints
// list|diff|restore` show and undo it, and bad input is a usage error, not a crash.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_harness.h"
#include "support/fake_llm_server.h"
#include "support/file_text.h"

namespace talaria::testing_cli {
namespace {

using test_support::FakeJson;
using test_support::FakeLlmServer;

FakeJson Call(const std::string& id, const std::string& name, const FakeJson& args) {
  return FakeJson{{"tool_calls", FakeJson::array({FakeJson{
                                     {"id", id}, {"name", name}, {"arguments", args.dump()}}})}};
}

class CheckpointsCli : public ::testing::Test {
 protected:
  void SetUp() override {
    project_ = home_.path() + "/project";
    std::filesystem::create_directories(project_);
    std::ofstream(project_ + "/notes.txt") << "original notes\n";
    std::ofstream(project_ + "/keep.txt") << "keep me\n";
    home_.WriteConfig("terminal:\n  backend: local\ncheckpoints:\n  enabled: true\n");
  }
  CliInvocation How() const {
    CliInvocation how;
    how.home = home_.path();
    how.cwd = project_;
    how.timeout = std::chrono::seconds(30);
    how.extra_env = {"TALARIA_API_KEY=", "OPENAI_API_KEY="};
    return how;
  }
  CliRun Talaria(const std::vector<std::string>& args) { return RunTalaria(How(), args); }

  TempHome home_;
  std::string project_;
};

TEST_F(CheckpointsCli, ATurnsChangesCanBeListedDiffedAndRestored) {
  std::string error;
  auto server = FakeLlmServer::FromScript(
      FakeJson{{"turns",
                FakeJson::array({Call("c1", "write_file",
                                      FakeJson{{"path", "notes.txt"}, {"content", "rewritten\n"}}),
                                 Call("c2", "terminal", FakeJson{{"command", "rm keep.txt"}}),
                                 FakeJson{{"text", "Done."}}})}}
          .dump(),
      &error);
  ASSERT_TRUE(server) << error;
  ASSERT_TRUE(server->Start(&error)) << error;
  const std::vector<std::string> run{"run",     "--base-url", server->base_url(),
                                     "--model", "m",          "tidy up"};
  const CliRun ran = Talaria(run);
  ASSERT_EQ(ran.exit_code, 0) << Describe(run, ran);
  EXPECT_EQ(test_support::ReadWholeFile(project_ + "/notes.txt"), "rewritten\n");
  EXPECT_FALSE(std::filesystem::exists(project_ + "/keep.txt"));

  const CliRun list = Talaria({"checkpoints", "list", "--json"});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  const nlohmann::json listed = nlohmann::json::parse(list.out);
  ASSERT_EQ(listed["checkpoints"].size(), 1U) << list.out;  // one per directory per turn
  const nlohmann::json& first = listed["checkpoints"][0];
  EXPECT_EQ(first["reason"], "before write_file");
  EXPECT_EQ(first["files_changed"], 2);
  const std::string hash = first["short_hash"];

  const CliRun diff = Talaria({"checkpoints", "diff", hash});
  ASSERT_EQ(diff.exit_code, 0) << diff.err;
  EXPECT_NE(diff.out.find("-original notes"), std::string::npos) << diff.out;
  EXPECT_NE(diff.out.find("+rewritten"), std::string::npos) << diff.out;
  EXPECT_NE(diff.out.find("keep.txt"), std::string::npos) << diff.out;

  const CliRun restore = Talaria({"checkpoints", "restore", hash, "--json"});
  ASSERT_EQ(restore.exit_code, 0) << restore.err;
  const nlohmann::json restored = nlohmann::json::parse(restore.out);
  EXPECT_EQ(restored["restored_to"], hash);
  EXPECT_TRUE(restored.contains("pre_rollback")) << restore.out;
  EXPECT_EQ(test_support::ReadWholeFile(project_ + "/notes.txt"), "original notes\n");
  EXPECT_EQ(test_support::ReadWholeFile(project_ + "/keep.txt"), "keep me\n");

  // The restore itself can be undone: the pre-rollback snapshot holds the turn's result.
  const CliRun undo = Talaria({"checkpoints", "restore", restored["pre_rollback"], "notes.txt"});
  ASSERT_EQ(undo.exit_code, 0) << undo.err;
  EXPECT_EQ(test_support::ReadWholeFile(project_ + "/notes.txt"), "rewritten\n");
}

TEST_F(CheckpointsCli, BadInputIsAUsageErrorAndNothingIsListedWhenOff) {
  const CliRun bad = Talaria({"checkpoints", "restore", "not-a-hash"});
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  EXPECT_NE(bad.err.find("not a snapshot hash"), std::string::npos) << bad.err;
  const CliRun missing = Talaria({"checkpoints", "diff", "deadbeef"});
  EXPECT_EQ(missing.exit_code, 1) << missing.err;
  const CliRun list = Talaria({"checkpoints", "list"});
  EXPECT_EQ(list.exit_code, 0) << list.err;
  EXPECT_NE(list.out.find("no checkpoints"), std::string::npos) << list.out;
}

}  // namespace
}  // namespace talaria::testing_cli
