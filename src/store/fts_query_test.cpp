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

}  // namespace
}  // namespace talaria::store
