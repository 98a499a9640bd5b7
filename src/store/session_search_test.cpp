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
using testing::ToolResult;

class SessionSearch : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = OpenOrDie(tmp_ / "s.db");
    ASSERT_TRUE(store_);
    a_ = store_->CreateSession({.cwd = "/a"})->id;
    b_ = store_->CreateSession({.cwd = "/b"})->id;
    Add(a_, Msg("user", "The parser crashes on nested brackets; please fix the parser."));
    Add(a_, AssistantCalls({Call("c1", "search_files", R"({"pattern":"tokenize_brackets"})")},
                           "Looking for the bracket code."));
    Add(a_, ToolResult("c1", "search_files", "src/parse.cpp:12: tokenize_brackets(...)"));
    Add(b_, Msg("user", "Deploy the café service to staging"));
    Add(b_, Msg("assistant", "数据库迁移已经完成，接下来部署服务。"));
    Add(b_, Msg("user", "parser question: what does the parser do with quotes?"));
    Add(b_, Msg("assistant", "The configuration loader reads config.yaml first."));
  }
  void Add(const std::string& id, StoredMessage m) {
    ASSERT_TRUE(store_->AppendMessage(id, m).ok());
  }
  std::vector<SearchHit> Find(std::string_view q, SearchOptions o = {}) {
    auto hits = store_->Search(q, o);
    EXPECT_TRUE(hits) << q << ": " << hits.error().ToString();
    return hits ? *hits : std::vector<SearchHit>{};
  }

  TempDir tmp_;
  std::unique_ptr<SessionStore> store_;
  std::string a_, b_;
};

TEST_F(SessionSearch, FindsWordsRankedWithSnippets) {
  auto hits = Find("parser");
  ASSERT_EQ(hits.size(), 2u);
  for (const SearchHit& h : hits) {
    EXPECT_NE(h.snippet.find(">>>parser<<<"), std::string::npos) << h.snippet;
    EXPECT_LT(h.rank, 0);  // bm25: more negative is better
  }
  EXPECT_LE(hits[0].rank, hits[1].rank);
  EXPECT_EQ(hits[0].role, "user");
  EXPECT_TRUE((hits[0].session_id == a_ && hits[0].seq == 1) ||
              (hits[0].session_id == b_ && hits[0].seq == 3));
}

TEST_F(SessionSearch, AndsTermsAndHonoursPhrasesAndPrefixes) {
  EXPECT_EQ(Find("parser quotes").size(), 1u);
  EXPECT_EQ(Find("\"fix the parser\"").size(), 1u);
  EXPECT_EQ(Find("\"parser fix\"").size(), 0u);
  auto hits = Find("config*");
  ASSERT_EQ(hits.size(), 1u);
  EXPECT_EQ(hits[0].seq, 4);
}

TEST_F(SessionSearch, FoldsDiacritics) {
  EXPECT_EQ(Find("cafe").size(), 1u);
  EXPECT_EQ(Find("CAFÉ").size(), 1u);
}

TEST_F(SessionSearch, FindsToolNamesAndArguments) {
  auto hits = Find("tokenize_brackets");
  ASSERT_EQ(hits.size(), 2u);  // the call's arguments and the result's text
  auto by_name = Find("search_files");
  ASSERT_EQ(by_name.size(), 2u);  // the call and the result (its name)
  for (const SearchHit& h : by_name) EXPECT_EQ(h.session_id, a_);
  // Not the calls' JSON wrapper: every call has "function" and "arguments" keys.
  EXPECT_TRUE(Find("arguments").empty());
  EXPECT_TRUE(Find("function").empty());
}

TEST_F(SessionSearch, ExcludesASession) {
  auto hits = Find("parser", {.exclude_session = a_});
  ASSERT_EQ(hits.size(), 1u);
  EXPECT_EQ(hits[0].session_id, b_);
}

TEST_F(SessionSearch, LimitsResults) { EXPECT_EQ(Find("parser", {.limit = 1}).size(), 1u); }

TEST_F(SessionSearch, FindsCjkSubstrings) {
  auto hits = Find("迁移已经");  // inside a run unicode61 would keep as one token
  ASSERT_EQ(hits.size(), 1u);
  EXPECT_EQ(hits[0].session_id, b_);
  EXPECT_NE(hits[0].snippet.find(">>>"), std::string::npos) << hits[0].snippet;
  // Two characters: too short for a trigram, found as a substring.
  auto short_hits = Find("部署");
  ASSERT_EQ(short_hits.size(), 1u);
  EXPECT_NE(short_hits[0].snippet.find(">>>部署<<<"), std::string::npos) << short_hits[0].snippet;
  EXPECT_TRUE(Find("不存在的词").empty());
  EXPECT_TRUE(Find("数据库迁移", {.exclude_session = b_}).empty());
  EXPECT_TRUE(Find("部署", {.exclude_session = b_}).empty());
}

TEST_F(SessionSearch, HostileQueriesNeverFail) {
  const char* queries[] = {"\"foo AND (",
                           "foo AND (bar",
                           "NEAR(a b, 3)",
                           "a OR",
                           "NOT",
                           "*",
                           "\"",
                           "\"\"\"",
                           "body:parser",
                           "{body tools}: x",
                           "^parser",
                           "parser -x",
                           "a + b",
                           ")))(((",
                           "'",
                           "\\\"\\",
                           "\xff\xfe\x80 parser",
                           "%_%",
                           "parser\0x",
                           "😀 parser",
                           "数",
                           "*数据*",
                           "- -- ---",
                           "col:\"a\"",
                           "parser*****",
                           "AND AND AND"};
  for (const char* q : queries) {
    auto hits = store_->Search(q, {});
    EXPECT_TRUE(hits) << q << ": " << hits.error().ToString();
  }
  EXPECT_EQ(Find("body:parser").size(), 0u);  // "body" and "parser" as words, not a column filter
  EXPECT_EQ(Find("^parser").size(), 2u);
  EXPECT_TRUE(Find("").empty());
  EXPECT_TRUE(Find("( ) *").empty());
  std::string huge(100000, 'x');
  EXPECT_TRUE(Find(huge).empty());
}

TEST_F(SessionSearch, FindsWhatAnotherConnectionAppendedBeforeItsBatch) {
  // A second store on the same file (as another process would be) appends a few messages, fewer
  // than an index batch, and stays open: the search here still finds them.
  auto other = OpenOrDie(tmp_ / "s.db");
  ASSERT_TRUE(other);
  StoredMessage m = Msg("user", "xylophone practice tonight");
  ASSERT_TRUE(other->AppendMessage(a_, m).ok());
  auto hits = Find("xylophone");
  ASSERT_EQ(hits.size(), 1u);
  EXPECT_EQ(hits[0].seq, m.seq);
  EXPECT_EQ(testing::FtsDriftProblem(tmp_ / "s.db"), "");
}

TEST_F(SessionSearch, DriftCheckNoticesAStrayIndexRow) {
  // The drift check the crash tests rely on can fail: a row indexed behind the store's back.
  ASSERT_FALSE(Find("parser").empty());  // everything indexed
  EXPECT_EQ(testing::FtsDriftProblem(tmp_ / "s.db"), "");
  EXPECT_EQ(
      testing::QueryText(tmp_ / "s.db",
                         "INSERT INTO messages_fts(rowid, body, tools) VALUES (1, 'ghost', '')"),
      "");
  EXPECT_NE(testing::FtsDriftProblem(tmp_ / "s.db"), "");
}

}  // namespace
}  // namespace talaria::store
