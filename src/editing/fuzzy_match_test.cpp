#include "talaria/editing/fuzzy_match.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace talaria::editing {
namespace {

// One edit that must be matched by exactly `strategy` and produce `expected`.
struct StrategyCase {
  const char* name;
  MatchStrategy strategy;
  std::string content;
  std::string old_string;
  std::string new_string;
  std::string expected;
};

const std::vector<StrategyCase>& StrategyCases() {
  static const std::vector<StrategyCase> kCases = {
      {"exact", MatchStrategy::kExact, "alpha\nbeta\ngamma\n", "beta", "BETA",
       "alpha\nBETA\ngamma\n"},
      // Trailing whitespace differs and the block is dedented uniformly: re-indented back.
      {"line_trimmed", MatchStrategy::kLineTrimmed, "def f():\n    x = 1   \n    return x\n",
       "x = 1\nreturn x", "x = 2\nreturn x", "def f():\n    x = 2\n    return x\n"},
      {"whitespace_normalized", MatchStrategy::kWhitespaceNormalized, "total  =   a +  b\n",
       "total = a + b", "total = a - b", "total = a - b\n"},
      // Non-uniform indentation (one line lost its indent, another has half of it).
      {"indentation_flexible", MatchStrategy::kIndentationFlexible, "x = [\n    1,\n    2,\n]\n",
       "x = [\n1,\n  2,\n]", "x = [\n1,\n  3,\n]", "x = [\n    1,\n    3,\n]\n"},
      {"escape_normalized", MatchStrategy::kEscapeNormalized, "a = 1\nb = 2\n", "a = 1\\nb = 2",
       "a = 10\\nb = 20", "a = 10\nb = 20\n"},
      // Boundary lines differ in both leading and trailing whitespace; the middle is exact.
      {"trimmed_boundary", MatchStrategy::kTrimmedBoundary,
       "    start();  \n  middle();\n    end();\n", "start();\n  middle();\nend();",
       "start();\n  middle(2);\nend();", "    start();  \n  middle(2);\n    end();\n"},
      // Smart quotes and an em dash in the file, ASCII from the model: the file's characters
      // survive where the edit did not touch them.
      {"unicode_normalized", MatchStrategy::kUnicodeNormalized,
       "print(\xE2\x80\x9Chello\xE2\x80\x9D)  # say \xE2\x80\x94 hi\n",
       "print(\"hello\")  # say -- hi", "print(\"bye\")  # say -- hi",
       "print(\xE2\x80\x9C"
       "bye\xE2\x80\x9D)  # say \xE2\x80\x94 hi\n"},
      {"unicode_nbsp", MatchStrategy::kUnicodeNormalized,
       "price:\xC2\xA0"
       "100\n",
       "price: 100", "price: 200",
       "price:\xC2\xA0"
       "200\n"},
      // First and last lines anchor; one character differs in the middle.
      {"block_anchor", MatchStrategy::kBlockAnchor,
       "def compute(a, b):\n    total = a + b\n    total = total * 2\n    return total\n# end\n",
       "def compute(a, b):\n    total = a + b\n    total = total * 3\n    return total",
       "def compute(a, b):\n    return (a + b) * 2",
       "def compute(a, b):\n    return (a + b) * 2\n# end\n"},
      // The first line differs, so no anchor: line similarity decides. Lines the edit leaves alone
      // keep the file's text (the model's stale first line is not written).
      {"context_aware", MatchStrategy::kContextAware,
       "int main() {\n  int count = 0;\n  count += step(1);\n  return count;\n}\n",
       "int main(void) {\n  int count = 0;\n  count += step(1);\n  return count;",
       "int main(void) {\n  int count = 0;\n  count += step(2);\n  return count;",
       "int main() {\n  int count = 0;\n  count += step(2);\n  return count;\n}\n"},
  };
  return kCases;
}

TEST(FindMatches, EachStrategyIsTheOneThatMatches) {
  for (const StrategyCase& c : StrategyCases()) {
    SCOPED_TRACE(c.name);
    MatchSet set = FindMatches(c.content, c.old_string);
    ASSERT_EQ(set.matches.size(), 1u);
    EXPECT_EQ(MatchStrategyName(set.strategy), MatchStrategyName(c.strategy));
    if (IsSimilarityStrategy(c.strategy)) {
      EXPECT_GE(set.matches[0].similarity, kMinApplySimilarity);
      EXPECT_LT(set.matches[0].similarity, 1.0);
    } else {
      EXPECT_EQ(set.matches[0].similarity, 1.0);
    }
    auto outcome = FuzzyReplace(c.content, c.old_string, c.new_string, ReplaceAll::kNo);
    ASSERT_TRUE(outcome.has_value()) << outcome.error().message();
    EXPECT_EQ(outcome->content, c.expected);
    EXPECT_EQ(outcome->strategy, c.strategy);
    EXPECT_EQ(outcome->replacements, 1u);
    EXPECT_FALSE(outcome->no_change);
  }
}

TEST(FindMatches, StrategyNamesAreTheWireNames) {
  EXPECT_EQ(MatchStrategyName(MatchStrategy::kIndentationFlexible), "indentation_flexible");
  EXPECT_EQ(MatchStrategyName(MatchStrategy::kContextAware), "context_aware");
  EXPECT_TRUE(IsSimilarityStrategy(MatchStrategy::kBlockAnchor));
  EXPECT_FALSE(IsSimilarityStrategy(MatchStrategy::kUnicodeNormalized));
}

TEST(FindMatches, ExactMatchesDoNotOverlap) {
  MatchSet set = FindMatches("aaaa", "aa");
  ASSERT_EQ(set.matches.size(), 2u);
  EXPECT_EQ(set.matches[0].begin, 0u);
  EXPECT_EQ(set.matches[1].begin, 2u);
}

TEST(FindMatches, WhitespaceNormalizedDoesNotSwallowTheNextWordBoundary) {
  // The match ends at "b"; the spaces after it stay in the file.
  std::string content = "call(a,   b)   ;\n";
  auto outcome = FuzzyReplace(content, "call(a, b)", "call(a, c)", ReplaceAll::kNo);
  ASSERT_TRUE(outcome) << outcome.error().message();
  EXPECT_EQ(outcome->strategy, MatchStrategy::kWhitespaceNormalized);
  EXPECT_EQ(outcome->content, "call(a, c)   ;\n");
}

TEST(FuzzyReplace, RefusesASimilarityMatchBelowTheThresholdAndShowsIt) {
  std::string content =
      "def compute(a, b):\n    total = a + b\n    total = total * 2\n    return total\n";
  std::string old_string =
      "def compute(a, b):\n    total = b * c\n    total = total / 20\n    return total";
  MatchSet set = FindMatches(content, old_string);
  ASSERT_EQ(set.matches.size(), 1u);
  ASSERT_EQ(set.strategy, MatchStrategy::kBlockAnchor);
  ASSERT_LT(set.matches[0].similarity, kMinApplySimilarity);

  auto outcome =
      FuzzyReplace(content, old_string, "def compute(a, b):\n    return 0", ReplaceAll::kNo);
  ASSERT_FALSE(outcome);
  EXPECT_EQ(outcome.error().code(), StatusCode::kFailedPrecondition);
  const std::string& msg = outcome.error().message();
  EXPECT_NE(msg.find("lines 1-4"), std::string::npos) << msg;
  EXPECT_NE(msg.find("block_anchor"), std::string::npos) << msg;
  EXPECT_NE(msg.find("similarity 0."), std::string::npos) << msg;
  EXPECT_NE(msg.find("nothing was changed"), std::string::npos) << msg;
  EXPECT_NE(msg.find("   2|     total = a + b"), std::string::npos) << msg;
}

// Regression for the original's replace-mode bug (reference §5 item 9): a pattern with only half
// its lines resembling the file was applied to that region, silently and without naming the
// matcher. Here it is refused.
TEST(FuzzyReplace, RefusesAWeakContextAwareMatch) {
  std::string content = "alpha_one = 1\nbeta_two = 2\ngamma_three = 3\ndelta = 4\n";
  std::string old_string = "alpha_one = 1\nbeta_two = 2\ngamma_3 = x\ndelta_x = 44";
  auto outcome = FuzzyReplace(content, old_string, "replaced", ReplaceAll::kNo);
  ASSERT_FALSE(outcome);
  EXPECT_EQ(outcome.error().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(outcome.error().message().find("context_aware"), std::string::npos)
      << outcome.error().message();
}

TEST(FuzzyReplace, ListsMultipleMatchesWithLineNumbers) {
  std::string content = "x = 1\ny = 2\nx = 1\nz = 3\nx = 1\n";
  auto outcome = FuzzyReplace(content, "x = 1", "x = 9", ReplaceAll::kNo);
  ASSERT_FALSE(outcome);
  const std::string& msg = outcome.error().message();
  EXPECT_NE(msg.find("Found 3 matches"), std::string::npos) << msg;
  EXPECT_NE(msg.find("  L1: x = 1\n  L3: x = 1\n  L5: x = 1"), std::string::npos) << msg;
  EXPECT_NE(msg.find("replace_all"), std::string::npos) << msg;
}

TEST(FuzzyReplace, CapsTheMatchListAtFive) {
  std::string content;
  for (int i = 0; i < 8; ++i) content += "dup();\n";
  auto outcome = FuzzyReplace(content, "dup();", "one();", ReplaceAll::kNo);
  ASSERT_FALSE(outcome);
  EXPECT_NE(outcome.error().message().find("  L5: dup();\n  ... and 3 more"), std::string::npos)
      << outcome.error().message();
}

TEST(FuzzyReplace, ReplaceAllReplacesEveryPreciseMatch) {
  auto outcome = FuzzyReplace("x = 1\ny = 2\nx = 1\n", "x = 1", "x = 9", ReplaceAll::kYes);
  ASSERT_TRUE(outcome) << outcome.error().message();
  EXPECT_EQ(outcome->content, "x = 9\ny = 2\nx = 9\n");
  EXPECT_EQ(outcome->replacements, 2u);
  EXPECT_EQ(outcome->strategy, MatchStrategy::kExact);

  // Several line_trimmed matches are precise too (the trailing space defeats exact).
  outcome = FuzzyReplace("  a()\nb\n    a()\n", "a() \n", "c()\n", ReplaceAll::kYes);
  ASSERT_TRUE(outcome) << outcome.error().message();
  EXPECT_EQ(outcome->strategy, MatchStrategy::kLineTrimmed);
  EXPECT_EQ(outcome->content, "  c()\nb\n    c()\n");
}

TEST(FuzzyReplace, ReplaceAllRefusesSeveralApproximateMatches) {
  std::string block1 = "begin\n  value = compute(1)\n  more = 2\nend\n";
  std::string block2 = "begin\n  value = compute(2)\n  more = 2\nend\n";
  std::string content = block1 + "\n" + block2;
  std::string old_string = "begin\n  value = compute(3)\n  more = 2\nend";
  MatchSet set = FindMatches(content, old_string);
  ASSERT_EQ(set.strategy, MatchStrategy::kBlockAnchor);
  ASSERT_EQ(set.matches.size(), 2u);
  auto outcome = FuzzyReplace(content, old_string, "begin\nend", ReplaceAll::kYes);
  ASSERT_FALSE(outcome);
  EXPECT_EQ(outcome.error().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(outcome.error().message().find("2 approximate matches via block_anchor"),
            std::string::npos)
      << outcome.error().message();
  // Without replace_all it is the ordinary ambiguity error, with similarities shown.
  outcome = FuzzyReplace(content, old_string, "begin\nend", ReplaceAll::kNo);
  ASSERT_FALSE(outcome);
  EXPECT_NE(outcome.error().message().find("(similarity 0."), std::string::npos)
      << outcome.error().message();
}

TEST(FuzzyReplace, RejectsEmptyBlankAndIdenticalStrings) {
  auto empty = FuzzyReplace("abc", "", "x", ReplaceAll::kNo);
  ASSERT_FALSE(empty);
  EXPECT_EQ(empty.error().code(), StatusCode::kInvalidArgument);
  auto blank = FuzzyReplace("a \n\n b", " \n\t", "x", ReplaceAll::kNo);
  ASSERT_FALSE(blank);
  EXPECT_EQ(blank.error().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(blank.error().message().find("whitespace"), std::string::npos);
  auto same = FuzzyReplace("abc", "abc", "abc", ReplaceAll::kNo);
  ASSERT_FALSE(same);
  EXPECT_EQ(same.error().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(same.error().message().find("identical"), std::string::npos);
}

TEST(FuzzyReplace, AlreadyAppliedIsASuccessfulNoOp) {
  std::string content = "value = compute_total(items)\n";
  auto outcome = FuzzyReplace(content, "value = compute(items)", "value = compute_total(items)",
                              ReplaceAll::kNo);
  ASSERT_TRUE(outcome) << outcome.error().message();
  EXPECT_TRUE(outcome->no_change);
  EXPECT_EQ(outcome->content, content);
  ASSERT_FALSE(outcome->notes.empty());
  EXPECT_NE(outcome->notes[0].find("File already contains the target text"), std::string::npos);
  EXPECT_NE(outcome->notes[0].find("do not re-send this patch"), std::string::npos);

  // Short targets are not trusted as proof.
  EXPECT_FALSE(IsAlreadyApplied("x = 12\n", "x = 1;", "x = 12"));
  // Old text still present: not applied (at best half-applied).
  EXPECT_FALSE(IsAlreadyApplied("old_value()\nnew_value()\n", "old_value()", "new_value()"));
  // CRLF file, LF new_string.
  EXPECT_TRUE(IsAlreadyApplied("first line\r\nsecond line\r\n", "zzz", "first line\nsecond line"));
}

TEST(FuzzyReplace, KeepsCrlfLineEndings) {
  auto outcome = FuzzyReplace("a\r\nb\r\nc\r\n", "a\nb", "a\nB\nextra", ReplaceAll::kNo);
  ASSERT_TRUE(outcome) << outcome.error().message();
  EXPECT_EQ(outcome->strategy, MatchStrategy::kExact);
  EXPECT_EQ(outcome->content, "a\r\nB\r\nextra\r\nc\r\n");

  // A single-line match in a CRLF file: new lines follow the file's majority.
  outcome = FuzzyReplace("x\r\ny\r\n", "y", "y1\ny2", ReplaceAll::kNo);
  ASSERT_TRUE(outcome) << outcome.error().message();
  EXPECT_EQ(outcome->content, "x\r\ny1\r\ny2\r\n");

  // Through a normalizing matcher too.
  outcome = FuzzyReplace("  a\r\n  b\r\n", "a\nb", "a\nc", ReplaceAll::kNo);
  ASSERT_TRUE(outcome) << outcome.error().message();
  EXPECT_EQ(outcome->strategy, MatchStrategy::kLineTrimmed);
  EXPECT_EQ(outcome->content, "  a\r\n  c\r\n");
}

TEST(FuzzyReplace, ReindentsToTheFileIndentation) {
  // 2-space old_string against a 4-space file: not a uniform shift (whitespace_normalized
  // catches it); every changed line is mapped through the learned indentation pairs.
  std::string content = "class A:\n    def f(self):\n        return 1\n";
  auto outcome = FuzzyReplace(content, "  def f(self):\n    return 1",
                              "  def f(self):\n    x = 1\n    return x", ReplaceAll::kNo);
  ASSERT_TRUE(outcome) << outcome.error().message();
  EXPECT_EQ(outcome->strategy, MatchStrategy::kWhitespaceNormalized);
  EXPECT_EQ(outcome->content, "class A:\n    def f(self):\n        x = 1\n        return x\n");

  // A uniform shift, including a line nested deeper than anything in old_string.
  outcome = FuzzyReplace(content, "def f(self):\n    return 1",
                         "def f(self):\n    if ok:\n        return 2", ReplaceAll::kNo);
  ASSERT_TRUE(outcome) << outcome.error().message();
  EXPECT_EQ(outcome->strategy, MatchStrategy::kLineTrimmed);
  EXPECT_EQ(outcome->content, "class A:\n    def f(self):\n        if ok:\n            return 2\n");
}

TEST(FuzzyReplace, OldStringWithTrailingNewlineTakesTheNewline) {
  auto outcome = FuzzyReplace("a\nb\nc\n", "  b\n", "  B\n", ReplaceAll::kNo);
  ASSERT_TRUE(outcome) << outcome.error().message();
  EXPECT_EQ(outcome->content, "a\nB\nc\n");
  outcome = FuzzyReplace("a\n  b\nc\n", "b \n", "", ReplaceAll::kNo);
  ASSERT_TRUE(outcome) << outcome.error().message();
  EXPECT_EQ(outcome->content, "a\nc\n");
}

TEST(FuzzyReplace, EmptyNewStringDeletes) {
  auto outcome = FuzzyReplace("keep\ndrop me\nkeep\n", "drop me\n", "", ReplaceAll::kNo);
  ASSERT_TRUE(outcome) << outcome.error().message();
  EXPECT_EQ(outcome->content, "keep\nkeep\n");
}

TEST(FuzzyReplace, NotFoundSuggestsTheClosestRegion) {
  std::string content = "def handler(request):\n    return ok\n";
  auto outcome = FuzzyReplace(content, "retrun ok", "return fine", ReplaceAll::kNo);
  ASSERT_FALSE(outcome);
  EXPECT_EQ(outcome.error().code(), StatusCode::kNotFound);
  const std::string& msg = outcome.error().message();
  EXPECT_EQ(msg.rfind("Could not find a match for old_string in the file", 0), 0u) << msg;
  EXPECT_NE(msg.find("Did you mean one of these sections?"), std::string::npos) << msg;
  EXPECT_NE(msg.find("   2|     return ok"), std::string::npos) << msg;
}

TEST(FuzzyReplace, NotFoundExplainsAWhitespaceOnlyDifference) {
  std::string content = "\tcall(x)\n\tnext()\n";
  auto outcome = FuzzyReplace(content, "  call(x)\n  zzzzzzzzz()\n  qqqqqq", "y", ReplaceAll::kNo);
  ASSERT_FALSE(outcome);
  EXPECT_EQ(outcome.error().code(), StatusCode::kNotFound);
  const std::string& msg = outcome.error().message();
  EXPECT_NE(msg.find("differs only in whitespace"), std::string::npos) << msg;
  EXPECT_NE(msg.find("in the file:    \xE2\x86\x92"
                     "call(x)"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("in old_string:  \xC2\xB7\xC2\xB7"
                     "call(x)"),
            std::string::npos)
      << msg;
}

TEST(FuzzyReplace, NothingCloseGivesThePlainError) {
  auto outcome = FuzzyReplace("aaaa\nbbbb\n", "zzzzzzzz qqqq", "x", ReplaceAll::kNo);
  ASSERT_FALSE(outcome);
  EXPECT_EQ(outcome.error().message(), "Could not find a match for old_string in the file");
}

TEST(FuzzyReplace, RefusesEscapeDrift) {
  std::string content = "  a = 1\n  print(\"hi\")\n";
  std::string old_string = "a = 1\nprint(\\\"hi\\\")";
  auto outcome = FuzzyReplace(content, old_string, "a = 2\nprint(\\\"bye\\\")", ReplaceAll::kNo);
  ASSERT_FALSE(outcome);
  EXPECT_EQ(outcome.error().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(outcome.error().message().find("Escape drift"), std::string::npos)
      << outcome.error().message();
}

TEST(FuzzyReplace, EscapeNormalizedKeepsDeliberateLiteralEscapes) {
  // new_string holds a real newline, so its "\n" is meant literally (a C string).
  auto outcome =
      FuzzyReplace("x();\ny();\n", "x();\\ny();", "x();\nprintf(\"\\n\");", ReplaceAll::kNo);
  ASSERT_TRUE(outcome) << outcome.error().message();
  EXPECT_EQ(outcome->strategy, MatchStrategy::kEscapeNormalized);
  EXPECT_EQ(outcome->content, "x();\nprintf(\"\\n\");\n");
}

TEST(FuzzyReplace, UnchangedLinesKeepTheFileBytes) {
  // line_trimmed: the untouched line keeps its trailing spaces and smart apostrophe context.
  std::string content = "  first();   \n  second();\n";
  auto outcome =
      FuzzyReplace(content, "first();\nsecond();", "first();\nthird();", ReplaceAll::kNo);
  ASSERT_TRUE(outcome) << outcome.error().message();
  EXPECT_EQ(outcome->content, "  first();   \n  third();\n");
}

TEST(SimilarityRatio, MatchesAQuadraticLcs) {
  EXPECT_EQ(SimilarityRatio("", ""), 1.0);
  EXPECT_EQ(SimilarityRatio("abc", "abc"), 1.0);
  EXPECT_EQ(SimilarityRatio("abc", "xyz"), 0.0);
  std::mt19937 rng(11);
  for (int round = 0; round < 200; ++round) {
    std::uniform_int_distribution<size_t> len(0, 150);
    std::uniform_int_distribution<int> sym(0, round % 3 == 0 ? 2 : 25);
    std::string a(len(rng), 'a'), b(len(rng), 'a');
    for (auto& c : a) c = static_cast<char>('a' + sym(rng));
    for (auto& c : b) c = static_cast<char>('a' + sym(rng));
    std::vector<std::vector<size_t>> dp(a.size() + 1, std::vector<size_t>(b.size() + 1, 0));
    for (size_t i = 1; i <= a.size(); ++i) {
      for (size_t j = 1; j <= b.size(); ++j) {
        dp[i][j] =
            a[i - 1] == b[j - 1] ? dp[i - 1][j - 1] + 1 : std::max(dp[i - 1][j], dp[i][j - 1]);
      }
    }
    const double want = a.size() + b.size() == 0
                            ? 1.0
                            : 2.0 * static_cast<double>(dp[a.size()][b.size()]) /
                                  static_cast<double>(a.size() + b.size());
    EXPECT_DOUBLE_EQ(SimilarityRatio(a, b), want) << a << " / " << b;
  }
}

// Random texts over an alphabet rich in the things the matchers normalize: matches stay in
// bounds, ordered, non-overlapping, never split a "\r\n" or a UTF-8 sequence, and replacing
// never crashes.
TEST(FindMatches, RandomInputsKeepTheRangeInvariants) {
  const std::vector<std::string> pieces = {"a",
                                           "b",
                                           "foo",
                                           "bar(",
                                           ")",
                                           " ",
                                           "  ",
                                           "\t",
                                           "\n",
                                           "\r\n",
                                           "\\n",
                                           "\"",
                                           "'",
                                           "\xE2\x80\x94",
                                           "\xE2\x80\x9C",
                                           "\xC2\xA0",
                                           "\xE2\x80\xA6",
                                           "--",
                                           "...",
                                           "x = 1"};
  std::mt19937 rng(1234);
  auto is_continuation = [](char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; };
  auto random_text = [&](size_t n) {
    std::string out;
    std::uniform_int_distribution<size_t> pick(0, pieces.size() - 1);
    for (size_t i = 0; i < n; ++i) out += pieces[pick(rng)];
    return out;
  };
  for (int round = 0; round < 3000; ++round) {
    std::string content = random_text(std::uniform_int_distribution<size_t>(0, 60)(rng));
    std::string old_string;
    if (round % 3 == 0 && !content.empty()) {
      size_t b = std::uniform_int_distribution<size_t>(0, content.size() - 1)(rng);
      size_t e = std::min(content.size(), b + std::uniform_int_distribution<size_t>(1, 30)(rng));
      // Arguments arrive as JSON strings, so they are valid UTF-8: cut on character boundaries.
      while (b > 0 && is_continuation(content[b])) --b;
      while (e < content.size() && is_continuation(content[e])) ++e;
      old_string = content.substr(b, e - b);
    } else {
      old_string = random_text(std::uniform_int_distribution<size_t>(1, 12)(rng));
    }
    if (old_string.empty()) continue;
    MatchSet set = FindMatches(content, old_string);
    size_t prev_end = 0;
    for (const TextMatch& m : set.matches) {
      ASSERT_LE(m.begin, m.end);
      ASSERT_LE(m.end, content.size());
      ASSERT_GE(m.begin, prev_end);
      prev_end = m.end;
      ASSERT_GE(m.similarity, 0.0);
      ASSERT_LE(m.similarity, 1.0);
      if (old_string.find('\r') == std::string::npos) {
        for (size_t edge : {m.begin, m.end}) {
          ASSERT_FALSE(edge > 0 && edge < content.size() && content[edge - 1] == '\r' &&
                       content[edge] == '\n')
              << "split CRLF";
        }
      }
      if (m.begin < content.size()) {
        ASSERT_FALSE(is_continuation(content[m.begin]))
            << MatchStrategyName(set.strategy) << " old=" << ::testing::PrintToString(old_string)
            << " content=" << ::testing::PrintToString(content);
      }
      if (m.end < content.size()) {
        ASSERT_FALSE(is_continuation(content[m.end]));
      }
    }
    std::string new_string = random_text(std::uniform_int_distribution<size_t>(0, 8)(rng));
    auto outcome = FuzzyReplace(content, old_string, new_string,
                                round % 2 == 0 ? ReplaceAll::kNo : ReplaceAll::kYes);
    if (outcome && set.strategy == MatchStrategy::kExact && !outcome->no_change &&
        content.find("\r\n") == std::string::npos && new_string.find('\n') == std::string::npos) {
      // Plain exact replacement: the std::string equivalent.
      std::string expected;
      size_t cursor = 0;
      for (const TextMatch& m : set.matches) {
        expected += content.substr(cursor, m.begin - cursor) + new_string;
        cursor = m.end;
      }
      expected += content.substr(cursor);
      EXPECT_EQ(outcome->content, expected);
    }
  }
}

// Every strategy runs to the end on a large file and a near miss, and none of them settles for a
// wrong block (its speed: bench/file_bench.cpp, patch_fuzzy_miss_20k_lines_ms).
TEST(FuzzyReplace, NearMissInALargeFileIsRefused) {
  std::string content;
  for (int i = 0; i < 20000; ++i) content += "    line_number_" + std::to_string(i) + " = i;\n";
  std::string old_string;
  for (int i = 0; i < 30; ++i) old_string += "line_nomber_" + std::to_string(i * 7) + " = j;\n";
  MatchSet set = FindMatches(content, old_string);
  for (const TextMatch& m : set.matches) EXPECT_LT(m.similarity, kMinApplySimilarity);
  EXPECT_FALSE(FuzzyReplace(content, old_string, "x\n", ReplaceAll::kNo));
}

}  // namespace
}  // namespace talaria::editing
