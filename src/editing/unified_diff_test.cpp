#include "talaria/editing/unified_diff.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace talaria::editing {
namespace {

size_t NaiveLcs(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b) {
  std::vector<std::vector<size_t>> dp(a.size() + 1, std::vector<size_t>(b.size() + 1, 0));
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      dp[i][j] = a[i - 1] == b[j - 1] ? dp[i - 1][j - 1] + 1 : std::max(dp[i - 1][j], dp[i][j - 1]);
    }
  }
  return dp[a.size()][b.size()];
}

TEST(DiffSequences, IsAMinimalScriptThatRebuildsBothSides) {
  std::mt19937 rng(7);
  for (int round = 0; round < 300; ++round) {
    std::uniform_int_distribution<size_t> len(0, 40);
    std::uniform_int_distribution<uint32_t> sym(0, round % 2 == 0 ? 3 : 12);
    std::vector<uint32_t> a(len(rng)), b(len(rng));
    for (auto& x : a) x = sym(rng);
    for (auto& x : b) x = sym(rng);
    std::vector<DiffRun> runs = DiffSequences(a, b);
    std::vector<uint32_t> rebuilt_a, rebuilt_b;
    size_t equal = 0, ai = 0, bi = 0;
    for (const DiffRun& run : runs) {
      ASSERT_EQ(run.a_begin, ai);
      ASSERT_EQ(run.b_begin, bi);
      switch (run.kind) {
        case DiffRun::Kind::kEqual:
          ASSERT_EQ(run.a_end - run.a_begin, run.b_end - run.b_begin);
          for (size_t k = 0; k < run.a_end - run.a_begin; ++k) {
            ASSERT_EQ(a[run.a_begin + k], b[run.b_begin + k]);
          }
          equal += run.a_end - run.a_begin;
          break;
        case DiffRun::Kind::kDelete:
          ASSERT_EQ(run.b_begin, run.b_end);
          break;
        case DiffRun::Kind::kInsert:
          ASSERT_EQ(run.a_begin, run.a_end);
          break;
      }
      ai = run.a_end;
      bi = run.b_end;
    }
    EXPECT_EQ(ai, a.size());
    EXPECT_EQ(bi, b.size());
    EXPECT_EQ(equal, NaiveLcs(a, b)) << "round " << round;
  }
}

TEST(UnifiedDiff, EqualTextsGiveNothing) {
  EXPECT_EQ(UnifiedFileDiff("x", "a\nb\n", "a\nb\n"), "");
}

TEST(UnifiedDiff, OneChangedLineWithContext) {
  std::string old_text = "1\n2\n3\n4\n5\n6\n7\n8\n9\n";
  std::string new_text = "1\n2\n3\n4\nFIVE\n6\n7\n8\n9\n";
  EXPECT_EQ(UnifiedFileDiff("src/n.txt", old_text, new_text),
            "--- a/src/n.txt\n+++ b/src/n.txt\n"
            "@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+FIVE\n 6\n 7\n 8\n");
}

TEST(UnifiedDiff, FarApartChangesMakeTwoHunksAndCloseOnesMerge) {
  std::string old_text;
  for (int i = 1; i <= 20; ++i) old_text += std::to_string(i) + "\n";
  std::string far = old_text, close = old_text;
  far.replace(far.find("2\n"), 2, "two\n");
  far.replace(far.find("19\n"), 3, "nineteen\n");
  std::string d = UnifiedFileDiff("f", old_text, far);
  EXPECT_NE(d.find("@@ -1,5 +1,5 @@\n"), std::string::npos) << d;
  EXPECT_NE(d.find("@@ -16,5 +16,5 @@\n"), std::string::npos) << d;

  close.replace(close.find("5\n"), 2, "five\n");
  close.replace(close.find("10\n"), 3, "ten\n");
  d = UnifiedFileDiff("f", old_text, close);
  EXPECT_EQ(std::count(d.begin(), d.end(), '@'), 4) << d;  // one hunk header
  EXPECT_NE(d.find("@@ -2,12 +2,12 @@\n"), std::string::npos) << d;
}

TEST(UnifiedDiff, PureInsertionAndDeletionRanges) {
  EXPECT_EQ(UnifiedDiff("", "a\nb\n", "/dev/null", "b/new"),
            "--- /dev/null\n+++ b/new\n@@ -0,0 +1,2 @@\n+a\n+b\n");
  EXPECT_EQ(UnifiedDiff("a\n", "", "a/old", "/dev/null"),
            "--- a/old\n+++ /dev/null\n@@ -1 +0,0 @@\n-a\n");
}

TEST(UnifiedDiff, MarksAMissingFinalNewline) {
  EXPECT_EQ(UnifiedFileDiff("f", "a\nb", "a\nb\n"),
            "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n");
}

TEST(UnifiedDiff, KeepsCrlfLinesWhole) {
  std::string d = UnifiedFileDiff("f", "a\r\nb\r\n", "a\r\nc\r\n");
  EXPECT_EQ(d, "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\r\n-b\r\n+c\r\n");
}

TEST(SplitLinesKeepEnds, SplitsAfterEachNewline) {
  auto lines = SplitLinesKeepEnds("a\nb\r\nc");
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], "a\n");
  EXPECT_EQ(lines[1], "b\r\n");
  EXPECT_EQ(lines[2], "c");
  EXPECT_TRUE(SplitLinesKeepEnds("").empty());
}

}  // namespace
}  // namespace talaria::editing
