// Search indexing behind the appends (sqlite_session_store.h): done while the store is idle,
// bounded when it never is, complete on close, and never missing a committed message.
#include <gtest/gtest.h>

#include <chrono>
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

// Messages the search indexes do not hold yet, read on a connection of the test's own.
int64_t Unindexed(const std::string& path) {
  const std::string n = testing::QueryText(
      path,
      "SELECT count(*) FROM messages WHERE id > (SELECT indexed_through FROM search_index_state)");
  return std::stoll(n);
}

void AppendOrFail(SessionStore& store, const std::string& session, std::string text) {
  StoredMessage m = testing::Msg("user", std::move(text));
  ASSERT_TRUE(store.AppendMessage(session, m).ok());
}

TEST(SearchIndexing, CatchesUpOnceTheStoreIsIdle) {
  TempDir dir;
  const std::string path = dir / "sessions.db";
  auto store = testing::OpenOrDie(path);
  const std::string id = store->CreateSession({.cwd = "/p"})->id;
  for (int i = 0; i < 10; ++i) AppendOrFail(*store, id, "quiet message " + std::to_string(i));
  EXPECT_TRUE(WaitUntil([&] { return Unindexed(path) == 0; }, seconds(10)))
      << Unindexed(path) << " messages still unindexed";
  EXPECT_EQ(testing::FtsDriftProblem(path), "");
}

TEST(SearchIndexing, SearchFindsWhatTheIndexerHasNotReached) {
  TempDir dir;
  auto store = testing::OpenOrDie(dir / "sessions.db");
  const std::string id = store->CreateSession({.cwd = "/p"})->id;
  AppendOrFail(*store, id, "the zeppelin landed");
  auto hits = store->Search("zeppelin", {});
  ASSERT_TRUE(hits) << hits.error().ToString();
  ASSERT_EQ(hits->size(), 1u);
  EXPECT_EQ((*hits)[0].session_id, id);
}

// A store that is never idle (appends back to back) still keeps its backlog bounded.
TEST(SearchIndexing, BacklogStaysBoundedWithoutPauses) {
  TempDir dir;
  const std::string path = dir / "sessions.db";
  auto store = testing::OpenOrDie(path);
  const std::string id = store->CreateSession({.cwd = "/p"})->id;
  for (int i = 0; i < 9000; ++i) AppendOrFail(*store, id, "busy " + std::to_string(i));
  EXPECT_LT(Unindexed(path), 4096);
}

TEST(SearchIndexing, ClosingIndexesEverything) {
  TempDir dir;
  const std::string path = dir / "sessions.db";
  {
    auto store = testing::OpenOrDie(path);
    const std::string id = store->CreateSession({.cwd = "/p"})->id;
    for (int i = 0; i < 50; ++i) AppendOrFail(*store, id, "closing " + std::to_string(i));
  }
  EXPECT_EQ(Unindexed(path), 0);
  EXPECT_EQ(testing::FtsDriftProblem(path), "");
}

// Message ids are max(id) + 1: deleting the session with the newest messages must not leave
// the watermark above the ids the next messages get.
TEST(SearchIndexing, DeletingTheNewestSessionKeepsLaterMessagesFindable) {
  TempDir dir;
  const std::string path = dir / "sessions.db";
  auto store = testing::OpenOrDie(path);
  const std::string keep = store->CreateSession({.cwd = "/p"})->id;
  const std::string drop = store->CreateSession({.cwd = "/p"})->id;
  AppendOrFail(*store, keep, "first");
  for (int i = 0; i < 5; ++i) AppendOrFail(*store, drop, "doomed " + std::to_string(i));
  ASSERT_TRUE(store->Search("doomed", {}));  // indexes everything so far
  ASSERT_TRUE(store->DeleteSession(drop).ok());
  AppendOrFail(*store, keep, "aardvark arrives later");
  auto hits = store->Search("aardvark", {});
  ASSERT_TRUE(hits) << hits.error().ToString();
  ASSERT_EQ(hits->size(), 1u);
  EXPECT_EQ((*hits)[0].session_id, keep);
  store.reset();
  EXPECT_EQ(testing::FtsDriftProblem(path), "");
}

}  // namespace
}  // namespace talaria::store
