// CheckpointManager and ProjectDirFor: one snapshot per project directory per turn, the
// project found by its markers and never above the session's root, terminal commands
// snapshotted only when destructive, failures never thrown at the tool.
#include "talaria/checkpoints/checkpoint_manager.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "support/temp_dir.h"

namespace talaria::checkpoints {
namespace {

namespace fs = std::filesystem;
using test_support::TempDir;

void Put(const std::string& path, const std::string& content) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path, std::ios::binary | std::ios::trunc) << content;
}

TEST(ProjectDirFor, FindsTheNearestMarkerButNeverAboveTheBoundary) {
  TempDir tmp;
  const std::string root = tmp / "ws";
  Put(root + "/app/package.json", "{}");
  Put(root + "/app/src/deep/x.js", "");
  Put(root + "/loose/notes.txt", "");
  Put(tmp / "Makefile", "");  // above the boundary: not a candidate
  EXPECT_EQ(ProjectDirFor(root + "/app/src/deep/x.js", root), root + "/app");
  EXPECT_EQ(ProjectDirFor(root + "/app/src/deep", root), root + "/app");
  EXPECT_EQ(ProjectDirFor(root + "/loose/notes.txt", root), root);
  EXPECT_EQ(ProjectDirFor(root + "/new/file.txt", root), root);  // not created yet
  // Without a boundary it stops at the file's directory unless a marker is found above.
  EXPECT_EQ(ProjectDirFor(root + "/app/src/deep/x.js", ""), root + "/app");
}

class CheckpointManagerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = tmp_ / "ws";
    fs::create_directories(root_);
    CheckpointSettings settings;
    settings.enabled = true;
    settings.root = tmp_ / "store";
    settings.refused_dirs = {tmp_ / "home"};
    auto store = CheckpointStore::Open(settings);
    ASSERT_TRUE(store) << store.error().ToString();
    store_ = *store;
    manager_ = std::make_unique<CheckpointManager>(store_, std::vector<std::string>{root_});
  }
  size_t Count() {
    auto list = store_->List(root_);
    EXPECT_TRUE(list) << list.error().ToString();
    return list ? list->size() : 0;
  }

  TempDir tmp_;
  std::string root_;
  std::shared_ptr<CheckpointStore> store_;
  std::unique_ptr<CheckpointManager> manager_;
};

TEST_F(CheckpointManagerTest, SnapshotsEachDirectoryOncePerTurn) {
  manager_->NewTurn();
  Put(root_ + "/a.txt", "1\n");
  manager_->BeforeFileMutation(root_ + "/a.txt", "write_file");
  EXPECT_EQ(Count(), 1U);
  Put(root_ + "/a.txt", "2\n");
  manager_->BeforeFileMutation(root_ + "/a.txt", "patch");  // same turn: no second snapshot
  EXPECT_EQ(Count(), 1U);
  EXPECT_EQ(manager_->TouchedThisTurn(), std::vector<std::string>{root_});
  manager_->NewTurn();
  manager_->BeforeFileMutation(root_ + "/a.txt", "patch");
  ASSERT_EQ(Count(), 2U);
  EXPECT_EQ(store_->List(root_)->front().reason, "before patch");
}

TEST_F(CheckpointManagerTest, WithoutTurnsEveryChangedStateIsSnapshotted) {
  // talaria call, the MCP server: no turns, so no dedup; an unchanged directory adds nothing.
  Put(root_ + "/a.txt", "1\n");
  manager_->BeforeFileMutation(root_ + "/a.txt", "write_file");
  manager_->BeforeFileMutation(root_ + "/a.txt", "write_file");
  EXPECT_EQ(Count(), 1U);
  Put(root_ + "/a.txt", "2\n");
  manager_->BeforeFileMutation(root_ + "/a.txt", "write_file");
  EXPECT_EQ(Count(), 2U);
}

TEST_F(CheckpointManagerTest, SnapshotsOnlyBeforeDestructiveCommands) {
  Put(root_ + "/a.txt", "1\n");
  manager_->BeforeCommand("ls -la && cat a.txt", root_);
  EXPECT_EQ(Count(), 0U);
  manager_->BeforeCommand("rm a.txt", root_);
  ASSERT_EQ(Count(), 1U);
  EXPECT_EQ(store_->List(root_)->front().reason, "before terminal: rm a.txt");
}

TEST_F(CheckpointManagerTest, AFailingSnapshotDoesNotThrowOrStopTheCaller) {
  // The home directory is refused; the call returns and nothing is stored.
  manager_ = std::make_unique<CheckpointManager>(store_, std::vector<std::string>{tmp_ / "home"});
  fs::create_directories(tmp_ / "home");
  manager_->BeforeFileMutation(tmp_ / "home/x.txt", "write_file");
  auto usage = store_->Usage();
  ASSERT_TRUE(usage);
  EXPECT_EQ(usage->snapshots, 0U);
}

}  // namespace
}  // namespace talaria::checkpoints
