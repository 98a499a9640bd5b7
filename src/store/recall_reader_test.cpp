// The recall members against real SQLite: the read-only connection next to a writer, the tail
// of unindexed messages, FTS5's own integrity check over the views, and OpenReadOnly.
#include "store/recall_reader.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "store/store_test_util.h"
#include "support/temp_dir.h"
#include "talaria/store/session_store.h"

namespace talaria::store {
namespace {

using talaria::test_support::TempDir;
using testing::AssistantCalls;
using testing::Call;
using testing::Msg;
using testing::OpenOrDie;
using testing::QueryText;
using testing::ToolResult;

std::vector<int64_t> HitIds(const RecallSearchResult& r) {
  std::vector<int64_t> ids;
  for (const RecallHit& h : r.hits) ids.push_back(h.message_id);
  return ids;
}

TEST(Recall, SearchesWhileAnotherConnectionHoldsTheWriteLock) {
  TempDir tmp;
  const std::string path = tmp / "s.db";
  auto store = OpenOrDie(path);
  ASSERT_TRUE(store);
  const std::string id = store->CreateSession({})->id;
  StoredMessage m = Msg("user", "the albatross has landed");
  ASSERT_TRUE(store->AppendMessage(id, m).ok());
  // Another writer holds the write lock with an uncommitted change.
  auto other = SqliteDb::Open(path);
  ASSERT_TRUE(other);
  ASSERT_TRUE((*other)->Exec("BEGIN IMMEDIATE; UPDATE sessions SET title = 'held'").ok());
  auto found = store->RecallSearch("albatross", {});
  ASSERT_TRUE(found) << found.error().ToString();
  ASSERT_EQ(found->hits.size(), 1u);  // the unindexed tail, read without the write lock
  EXPECT_EQ(found->hits[0].session_id, id);
  auto lineage = store->Lineage(id);
  ASSERT_TRUE(lineage);
  ASSERT_EQ(lineage->size(), 1u);
  EXPECT_EQ((*lineage)[0].title, "");  // the uncommitted title is not seen
  ASSERT_TRUE((*other)->Exec("ROLLBACK").ok());
}

TEST(Recall, SeesTheUnindexedTailAndThenTheIndex) {
  TempDir tmp;
  const std::string path = tmp / "s.db";
  auto store = OpenOrDie(path);
  ASSERT_TRUE(store);
  const std::string id = store->CreateSession({})->id;
  std::vector<int64_t> appended;
  for (int i = 0; i < 300; ++i) {
    StoredMessage m = Msg(i % 2 ? "assistant" : "user", "gannet number " + std::to_string(i));
    ASSERT_TRUE(store->AppendMessage(id, m).ok());
    // Halfway, the indexes catch up (Search indexes what is pending): from then on the hits
    // come from the index and from the unindexed tail both.
    if (i == 149) {
      ASSERT_TRUE(store->Search("gannet", {}));
    }
    if (i % 50 == 0) {
      auto r = store->RecallSearch("gannet", {.limit = 1000, .order = RecallOrder::kNewest});
      ASSERT_TRUE(r) << r.error().ToString();
      EXPECT_EQ(r->hits.size(), static_cast<size_t>(i + 1)) << i;
    }
  }
  auto r = store->RecallSearch("gannet", {.limit = 1000, .order = RecallOrder::kOldest});
  ASSERT_TRUE(r);
  ASSERT_EQ(r->hits.size(), 300u);
  std::vector<int64_t> ids = HitIds(*r);
  EXPECT_TRUE(std::is_sorted(ids.begin(), ids.end()));
  EXPECT_NE(QueryText(path, "SELECT indexed_through FROM search_index_state"), "0");
  for (const RecallHit& h : r->hits) EXPECT_NE(h.snippet.find(">>>gannet<<<"), std::string::npos);
}

TEST(Recall, Fts5IntegrityCheckAndRebuildWorkOverTheViews) {
  TempDir tmp;
  const std::string path = tmp / "s.db";
  {
    auto store = OpenOrDie(path);
    ASSERT_TRUE(store);
    const std::string id = store->CreateSession({})->id;
    std::vector<StoredMessage> batch = {
        Msg("user", "run it 数据库"),
        AssistantCalls({Call("c1", "terminal", R"({"command":"ls"})"),
                        Call("c2", "read_file", R"({"path":"/etc/hosts"})")}),
        ToolResult("c1", "terminal", "a b c"),
        ToolResult("c2", "read_file", "127.0.0.1 localhost"),
    };
    // Calls the model could send that version 1's json_each view choked on.
    StoredMessage odd = Msg("assistant", "odd calls");
    odd.tool_calls =
        Json::parse(R"([1, "bare string", {"function": 7}, {"function": {"name": 3}}])");
    batch.push_back(odd);
    StoredMessage object = Msg("assistant", "object calls");
    object.tool_calls = Json::parse(R"({"not": "an array"})");
    batch.push_back(object);
    ASSERT_TRUE(store->AppendMessages(id, batch).ok());
  }  // closing indexes everything
  auto store = OpenOrDie(path);
  ASSERT_TRUE(store);
  for (const char* table : {"messages_fts", "messages_cjk"}) {
    const std::string t = table;
    const std::string check =
        "INSERT INTO " + t + "(" + t + ", rank) VALUES ('integrity-check', 1)";
    EXPECT_EQ(QueryText(path, check.c_str()), "") << t;
    const std::string rebuild = "INSERT INTO " + t + "(" + t + ") VALUES ('rebuild')";
    EXPECT_EQ(QueryText(path, rebuild.c_str()), "") << t;
    EXPECT_EQ(QueryText(path, check.c_str()), "") << t << " after rebuild";
  }
  EXPECT_EQ(testing::FtsDriftProblem(path), "");
  auto r = store->RecallSearch("hosts", {});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->hits.size(), 1u);  // a call's arguments
  r = store->RecallSearch("read_file", {.roles = {"tool"}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->hits.size(), 1u);  // a tool's name
}

TEST(Recall, OpenReadOnlyRecallsAndWritesNothing) {
  TempDir tmp;
  const std::string path = tmp / "s.db";
  EXPECT_EQ(SessionStore::OpenReadOnly(path).error().code(), StatusCode::kNotFound);
  std::string id;
  {
    auto store = OpenOrDie(path);
    ASSERT_TRUE(store);
    id = store->CreateSession({.title = "t"})->id;
    StoredMessage m = Msg("user", "cormorant sighting");
    ASSERT_TRUE(store->AppendMessage(id, m).ok());
  }
  auto ro = SessionStore::OpenReadOnly(path);
  ASSERT_TRUE(ro) << ro.error().ToString();
  auto r = (*ro)->RecallSearch("cormorant", {});
  ASSERT_TRUE(r) << r.error().ToString();
  ASSERT_EQ(r->hits.size(), 1u);
  auto w = (*ro)->ReadWindow(id, {});
  ASSERT_TRUE(w);
  EXPECT_EQ(w->total, 1);
  auto b = (*ro)->Browse({});
  ASSERT_TRUE(b);
  ASSERT_EQ(b->size(), 1u);
  EXPECT_EQ((*b)[0].preview, "cormorant sighting");
  EXPECT_EQ((*ro)->CreateSession({}).error().code(), StatusCode::kFailedPrecondition);
  StoredMessage m = Msg("user", "x");
  EXPECT_EQ((*ro)->AppendMessage(id, m).code(), StatusCode::kFailedPrecondition);
  // A file that is not a talaria database: a clear error, not "no such table".
  const std::string junk = tmp / "junk.db";
  {
    auto db = SqliteDb::Open(junk);
    ASSERT_TRUE(db);
    ASSERT_TRUE((*db)->Exec("CREATE TABLE x(y)").ok());
  }
  auto bad = SessionStore::OpenReadOnly(junk);
  ASSERT_TRUE(bad);
  auto e = (*bad)->RecallSearch("x", {});
  ASSERT_FALSE(e);
  EXPECT_NE(e.error().message().find("no session search index"), std::string::npos);
}

TEST(Recall, LineageWindowsAndBrowse) {
  TempDir tmp;
  auto store = OpenOrDie(tmp / "s.db");
  ASSERT_TRUE(store);
  const std::string root = store->CreateSession({})->id;
  const std::string child = store->CreateSession({.parent_id = root, .source = "delegate"})->id;
  const std::string grandchild = store->CreateSession({.parent_id = child})->id;
  for (const std::string& id : {root, child, grandchild}) {
    auto l = store->Lineage(id);
    ASSERT_TRUE(l);
    ASSERT_EQ(l->size(), 3u) << id;
    EXPECT_EQ((*l)[0].id, root);
  }
  EXPECT_TRUE(store->Lineage("nope")->empty());
  std::vector<StoredMessage> batch = {Msg("system", "prompt")};
  for (int i = 0; i < 10; ++i)
    batch.push_back(Msg(i % 3 == 2 ? "tool" : "user", std::to_string(i)));
  ASSERT_TRUE(store->AppendMessages(root, batch).ok());
  auto all = store->ReadWindow(root, {});
  ASSERT_TRUE(all);
  EXPECT_EQ(all->total, 10);                   // the system prompt is left out
  const int64_t anchor = all->messages[4].id;  // "4", a user message
  auto w = store->ReadWindow(root, {.roles = {"user"}, .around_id = anchor, .window = 2});
  ASSERT_TRUE(w);
  ASSERT_EQ(w->messages.size(), 5u);
  EXPECT_EQ(w->messages[2].id, anchor);
  for (const RecallMessage& m : w->messages) EXPECT_NE(m.role, "tool");
  EXPECT_EQ(store->ReadWindow(child, {.around_id = anchor}).error().code(), StatusCode::kNotFound);
  auto ht = store->ReadWindow(root, {.head = 2, .tail = 3});
  ASSERT_TRUE(ht);
  EXPECT_TRUE(ht->truncated);
  ASSERT_EQ(ht->messages.size(), 5u);
  EXPECT_EQ(ht->messages[0].content, "0");
  EXPECT_EQ(ht->messages[4].content, "9");
  auto msg = store->GetMessage(anchor);
  ASSERT_TRUE(msg && *msg);
  EXPECT_EQ((*msg)->session_id, root);
  auto browse = store->Browse({});
  ASSERT_TRUE(browse);
  ASSERT_EQ(browse->size(), 1u);  // children skipped; sessions without a user message too
  EXPECT_EQ((*browse)[0].session.id, root);
}

}  // namespace
}  // namespace talaria::store
