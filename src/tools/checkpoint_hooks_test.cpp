// The checkpoint hooks of write_file, patch and terminal on a real Session with
// checkpoints.enabled: the project as it was before the turn's first change is in the store,
// destructive commands are snapshotted and harmless ones are not, and NewTurn starts over.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "support/temp_dir.h"
#include "talaria/checkpoints/checkpoint_manager.h"
#include "talaria/core/dispatcher.h"
#include "talaria/tools/session.h"

namespace talaria::tools {
namespace {

namespace fs = std::filesystem;

std::string Get(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class CheckpointHooks : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = tmp_ / "ws";
    fs::create_directories(root_);
    std::ofstream(root_ + "/notes.txt") << "original\n";
    SessionOptions options;
    options.roots = {root_};
    options.audit = false;
    options.terminal.backend = "local";
    options.checkpoints.enabled = true;
    options.checkpoints.root = tmp_ / "store";
    options.checkpoints.refused_dirs = {tmp_ / "home"};
    auto session = Session::Open(options);
    ASSERT_TRUE(session) << session.error().ToString();
    session_ = *session;
    ASSERT_NE(session_->checkpoints(), nullptr);
    ctx_ = session_->NewContext("call");
  }
  Json Call(std::string_view tool, const Json& args) {
    ToolResult r = dispatcher_.Dispatch(tool, args.dump(), ctx_);
    return Json::parse(r.text.substr(0, r.text.find("\n\n[Hint:")));
  }
  std::vector<checkpoints::CheckpointInfo> List() {
    auto list = session_->checkpoints()->store()->List(root_);
    EXPECT_TRUE(list) << list.error().ToString();
    return list ? *list : std::vector<checkpoints::CheckpointInfo>{};
  }

  test_support::TempDir tmp_;
  std::string root_;
  std::shared_ptr<Session> session_;
  ToolContext ctx_;
  Dispatcher dispatcher_;
};

TEST_F(CheckpointHooks, WriteFileIsSnapshottedBeforeTheFirstChangeOfATurn) {
  session_->NewTurn();  // as the agent loop does
  Json r = Call("write_file", {{"path", "notes.txt"}, {"content", "first edit\n"}});
  ASSERT_FALSE(r.contains("error")) << r.dump();
  r = Call("write_file", {{"path", "notes.txt"}, {"content", "second edit\n"}});
  ASSERT_FALSE(r.contains("error")) << r.dump();
  std::vector<checkpoints::CheckpointInfo> list = List();
  ASSERT_EQ(list.size(), 1U);  // one per directory per turn
  EXPECT_EQ(list[0].reason, "before write_file");

  // /rollback's path: the snapshot brings the original back.
  auto restored = session_->checkpoints()->store()->Restore(root_, list[0].hash, std::nullopt);
  ASSERT_TRUE(restored) << restored.error().ToString();
  EXPECT_EQ(Get(root_ + "/notes.txt"), "original\n");

  session_->NewTurn();
  r = Call("patch", {{"path", "notes.txt"}, {"old_string", "original"}, {"new_string", "patched"}});
  ASSERT_FALSE(r.contains("error")) << r.dump();
  list = List();
  ASSERT_EQ(list.size(), 3U);  // + the pre-rollback snapshot, + before patch
  EXPECT_EQ(list[0].reason, "before patch");
}

TEST_F(CheckpointHooks, OnlyDestructiveTerminalCommandsAreSnapshotted) {
  Json r = Call("terminal", {{"command", "ls && cat notes.txt"}});
  ASSERT_EQ(r.value("exit_code", -1), 0) << r.dump();
  EXPECT_TRUE(List().empty());
  r = Call("terminal", {{"command", "rm notes.txt"}});
  ASSERT_EQ(r.value("exit_code", -1), 0) << r.dump();
  std::vector<checkpoints::CheckpointInfo> list = List();
  ASSERT_EQ(list.size(), 1U);
  EXPECT_EQ(list[0].reason, "before terminal: rm notes.txt");
  ASSERT_TRUE(
      session_->checkpoints()->store()->Restore(root_, list[0].hash, std::string("notes.txt")));
  EXPECT_EQ(Get(root_ + "/notes.txt"), "original\n");
}

TEST_F(CheckpointHooks, OffByDefault) {
  SessionOptions options;
  options.roots = {root_};
  options.audit = false;
  options.terminal.backend = "local";
  auto session = Session::Open(options);
  ASSERT_TRUE(session) << session.error().ToString();
  EXPECT_EQ((*session)->checkpoints(), nullptr);
  EXPECT_FALSE(checkpoints::CheckpointSettings().enabled);
}

}  // namespace
}  // namespace talaria::tools
