// The store copies its WAL back into the database while idle (sqlite_session_store.h), so the
// WAL starts over instead of growing until an append has to checkpoint it inline. Read from the
// WAL index's header in the -shm file, as another process would see it.
#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>

#include "store/store_test_util.h"
#include "support/temp_dir.h"
#include "support/wait_until.h"
#include "talaria/store/session_store.h"

namespace talaria::store {
namespace {

using std::chrono::seconds;
using talaria::test_support::TempDir;
using talaria::test_support::WaitUntil;

// SQLite's WAL index header (sqlite.org/walformat.html): the first copy's mxFrame at byte 16
// (frames committed to the WAL) and the checkpoint info's nBackfill at byte 96 (frames copied
// back), both in native byte order.
struct WalProgress {
  uint32_t frames = 0;
  uint32_t copied_back = 0;
};

WalProgress ReadWalProgress(const std::string& db_path) {
  WalProgress p;
  const int fd = ::open((db_path + "-shm").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return p;
  unsigned char header[100] = {};
  if (::pread(fd, header, sizeof header, 0) == static_cast<ssize_t>(sizeof header)) {
    std::memcpy(&p.frames, header + 16, sizeof p.frames);
    std::memcpy(&p.copied_back, header + 96, sizeof p.copied_back);
  }
  ::close(fd);
  return p;
}

TEST(WalCheckpoint, CopiesTheWalBackWhileIdleAndStartsItOver) {
  TempDir dir;
  const std::string path = dir / "sessions.db";
  auto store = testing::OpenOrDie(path);
  ASSERT_TRUE(store);
  const std::string id = store->CreateSession({.cwd = "/p"})->id;
  // Past the 1,000 frames the idle checkpoint waits for: 2 KB messages take a page or two
  // each, with the session row and the (session, seq) index.
  const std::string text(2000, 'w');
  for (int i = 0; i < 500; ++i) {
    StoredMessage m = testing::Msg("tool", text + std::to_string(i));
    ASSERT_TRUE(store->AppendMessage(id, m).ok());
  }
  ASSERT_GE(ReadWalProgress(path).frames, 1000u);

  WalProgress idle;
  EXPECT_TRUE(WaitUntil(
      [&] {
        idle = ReadWalProgress(path);
        return idle.frames > 0 && idle.copied_back == idle.frames;
      },
      seconds(30)))
      << idle.copied_back << " of " << idle.frames << " WAL frames copied back";

  // Everything was copied back and nothing reads the old frames: the next commit starts the
  // WAL from its beginning.
  StoredMessage next = testing::Msg("user", "after the checkpoint");
  ASSERT_TRUE(store->AppendMessage(id, next).ok());
  EXPECT_LT(ReadWalProgress(path).frames, 20u);
  auto history = store->LoadHistory(id);
  ASSERT_TRUE(history);
  EXPECT_EQ(history->size(), 501u);
}

}  // namespace
}  // namespace talaria::store
