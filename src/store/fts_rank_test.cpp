// talaria_bm25 (fts_rank.h): the same scores as FTS5's bm25 while the document counts are exact,
// estimates close to the truth past the sample, and the ranking session_search sees through
// RecallSearch: the focused message first, a rare word over a common one, CJK still found.
#include "store/fts_rank.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "store/store_test_util.h"
#include "support/temp_dir.h"
#include "talaria/store/session_store.h"

namespace talaria::store {
namespace fts_rank_testing {

using talaria::test_support::TempDir;
using testing::Msg;
using testing::OpenOrDie;

// A plain FTS5 table with the store's tokenizer and two columns, as messages_fts has.
std::unique_ptr<SqliteDb> RankTable(const std::string& path) {
  auto db = SqliteDb::Open(path);
  EXPECT_TRUE(db) << db.error().ToString();
  if (!db) return nullptr;
  EXPECT_TRUE(RegisterFtsRank(**db).ok());
  EXPECT_TRUE((*db)
                  ->Exec("CREATE VIRTUAL TABLE t USING fts5(body, tools, "
                         "tokenize='unicode61 remove_diacritics 2')")
                  .ok());
  return std::move(*db);
}

void InsertRow(SqliteDb& db, int64_t rowid, const std::string& body, const std::string& tools) {
  auto s = db.Prepare("INSERT INTO t(rowid, body, tools) VALUES (?1, ?2, ?3)");
  ASSERT_TRUE(s);
  s->Bind(1, rowid).Bind(2, body).Bind(3, tools);
  ASSERT_TRUE(s->Run().ok());
}

TEST(FtsRank, ScoresAsFts5sBm25WhileTheCountsAreExact) {
  TempDir tmp;
  auto db = RankTable(tmp / "t.db");
  ASSERT_TRUE(db);
  ASSERT_TRUE(db->Exec("BEGIN").ok());
  for (int64_t i = 1; i <= 400; ++i) {
    std::string body = "row " + std::to_string(i) + " about the weather";
    if (i % 3 == 0) body += " with a parser";
    if (i % 7 == 0) body += " and a parser crash in the parser";
    if (i % 50 == 0) body += " zanzibar";
    InsertRow(*db, i, body, i % 5 == 0 ? "search_files parser" : "");
  }
  ASSERT_TRUE(db->Exec("COMMIT").ok());
  for (const char* query : {"\"parser\" OR \"zanzibar\"", "\"parser\" \"crash\"",
                            "\"weather\" OR \"parser crash\" OR \"zanzibar\""}) {
    FtsRankStats stats;
    stats.max_rowid = 400;
    auto s = db->Prepare(
        "SELECT rowid, bm25(t), talaria_bm25(t, ?2) FROM t WHERE t MATCH ?1 ORDER BY rowid DESC");
    ASSERT_TRUE(s);
    s->Bind(1, std::string_view(query));
    BindFtsRankStats(*s, 2, &stats);
    int rows = 0;
    for (;;) {
      auto row = s->Step();
      ASSERT_TRUE(row) << row.error().ToString();
      if (!*row) break;
      ++rows;
      EXPECT_NEAR(s->Real(2), s->Real(1), 1e-9 * std::fabs(s->Real(1)) + 1e-12)
          << query << " row " << s->Int(0);
    }
    EXPECT_GT(rows, 0) << query;
    EXPECT_TRUE(stats.ready);
  }
}

TEST(FtsRank, EstimatesTheCountOfACommonPhrasePastTheSample) {
  TempDir tmp;
  auto db = RankTable(tmp / "t.db");
  ASSERT_TRUE(db);
  constexpr int64_t kRows = 6000;
  ASSERT_TRUE(db->Exec("BEGIN").ok());
  for (int64_t i = 1; i <= kRows; ++i) {
    std::string body = "message " + std::to_string(i);
    if (i % 2 == 0) body += " common";   // 3,000 rows
    if (i % 1000 == 0) body += " rare";  // 6 rows
    InsertRow(*db, i, body, "");
  }
  ASSERT_TRUE(db->Exec("COMMIT").ok());
  FtsRankStats stats;
  stats.max_rowid = kRows;
  auto s = db->Prepare("SELECT talaria_bm25(t, ?2) FROM t WHERE t MATCH ?1 LIMIT 1");
  ASSERT_TRUE(s);
  s->Bind(1, std::string_view("\"common\" OR \"rare\""));
  BindFtsRankStats(*s, 2, &stats);
  auto row = s->Step();
  ASSERT_TRUE(row && *row) << (row ? "no row" : row.error().ToString());
  ASSERT_EQ(stats.docs.size(), 2u);
  EXPECT_EQ(stats.rows, kRows);
  EXPECT_NEAR(static_cast<double>(stats.docs[0]), 3000.0, 300.0) << "estimated from 1,000";
  EXPECT_EQ(stats.docs[1], 6) << "counted exactly";
  EXPECT_GT(stats.idf[1], stats.idf[0]);
}

TEST(FtsRank, WithoutStatisticsTheFunctionFailsInsteadOfGuessing) {
  TempDir tmp;
  auto db = RankTable(tmp / "t.db");
  ASSERT_TRUE(db);
  InsertRow(*db, 1, "hello world", "");
  auto s = db->Prepare("SELECT talaria_bm25(t, ?2) FROM t WHERE t MATCH 'hello'");
  ASSERT_TRUE(s);
  auto row = s->Step();
  ASSERT_FALSE(row);
  EXPECT_NE(row.error().message().find("no statistics"), std::string::npos)
      << row.error().message();
}

class RecallRank : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = OpenOrDie(tmp_ / "s.db");
    ASSERT_TRUE(store_);
  }
  std::string NewSession() { return store_->CreateSession({})->id; }
  void Add(const std::string& session, std::vector<StoredMessage> messages) {
    ASSERT_TRUE(store_->AppendMessages(session, messages).ok());
  }
  std::vector<RecallHit> Find(std::string_view query) {
    auto r = store_->RecallSearch(query, {.limit = 10, .roles = {"user", "assistant"}});
    EXPECT_TRUE(r) << query << ": " << r.error().ToString();
    return r ? r->hits : std::vector<RecallHit>{};
  }

  TempDir tmp_;
  std::unique_ptr<SessionStore> store_;
};

// A message about the thing searched for beats ones that mention its words in passing.
TEST_F(RecallRank, TheFocusedMessageComesFirst) {
  std::string filler;
  for (int i = 0; i < 60; ++i) filler += " and then the team talked about lunch plans";
  const std::string passing = NewSession();
  Add(passing, {Msg("user", "The billing job ran." + filler + " Also a database migration."),
                Msg("assistant", "Noted the migration of the billing" + filler)});
  const std::string focused = NewSession();
  Add(focused, {Msg("user",
                    "How do we run the billing migration? The billing migration failed "
                    "twice on the invoices table.")});
  const std::string other = NewSession();
  Add(other, {Msg("assistant", "The billing report is ready." + filler + " migration notes.")});
  auto hits = Find("billing migration");
  ASSERT_EQ(hits.size(), 4u);
  EXPECT_EQ(hits[0].session_id, focused) << hits[0].snippet;
  for (size_t i = 1; i < hits.size(); ++i) EXPECT_LE(hits[i - 1].rank, hits[i].rank);
}

// With OR, the rare word's message outranks the common word's, however often the common one
// is repeated: the common word's count (past the sample) is estimated, not counted whole.
TEST_F(RecallRank, ARareWordOutweighsACommonOne) {
  const std::string session = NewSession();
  std::vector<StoredMessage> batch;
  for (int i = 0; i < 3000; ++i) {
    batch.push_back(
        Msg(i % 2 ? "assistant" : "user", "ticket " + std::to_string(i) + " is open in the queue"));
  }
  Add(session, batch);
  const std::string rare = NewSession();
  Add(rare, {Msg("user", "the ticket from the zanzibar office is open")});
  const std::string loud = NewSession();
  Add(loud, {Msg("user", "ticket ticket ticket ticket open")});
  Add(session, {Msg("user", "another ticket is open"), Msg("assistant", "ticket closed")});
  auto hits = Find("zanzibar OR ticket");
  ASSERT_FALSE(hits.empty());
  EXPECT_EQ(hits[0].session_id, rare) << hits[0].snippet;
  auto single = Find("ticket");
  ASSERT_FALSE(single.empty());
  EXPECT_EQ(single[0].session_id, loud) << "one word: the message that is most about it";
}

// CJK queries go to the trigram index (newest first), untouched by the ranking.
TEST_F(RecallRank, ChineseIsStillFoundThroughTrigrams) {
  const std::string s = NewSession();
  Add(s,
      {Msg("user", "数据库迁移已经完成，接下来部署服务。"),
       Msg("assistant", "好的，部署服务之前先备份数据库。"), Msg("user", "The deploy is done.")});
  auto hits = Find("数据库迁移");
  ASSERT_EQ(hits.size(), 1u);
  EXPECT_NE(hits[0].snippet.find(">>>数据库迁移<<<"), std::string::npos) << hits[0].snippet;
  EXPECT_EQ(Find("部署服务").size(), 2u);
}

}  // namespace fts_rank_testing
}  // namespace talaria::store
