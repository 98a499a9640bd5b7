// Search indexing (sqlite_session_store.h): never missing a committed message.
#include <gtest/gtest.h>

#include <string>

#include "store/store_test_util.h"
#include "support/temp_dir.h"
#include "talaria/store/session_store.h"

namespace talaria::store {
namespace {

using talaria::test_support::TempDir;

void AppendOrFail(SessionStore& store, const std::string& session, std::string text) {
  StoredMessage m = testing::Msg("user", std::move(text));
  ASSERT_TRUE(store.AppendMessage(session, m).ok());
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
