// The store against real directories and real libgit2 repositories: snapshot, list, diff and
// restore; what is left out; the caps; refusals; hostile hashes, paths and symlinks.
#include "talaria/checkpoints/checkpoint_store.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <thread>

#include "support/temp_dir.h"

namespace talaria::checkpoints {
namespace {
namespace store_cases {

namespace fs = std::filesystem;
using test_support::TempDir;

void Put(const std::string& path, const std::string& content) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path, std::ios::binary | std::ios::trunc) << content;
}

std::string Get(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Every regular file under `dir` with its content and mtime, to prove nothing changed.
std::map<std::string, std::string> Fingerprint(const std::string& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    struct stat st {};
    ::stat(e.path().c_str(), &st);
    out[e.path().string()] = Get(e.path().string()) + "@" + std::to_string(st.st_mtim.tv_sec) +
                             "." + std::to_string(st.st_mtim.tv_nsec);
  }
  return out;
}

// Text that compresses badly (so sizes in the store track sizes on disk).
std::string NoisyText(size_t bytes, unsigned seed) {
  static constexpr char kAlphabet[] =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/";
  std::mt19937 rng(seed);
  std::string out(bytes, 'x');
  for (size_t i = 0; i < bytes; ++i) out[i] = (i % 80 == 79) ? '\n' : kAlphabet[rng() % 64];
  return out;
}

class CheckpointStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    project_ = tmp_ / "project";
    fs::create_directories(project_);
    settings_.enabled = true;
    settings_.root = tmp_ / "store";
    settings_.refused_dirs = {tmp_ / "home"};
    fs::create_directories(tmp_ / "home");
  }

  std::shared_ptr<CheckpointStore> OpenStore() {
    auto store = CheckpointStore::Open(settings_);
    EXPECT_TRUE(store) << store.error().ToString();
    return store ? *store : nullptr;
  }

  SnapshotOutcome Take(CheckpointStore& store, const std::string& reason = "before write_file") {
    auto outcome = store.Snapshot(project_, reason);
    EXPECT_TRUE(outcome) << outcome.error().ToString();
    return outcome ? *outcome : SnapshotOutcome{SnapshotKind::kSkipped, "", "error"};
  }

  std::vector<CheckpointInfo> ListOf(CheckpointStore& store) {
    auto list = store.List(project_);
    EXPECT_TRUE(list) << list.error().ToString();
    return list ? *list : std::vector<CheckpointInfo>{};
  }

  TempDir tmp_;
  std::string project_;
  CheckpointSettings settings_;
};

TEST_F(CheckpointStoreTest, SnapshotsListsDiffsAndRestores) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  Put(project_ + "/a.txt", "one\n");
  Put(project_ + "/sub/b.txt", "bee\n");
  const SnapshotOutcome first = Take(*store);
  ASSERT_EQ(first.kind, SnapshotKind::kTaken);
  EXPECT_EQ(first.hash.size(), 40U);

  Put(project_ + "/a.txt", "two\n");
  fs::remove(project_ + "/sub/b.txt");
  const SnapshotOutcome second = Take(*store, "before terminal: rm sub/b.txt");
  ASSERT_EQ(second.kind, SnapshotKind::kTaken);

  std::vector<CheckpointInfo> list = ListOf(*store);
  ASSERT_EQ(list.size(), 2U);
  EXPECT_EQ(list[0].hash, second.hash);  // newest first
  EXPECT_EQ(list[0].short_hash, second.hash.substr(0, 8));
  EXPECT_EQ(list[0].reason, "before terminal: rm sub/b.txt");
  EXPECT_EQ(list[0].files_changed, 2);
  EXPECT_EQ(list[0].insertions, 1);
  EXPECT_EQ(list[0].deletions, 2);
  EXPECT_EQ(list[1].reason, "before write_file");
  EXPECT_EQ(list[1].files_changed, 2);
  EXPECT_EQ(list[1].insertions, 2);
  EXPECT_GE(list[0].timestamp, list[1].timestamp);

  auto diff = store->Diff(project_, first.hash.substr(0, 8));
  ASSERT_TRUE(diff) << diff.error().ToString();
  EXPECT_NE(diff->find("-one"), std::string::npos) << *diff;
  EXPECT_NE(diff->find("+two"), std::string::npos) << *diff;
  EXPECT_NE(diff->find("sub/b.txt"), std::string::npos) << *diff;

  // The whole snapshot back; the present equals the newest snapshot, so no pre-rollback one.
  auto restored = store->Restore(project_, first.hash.substr(0, 8), std::nullopt);
  ASSERT_TRUE(restored) << restored.error().ToString();
  EXPECT_EQ(Get(project_ + "/a.txt"), "one\n");
  EXPECT_EQ(Get(project_ + "/sub/b.txt"), "bee\n");
  EXPECT_EQ(restored->restored_to, first.hash.substr(0, 8));
  EXPECT_EQ(restored->reason, "before write_file");
  EXPECT_EQ(restored->directory, project_);
  EXPECT_TRUE(restored->pre_rollback.empty());
  EXPECT_EQ(restored->files_restored.size(), 2U);

  // One file, from a present that differs: the present is snapshotted first.
  Put(project_ + "/a.txt", "three\n");
  Put(project_ + "/sub/b.txt", "changed too\n");
  auto one = store->Restore(project_, second.hash, std::string("a.txt"));
  ASSERT_TRUE(one) << one.error().ToString();
  EXPECT_EQ(Get(project_ + "/a.txt"), "two\n");
  EXPECT_EQ(Get(project_ + "/sub/b.txt"), "changed too\n");  // only the file asked for
  EXPECT_EQ(one->file, "a.txt");
  ASSERT_FALSE(one->pre_rollback.empty());
  list = ListOf(*store);
  ASSERT_EQ(list.size(), 3U);
  EXPECT_EQ(list[0].short_hash, one->pre_rollback);
  EXPECT_NE(list[0].reason.find("pre-rollback"), std::string::npos);
  // ... and that snapshot brings "three" back.
  ASSERT_TRUE(store->Restore(project_, one->pre_rollback, std::string("a.txt")));
  EXPECT_EQ(Get(project_ + "/a.txt"), "three\n");
}

TEST_F(CheckpointStoreTest, TakesNoSnapshotWhenNothingChanged) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  Put(project_ + "/a.txt", "same\n");
  const SnapshotOutcome first = Take(*store);
  const SnapshotOutcome again = Take(*store);
  EXPECT_EQ(again.kind, SnapshotKind::kUnchanged);
  EXPECT_EQ(again.hash, first.hash);
  EXPECT_EQ(ListOf(*store).size(), 1U);
}

TEST_F(CheckpointStoreTest, SeesARewriteOfTheSameSizeRightAfterASnapshot) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  Put(project_ + "/a.txt", "aaaa\n");
  ASSERT_EQ(Take(*store).kind, SnapshotKind::kTaken);
  // Same size, same inode, likely the same clock tick: the stat cache must not trust it.
  { std::fstream(project_ + "/a.txt", std::ios::in | std::ios::out | std::ios::binary) << "bbbb"; }
  EXPECT_EQ(Take(*store).kind, SnapshotKind::kTaken);
}

TEST_F(CheckpointStoreTest, NeverTouchesTheUsersRepositoryAndLeavesOutExcludedFiles) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  Put(project_ + "/.git/HEAD", "ref: refs/heads/main\n");
  Put(project_ + "/.git/config", "[core]\n\tbare = false\n");
  Put(project_ + "/.git/objects/ab/cdef", "x");
  Put(project_ + "/src/main.cpp", "int main() {}\n");
  Put(project_ + "/node_modules/dep/index.js", "module.exports = 1;\n");
  Put(project_ + "/build/out.txt", "built\n");
  Put(project_ + "/__pycache__/m.cpython-311.pyc", "x");
  Put(project_ + "/.env", "SECRET=1\n");
  Put(project_ + "/.env.local", "SECRET=2\n");
  Put(project_ + "/server.log", "log line\n");
  Put(project_ + "/logo.png", "png");
  Put(project_ + "/blob.dat", std::string("bin\0ary", 7));
  const auto git_before = Fingerprint(project_ + "/.git");

  ASSERT_EQ(Take(*store).kind, SnapshotKind::kTaken);
  std::vector<CheckpointInfo> list = ListOf(*store);
  ASSERT_EQ(list.size(), 1U);
  EXPECT_EQ(list[0].files_changed, 1);  // src/main.cpp only

  // A restore writes back only what was snapshotted, and never into .git.
  fs::remove(project_ + "/src/main.cpp");
  auto restored = store->Restore(project_, list[0].hash, std::nullopt);
  ASSERT_TRUE(restored) << restored.error().ToString();
  EXPECT_EQ(restored->files_restored, std::vector<std::string>{"src/main.cpp"});
  EXPECT_EQ(Get(project_ + "/src/main.cpp"), "int main() {}\n");
  EXPECT_EQ(Fingerprint(project_ + "/.git"), git_before);
  // The store is not a repository inside the project.
  EXPECT_FALSE(fs::exists(project_ + "/.git/refs/talaria"));
}

TEST_F(CheckpointStoreTest, LeavesOutFilesOverTheFileCapAndSaysSo) {
  settings_.max_file_bytes = 1000;
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  Put(project_ + "/small.txt", "small\n");
  Put(project_ + "/big.txt", NoisyText(2000, 1));
  const SnapshotOutcome outcome = Take(*store);
  ASSERT_EQ(outcome.kind, SnapshotKind::kTaken);
  EXPECT_NE(outcome.note.find("big.txt"), std::string::npos) << outcome.note;
  EXPECT_EQ(ListOf(*store)[0].files_changed, 1);
}

TEST_F(CheckpointStoreTest, SkipsADirectoryWithTooManyFiles) {
  settings_.max_files = 5;
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  for (int i = 0; i < 10; ++i) Put(project_ + "/f" + std::to_string(i) + ".txt", "x\n");
  const SnapshotOutcome outcome = Take(*store);
  EXPECT_EQ(outcome.kind, SnapshotKind::kSkipped);
  EXPECT_NE(outcome.note.find("more than 5 files"), std::string::npos) << outcome.note;
  EXPECT_TRUE(ListOf(*store).empty());
}

TEST_F(CheckpointStoreTest, KeepsMaxSnapshotsAndSweepsWhatThePrunedOnesHeld) {
  settings_.max_snapshots = 3;
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  std::vector<std::string> hashes;
  uint64_t bytes_at_three = 0;
  for (unsigned i = 0; i < 8; ++i) {
    Put(project_ + "/data.txt", NoisyText(64 * 1024, i));
    hashes.push_back(Take(*store).hash);
    if (i == 2) bytes_at_three = store->Usage()->bytes;
  }
  std::vector<CheckpointInfo> list = ListOf(*store);
  ASSERT_EQ(list.size(), 3U);
  EXPECT_EQ(list[0].hash, hashes[7]);
  EXPECT_EQ(list[2].hash, hashes[5]);
  auto gone = store->Diff(project_, hashes[0]);
  ASSERT_FALSE(gone);
  EXPECT_EQ(gone.error().code(), StatusCode::kNotFound);
  // Eight snapshots of 64 KiB each, three kept: the store holds three's worth, not eight.
  const uint64_t bytes = store->Usage()->bytes;
  EXPECT_LT(bytes, bytes_at_three + 32 * 1024) << bytes << " vs " << bytes_at_three;
  // And what is kept is whole: the oldest kept snapshot restores.
  ASSERT_TRUE(store->Restore(project_, hashes[5], std::string("data.txt")));
  EXPECT_EQ(Get(project_ + "/data.txt"), NoisyText(64 * 1024, 5));
}

TEST_F(CheckpointStoreTest, HoldsTheTotalSizeCapAfterEverySnapshot) {
  settings_.max_total_bytes = 300 * 1024;
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  const std::string other = tmp_ / "other";
  for (unsigned i = 0; i < 12; ++i) {
    // Two projects alternate, each snapshot adding ~64 KiB that compresses little.
    const std::string& dir = i % 2 == 0 ? project_ : other;
    Put(dir + "/data.txt", NoisyText(64 * 1024, 100 + i));
    auto outcome = store->Snapshot(dir, "before write_file");
    ASSERT_TRUE(outcome) << outcome.error().ToString();
    EXPECT_EQ(outcome->kind, SnapshotKind::kTaken);
    auto usage = store->Usage();
    ASSERT_TRUE(usage);
    EXPECT_LE(usage->bytes, settings_.max_total_bytes) << "after snapshot " << i;
  }
  // The newest of each project survived; the oldest went.
  auto mine = ListOf(*store);
  ASSERT_FALSE(mine.empty());
  EXPECT_LT(mine.size(), 6U);
  auto restored = store->Restore(project_, mine[0].hash, std::string("data.txt"));
  ASSERT_TRUE(restored) << restored.error().ToString();
  EXPECT_EQ(Get(project_ + "/data.txt"), NoisyText(64 * 1024, 110));
}

TEST_F(CheckpointStoreTest, DropsASnapshotLargerThanTheWholeCap) {
  settings_.max_total_bytes = 16 * 1024;
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  Put(project_ + "/data.txt", NoisyText(64 * 1024, 7));
  const SnapshotOutcome outcome = Take(*store);
  EXPECT_EQ(outcome.kind, SnapshotKind::kSkipped);
  EXPECT_NE(outcome.note.find("max_total_size_mb"), std::string::npos);
  EXPECT_LE(store->Usage()->bytes, settings_.max_total_bytes);
}

TEST_F(CheckpointStoreTest, DeletesProjectsWhoseDirectoryIsGoneWhenOverTheCap) {
  settings_.max_total_bytes = 120 * 1024;
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  const std::string gone = tmp_ / "gone";
  Put(gone + "/data.txt", NoisyText(100 * 1024, 1));
  ASSERT_TRUE(store->Snapshot(gone, "x"));
  fs::remove_all(gone);
  Put(project_ + "/data.txt", NoisyText(100 * 1024, 2));
  ASSERT_EQ(Take(*store).kind, SnapshotKind::kTaken);
  auto usage = store->Usage();
  ASSERT_TRUE(usage);
  EXPECT_EQ(usage->projects, 1U);
  EXPECT_EQ(ListOf(*store).size(), 1U);
}

TEST_F(CheckpointStoreTest, RefusesTheRootTheHomeAndItsOwnState) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  for (const std::string& dir :
       {std::string("/"), tmp_ / "home", settings_.root, settings_.root + "/x"}) {
    fs::create_directories(dir);
    auto outcome = store->Snapshot(dir, "x");
    ASSERT_FALSE(outcome) << dir;
    EXPECT_EQ(outcome.error().code(), StatusCode::kPermissionDenied) << dir;
  }
  auto relative = store->Snapshot("project", "x");
  ASSERT_FALSE(relative);
  EXPECT_EQ(relative.error().code(), StatusCode::kInvalidArgument);
  auto missing = store->Snapshot(tmp_ / "missing", "x");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code(), StatusCode::kInvalidArgument);
}

TEST_F(CheckpointStoreTest, RejectsBadHashesAndPathsOutsideTheProject) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  Put(project_ + "/a.txt", "a\n");
  const SnapshotOutcome taken = Take(*store);
  for (const char* bad : {"abc", "xyz123", "../../etc", "",
                          "0123456789abcdef0123456789abcdef"
                          "0123456789abcdef0123456789abcdef0"}) {
    auto r = store->Restore(project_, bad, std::nullopt);
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().code(), StatusCode::kInvalidArgument) << bad;
  }
  auto unknown = store->Restore(project_, "deadbeef", std::nullopt);
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().code(), StatusCode::kNotFound);
  for (const char* bad : {"../outside.txt", "/etc/passwd", "a/../../x", "./a.txt", ""}) {
    auto r = store->Restore(project_, taken.hash, std::string(bad));
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().code(), StatusCode::kInvalidArgument) << bad;
  }
  auto absent = store->Restore(project_, taken.hash, std::string("nope.txt"));
  ASSERT_FALSE(absent);
  EXPECT_EQ(absent.error().code(), StatusCode::kNotFound);
  // An absolute path inside the project is the same file.
  EXPECT_TRUE(store->Restore(project_, taken.hash, project_ + "/a.txt"));
}

std::string LinkTarget(const std::string& path) {
  std::error_code ec;
  if (!fs::is_symlink(fs::symlink_status(path, ec))) return "(not a link)";
  return fs::read_symlink(path, ec).string();
}

TEST_F(CheckpointStoreTest, RestoreDoesNotFollowASymlinkPlantedSince) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  Put(project_ + "/sub/b.txt", "bee\n");
  const SnapshotOutcome taken = Take(*store);
  const std::string outside = tmp_ / "outside";
  fs::create_directories(outside);
  fs::remove_all(project_ + "/sub");
  fs::create_directory_symlink(outside, project_ + "/sub");
  // The link is replaced by the directory the snapshot has (the pre-rollback snapshot keeps
  // the link); nothing is written where it pointed.
  auto r = store->Restore(project_, taken.hash, std::nullopt);
  ASSERT_TRUE(r) << r.error().ToString();
  EXPECT_FALSE(fs::exists(outside + "/b.txt"));
  EXPECT_FALSE(fs::is_symlink(project_ + "/sub"));
  EXPECT_EQ(Get(project_ + "/sub/b.txt"), "bee\n");
  // Undoing the restore brings the link back as a link where the directory now stands (the
  // second pre-rollback snapshot keeps sub/b.txt), still pointing out, still unfollowed.
  ASSERT_FALSE(r->pre_rollback.empty());
  auto undo = store->Restore(project_, r->pre_rollback, std::nullopt);
  ASSERT_TRUE(undo) << undo.error().ToString();
  EXPECT_EQ(fs::read_symlink(project_ + "/sub"), fs::path(outside));
  EXPECT_TRUE(fs::is_empty(outside));
  ASSERT_FALSE(undo->pre_rollback.empty());
  ASSERT_TRUE(store->Restore(project_, undo->pre_rollback, std::nullopt));
  EXPECT_EQ(Get(project_ + "/sub/b.txt"), "bee\n");
}

TEST_F(CheckpointStoreTest, RestoreReplacesADirectoryWithTheSnapshotsLinkOnlyWhenItIsKept) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  const std::string outside = tmp_ / "outside";
  Put(outside + "/keep.txt", "outside\n");
  Put(project_ + "/lib/impl.txt", "v1\n");
  fs::create_directory_symlink("lib", project_ + "/current");
  const SnapshotOutcome taken = Take(*store);
  ASSERT_EQ(taken.kind, SnapshotKind::kTaken);
  const auto outside_before = Fingerprint(outside);

  // The link became a real tree: nested directories, a link inside leading out of the project,
  // a dangling one, an empty directory.
  fs::remove(project_ + "/current");
  Put(project_ + "/current/a.txt", "a\n");
  Put(project_ + "/current/deep/er/b.txt", "b\n");
  fs::create_directories(project_ + "/current/empty");
  fs::create_directory_symlink(outside, project_ + "/current/deep/out");
  fs::create_symlink("nowhere", project_ + "/current/dangling");
  auto r = store->Restore(project_, taken.hash, std::nullopt);
  ASSERT_TRUE(r) << r.error().ToString();
  EXPECT_EQ(LinkTarget(project_ + "/current"), "lib");
  EXPECT_EQ(Get(project_ + "/current/impl.txt"), "v1\n");  // through the restored link
  EXPECT_EQ(Fingerprint(outside), outside_before);         // the link inside was not followed
  EXPECT_TRUE(fs::exists(outside + "/keep.txt"));

  // The tree comes back whole from the pre-rollback snapshot (the empty directory aside: git
  // keeps no directories), and so does the link inside it.
  ASSERT_FALSE(r->pre_rollback.empty());
  auto back = store->Restore(project_, r->pre_rollback, std::nullopt);
  ASSERT_TRUE(back) << back.error().ToString();
  EXPECT_FALSE(fs::is_symlink(project_ + "/current"));
  EXPECT_EQ(Get(project_ + "/current/deep/er/b.txt"), "b\n");
  EXPECT_EQ(LinkTarget(project_ + "/current/deep/out"), outside);
  EXPECT_EQ(LinkTarget(project_ + "/current/dangling"), "nowhere");

  // A file the snapshots leave out (an .env file, a node_modules tree) stays: the directory is
  // not replaced, the error names the file and the pre-rollback snapshot, and nothing under
  // the directory was removed.
  Put(project_ + "/current/.env", "SECRET=1\n");
  auto refused = store->Restore(project_, taken.hash, std::nullopt);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message().find("current/.env"), std::string::npos)
      << refused.error().ToString();
  EXPECT_NE(refused.error().message().find("pre-rollback snapshot"), std::string::npos)
      << refused.error().ToString();
  EXPECT_EQ(Get(project_ + "/current/.env"), "SECRET=1\n");
  EXPECT_EQ(Get(project_ + "/current/a.txt"), "a\n");
  EXPECT_EQ(Get(project_ + "/current/deep/er/b.txt"), "b\n");
  EXPECT_EQ(Fingerprint(outside), outside_before);

  // One file alone: a directory standing where the snapshot has a file is replaced too.
  fs::remove(project_ + "/current/.env");
  fs::remove_all(project_ + "/lib/impl.txt");
  Put(project_ + "/lib/impl.txt/x.txt", "now a directory\n");
  ASSERT_TRUE(store->Restore(project_, taken.hash, std::string("lib/impl.txt")));
  EXPECT_EQ(Get(project_ + "/lib/impl.txt"), "v1\n");
}

TEST_F(CheckpointStoreTest, KeepsSymlinksAsLinksAndNeverReadsWhatTheyPointAt) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  const std::string outside = tmp_ / "outside";
  Put(outside + "/secret.txt", "outside secret\n");
  Put(project_ + "/a.txt", "alpha\n");
  fs::create_symlink("a.txt", project_ + "/to_a");
  fs::create_symlink(outside + "/secret.txt", project_ + "/to_secret");
  fs::create_directory_symlink(outside, project_ + "/to_outside_dir");
  fs::create_symlink("missing.txt", project_ + "/dangling");
  fs::create_directory_symlink(outside, project_ + "/node_modules");  // an excluded name
  const auto outside_before = Fingerprint(outside);
  const SnapshotOutcome taken = Take(*store);
  ASSERT_EQ(taken.kind, SnapshotKind::kTaken);
  std::vector<CheckpointInfo> list = ListOf(*store);
  ASSERT_EQ(list.size(), 1U);
  EXPECT_EQ(list[0].files_changed, 5);  // a.txt and four links; node_modules left out

  // The diff against a present without the links shows them as mode-120000 entries whose
  // content is the target text, never the secret they lead to.
  for (const char* link : {"to_a", "to_secret", "to_outside_dir", "dangling"}) {
    fs::remove(project_ + "/" + link);
  }
  auto diff = store->Diff(project_, taken.hash);
  ASSERT_TRUE(diff) << diff.error().ToString();
  EXPECT_NE(diff->find("deleted file mode 120000"), std::string::npos) << *diff;
  EXPECT_NE(diff->find("-" + outside + "/secret.txt"), std::string::npos) << *diff;
  EXPECT_EQ(diff->find("outside secret"), std::string::npos) << *diff;

  // A file now stands where a link was, and a link where the file was.
  Put(project_ + "/to_a", "a file now\n");
  fs::remove(project_ + "/a.txt");
  fs::create_symlink(outside + "/secret.txt", project_ + "/a.txt");
  auto r = store->Restore(project_, taken.hash, std::nullopt);
  ASSERT_TRUE(r) << r.error().ToString();
  EXPECT_EQ(LinkTarget(project_ + "/to_a"), "a.txt");
  EXPECT_EQ(LinkTarget(project_ + "/to_secret"), outside + "/secret.txt");
  EXPECT_EQ(LinkTarget(project_ + "/to_outside_dir"), outside);
  EXPECT_EQ(LinkTarget(project_ + "/dangling"), "missing.txt");
  EXPECT_EQ(LinkTarget(project_ + "/a.txt"), "(not a link)");
  EXPECT_EQ(Get(project_ + "/a.txt"), "alpha\n");
  EXPECT_EQ(Fingerprint(outside), outside_before);  // written through no link

  // One link alone, by its path.
  fs::remove(project_ + "/to_a");
  ASSERT_TRUE(store->Restore(project_, taken.hash, std::string("to_a")));
  EXPECT_EQ(LinkTarget(project_ + "/to_a"), "a.txt");
  // A path through a link of the snapshot is no file of it.
  auto through = store->Restore(project_, taken.hash, std::string("to_outside_dir/secret.txt"));
  ASSERT_FALSE(through);
  EXPECT_EQ(through.error().code(), StatusCode::kNotFound);
  EXPECT_EQ(Fingerprint(outside), outside_before);
}

TEST_F(CheckpointStoreTest, NoticesALinkRetargetedWithoutOtherChange) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  Put(project_ + "/one.txt", "1\n");
  Put(project_ + "/two.txt", "2\n");
  fs::create_symlink("one.txt", project_ + "/current");
  const SnapshotOutcome first = Take(*store);
  ASSERT_EQ(first.kind, SnapshotKind::kTaken);
  // Same target length, so the stat size matches; the inode and times do not.
  fs::remove(project_ + "/current");
  fs::create_symlink("two.txt", project_ + "/current");
  const SnapshotOutcome second = Take(*store);
  ASSERT_EQ(second.kind, SnapshotKind::kTaken);
  ASSERT_TRUE(store->Restore(project_, first.hash, std::string("current")));
  EXPECT_EQ(LinkTarget(project_ + "/current"), "one.txt");
}

TEST_F(CheckpointStoreTest, ConcurrentSnapshotsOfOneProjectStayConsistent) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  Put(project_ + "/a.txt", "start\n");
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 5; ++i) {
        Put(project_ + "/t" + std::to_string(t) + ".txt", std::to_string(i) + "\n");
        if (!store->Snapshot(project_, "x")) ++failures;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  std::vector<CheckpointInfo> list = ListOf(*store);
  EXPECT_GE(list.size(), 1U);
  EXPECT_LE(list.size(), 20U);
  for (const CheckpointInfo& info : list) {
    EXPECT_TRUE(store->Diff(project_, info.hash)) << info.hash;
  }
}

}  // namespace store_cases
}  // namespace
}  // namespace talaria::checkpoints
