#include "store/fts_query.h"

#include <gtest/gtest.h>

namespace talaria::store {
namespace {

TEST(FtsQuery, QuotesEveryTermSoOperatorsAreWords) {
  FtsQuery q = BuildFtsQuery("\"foo AND (");
  EXPECT_FALSE(q.cjk);
  EXPECT_EQ(q.match, "\"foo AND (\"");  // an unclosed quote runs to the end as one phrase
  q = BuildFtsQuery("foo AND (bar OR baz) NOT qux");
  EXPECT_EQ(q.match, "\"foo\" \"AND\" \"(bar\" \"OR\" \"baz)\" \"NOT\" \"qux\"");
}

TEST(FtsQuery, KeepsBalancedPhrasesAndPrefixes) {
  FtsQuery q = BuildFtsQuery("  \"read file\"  conf*  ab*");
  EXPECT_EQ(q.match, "\"read file\" \"conf\"* \"ab\"");  // a 2-letter prefix is a word
  EXPECT_EQ(q.first_term, "read file");
}

TEST(FtsQuery, DropsTermsWithoutLettersOrDigits) {
  EXPECT_TRUE(BuildFtsQuery("( ) * ^ : \"\" -- +").empty());
  EXPECT_TRUE(BuildFtsQuery("").empty());
  EXPECT_EQ(BuildFtsQuery("*** x").match, "\"x\"");
}

TEST(FtsQuery, DoublesEmbeddedQuotes) {
  // A quote inside a bare word ends it; the rest starts a phrase.
  FtsQuery q = BuildFtsQuery("a\"b c\"d");
  EXPECT_EQ(q.match, "\"a\" \"b c\" \"d\"");
}

TEST(FtsQuery, CapsTheNumberOfTerms) {
  std::string many;
  for (int i = 0; i < 100; ++i) many += "w" + std::to_string(i) + " ";
  FtsQuery q = BuildFtsQuery(many);
  EXPECT_EQ(std::count(q.match.begin(), q.match.end(), '"'), 2 * 16);
}

TEST(FtsQuery, CjkGoesToTrigramsAndShortTermsToSubstrings) {
  FtsQuery q = BuildFtsQuery("数据库 迁移 migration");
  EXPECT_TRUE(q.cjk);
  EXPECT_EQ(q.match, "\"数据库\" \"migration\"");
  ASSERT_EQ(q.substrings.size(), 1u);
  EXPECT_EQ(q.substrings[0], "迁移");
}

TEST(FtsQuery, DetectsCjkScripts) {
  EXPECT_TRUE(ContainsCjk("hello 世界"));
  EXPECT_TRUE(ContainsCjk("カタカナ"));
  EXPECT_TRUE(ContainsCjk("한국어"));
  EXPECT_FALSE(ContainsCjk("héllo wörld — ✓"));
  EXPECT_FALSE(ContainsCjk("\xff\xfe\xe4"));  // broken UTF-8 is not CJK, and no crash
}

TEST(FtsQuery, OperatorModeKeepsOperatorsBetweenTerms) {
  const FtsQueryOptions ops{.operators = true};
  EXPECT_EQ(BuildFtsQuery("alpha OR beta", ops).match, R"("alpha" OR "beta")");
  EXPECT_EQ(BuildFtsQuery("python NOT java", ops).match, R"("python" NOT "java")");
  EXPECT_EQ(BuildFtsQuery("a AND b", ops).match, R"("a" AND "b")");
  EXPECT_EQ(BuildFtsQuery("alpha OR beta", ops).note, "");
  // Dangling and repeated operators are dropped (the last of a run kept), and said so.
  FtsQuery q = BuildFtsQuery("NOT OR alpha AND NOT beta OR", ops);
  EXPECT_EQ(q.match, R"("alpha" NOT "beta")");
  EXPECT_NE(q.note, "");
  EXPECT_TRUE(BuildFtsQuery("AND OR NOT", ops).empty());
  // Lower case and quoted operators are words; without operator mode every one is a word.
  EXPECT_EQ(BuildFtsQuery("alpha or \"OR\" beta", ops).match, R"("alpha" "or" "OR" "beta")");
  EXPECT_EQ(BuildFtsQuery("alpha OR beta").match, R"("alpha" "OR" "beta")");
  // CJK with a term too short for a trigram: operators (and a term after NOT) are dropped.
  q = BuildFtsQuery("数据库 NOT 部署", ops);
  EXPECT_EQ(q.match, R"("数据库")");
  EXPECT_TRUE(q.substrings.empty());
  EXPECT_NE(q.note, "");
  EXPECT_EQ(BuildFtsQuery("数据库迁移 OR 会議室", ops).match, R"("数据库迁移" OR "会議室")");
}

TEST(FtsQuery, ControlCharactersAreSpaces) {
  EXPECT_EQ(BuildFtsQuery(std::string("nul\0byte", 8)).match, R"("nul" "byte")");
  EXPECT_EQ(BuildFtsQuery(std::string("\"a\0b\"", 5)).match, R"("a b")");
  EXPECT_EQ(BuildFtsQuery("tab\there").match, R"("tab" "here")");
}

}  // namespace
}  // namespace talaria::store
