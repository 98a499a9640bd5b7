// The WAL-batching VFS (wal_batching_vfs.h): a commit reaches the WAL in one write, and every
// other connection (SQLite's own VFS, in this process) sees exactly what was committed, through
// large rows, transactions that spill frames before their commit, and rollbacks of those.
#include "store/wal_batching_vfs.h"

#include <signal.h>
#include <sqlite3.h>
#include <sys/resource.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "store/sqlite_db.h"
#include "support/temp_dir.h"

namespace talaria::store {
namespace {

using talaria::test_support::TempDir;

// A connection through SQLite's default VFS, as another program would open the file.
class PlainConnection {
 public:
  explicit PlainConnection(const std::string& path) {
    EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE, nullptr), SQLITE_OK);
    sqlite3_busy_timeout(db_, 5000);
  }
  ~PlainConnection() { sqlite3_close_v2(db_); }
  PlainConnection(const PlainConnection&) = delete;
  PlainConnection& operator=(const PlainConnection&) = delete;

  std::string Text(const std::string& sql) {
    sqlite3_stmt* stmt = nullptr;
    std::string out = "error";
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK &&
        sqlite3_step(stmt) == SQLITE_ROW) {
      const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
      out = text == nullptr ? "" : text;
    }
    sqlite3_finalize(stmt);
    return out;
  }
  int Exec(const std::string& sql) {
    return sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, nullptr);
  }

 private:
  sqlite3* db_ = nullptr;
};

std::unique_ptr<SqliteDb> OpenBatchingDb(const std::string& path) {
  auto db = SqliteDb::Open(path);
  EXPECT_TRUE(db) << db.error().ToString();
  if (!db) return nullptr;
  EXPECT_TRUE((*db)->Exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL").ok());
  return std::move(*db);
}

TEST(WalBatchingVfs, ACommitReachesTheWalInOneWrite) {
  ASSERT_NE(WalBatchingVfsName(), nullptr);
  TempDir dir;
  const std::string path = dir / "t.db";
  auto db = OpenBatchingDb(path);
  ASSERT_TRUE(db);
  ASSERT_TRUE(db->Exec("CREATE TABLE t(id INTEGER PRIMARY KEY, k TEXT UNIQUE, v TEXT)").ok());
  // Three pages change per insert (table, unique index, and the first time the schema): six
  // writes through SQLite's own VFS, one here.
  for (int i = 0; i < 20; ++i) {
    const uint64_t before = WalWritesIssued();
    ASSERT_TRUE(db->Exec("INSERT INTO t(k, v) VALUES ('key" + std::to_string(i) + "', '" +
                         std::string(300, 'v') + "')")
                    .ok());
    EXPECT_EQ(WalWritesIssued() - before, 1u) << "insert " << i;
  }
  PlainConnection other(path);
  EXPECT_EQ(other.Text("SELECT count(*) FROM t"), "20");
  EXPECT_EQ(other.Text("PRAGMA integrity_check"), "ok");
}

TEST(WalBatchingVfs, OtherConnectionsSeeEveryCommitAndNothingRolledBack) {
  TempDir dir;
  const std::string path = dir / "t.db";
  auto db = OpenBatchingDb(path);
  ASSERT_TRUE(db);
  // A small page cache makes a large transaction write frames before its commit.
  ASSERT_TRUE(
      db->Exec("PRAGMA cache_size = 8; CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB)").ok());
  PlainConnection other(path);
  int committed = 0;
  for (int round = 0; round < 30; ++round) {
    // Rows from a few bytes to many times what one write may carry.
    const int size = round % 10 == 9 ? (3 << 20) : 100 + round * 997;
    Status inserted = db->Exec("INSERT INTO t(v) VALUES (zeroblob(" + std::to_string(size) + "))");
    ASSERT_TRUE(inserted.ok()) << "round " << round << ": " << inserted.ToString();
    ++committed;
    ASSERT_EQ(other.Text("SELECT count(*) FROM t"), std::to_string(committed)) << "round " << round;

    // A transaction that spills, then rolls back: its frames must never land on the offsets
    // the other connection's next commit uses. From an empty WAL, so rolling back reloads
    // pages from the database file alone and reads nothing of the WAL.
    ASSERT_EQ(other.Exec("PRAGMA wal_checkpoint(TRUNCATE)"), SQLITE_OK);
    // Spills of a few pages to past one write's worth.
    const std::string rows = std::to_string(10 + round * 7);
    ASSERT_TRUE(db->Exec("BEGIN; INSERT INTO t(v) SELECT zeroblob(4000) FROM "
                         "(WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c "
                         "WHERE i < " +
                         rows + ") SELECT i FROM c); ROLLBACK")
                    .ok());
    ASSERT_EQ(other.Exec("INSERT INTO t(v) VALUES (randomblob(5000))"), SQLITE_OK);
    ++committed;
    ASSERT_EQ(other.Text("SELECT count(*) FROM t"), std::to_string(committed));
  }
  db.reset();
  EXPECT_EQ(other.Text("PRAGMA integrity_check"), "ok");
  EXPECT_EQ(other.Text("SELECT count(*) FROM t"), std::to_string(committed));
}

// Files may not grow past a limit (RLIMIT_FSIZE, SIGXFSZ ignored) for the scope's life.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    ::getrlimit(RLIMIT_FSIZE, &saved_);
    old_handler_ = ::signal(SIGXFSZ, SIG_IGN);
    rlimit limit = saved_;
    limit.rlim_cur = bytes;
    ::setrlimit(RLIMIT_FSIZE, &limit);
  }
  ~FileSizeLimit() {
    ::setrlimit(RLIMIT_FSIZE, &saved_);
    ::signal(SIGXFSZ, old_handler_);
  }
  FileSizeLimit(const FileSizeLimit&) = delete;
  FileSizeLimit& operator=(const FileSizeLimit&) = delete;

 private:
  rlimit saved_{};
  sighandler_t old_handler_ = SIG_DFL;
};

// A write that fails fails its commit, whichever write it is: here the WAL may not grow past a
// point inside one large commit, moved frame by frame (rows of 27-36 frames, so in some the
// commit frame's page is the one that has to start the 128 KiB buffer afresh). A commit that
// reported success must be whole for another connection; one that failed must not be there.
TEST(WalBatchingVfs, AFailedWriteFailsItsCommitAndLosesNothingCommitted) {
  constexpr int kFrame = 24 + 4096;
  int failed = 0;
  for (int row_kb = 104; row_kb <= 140; row_kb += 4) {
    for (int frame = 1; frame <= 38; ++frame) {
      TempDir dir;
      const std::string path = dir / "t.db";
      auto db = OpenBatchingDb(path);
      ASSERT_TRUE(db);
      ASSERT_TRUE(db->Exec("CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB)").ok());
      const off_t wal_before = static_cast<off_t>(std::filesystem::file_size(path + "-wal"));
      bool inserted = false;
      {
        // Mid-way through the commit's frame `frame`.
        FileSizeLimit limit(static_cast<rlim_t>(wal_before + (frame - 1) * kFrame + 2'000));
        inserted =
            db->Exec("INSERT INTO t(v) VALUES (zeroblob(" + std::to_string(row_kb * 1024) + "))")
                .ok();
      }
      if (!inserted) ++failed;
      PlainConnection other(path);
      const std::string where =
          std::to_string(row_kb) + " KB row, limit in frame " + std::to_string(frame);
      EXPECT_EQ(other.Text("SELECT coalesce(sum(length(v)), 0) FROM t"),
                inserted ? std::to_string(row_kb * 1024) : "0")
          << where;
      EXPECT_EQ(other.Text("PRAGMA integrity_check"), "ok") << where;
    }
  }
  EXPECT_GT(failed, 0) << "the limit never stopped a write";
}

}  // namespace
}  // namespace talaria::store
