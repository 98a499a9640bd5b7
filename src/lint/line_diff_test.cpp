#include "lint/line_diff.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace talaria::lint_internal {
namespace {

struct MapCase {
  const char* name;
  std::string old_text;
  std::string new_text;
  std::vector<int> expected;  // index 0 unused; last entry = end of text
};

TEST(MapOldLinesToNew, Table) {
  const std::vector<MapCase> cases = {
      {"identical", "a\nb\nc\n", "a\nb\nc\n", {0, 1, 2, 3, 4}},
      {"insert at top", "a\nb\nc\n", "x\ny\na\nb\nc\n", {0, 3, 4, 5, 6}},
      {"delete in middle", "a\nb\nc\nd\n", "a\nd\n", {0, 1, 0, 0, 2, 3}},
      {"change one line", "a\nb\nc\n", "a\nB\nc\n", {0, 1, 0, 3, 4}},
      {"append", "a\nb\n", "a\nb\nc\nd\n", {0, 1, 2, 5}},
      {"old empty", "", "a\n", {0, 2}},
      {"new empty", "a\nb\n", "", {0, 0, 0, 1}},
      // The middle needs Myers: lines kept between scattered edits.
      {"interleaved edits",
       "a\nb\nc\nd\ne\nf\n",
       "a\nX\nc\nY\nZ\ne\nW\n",
       {0, 1, 0, 3, 0, 6, 0, 8}},
      {"moved block", "h\n1\n2\n3\nt\n", "h\n3\n1\n2\nt\n", {0, 1, 3, 4, 0, 5, 6}},
      {"duplicate lines", "x\nx\nerr\nx\n", "x\nnew\nx\nx\nerr\nx\n", {0, 1, 4, 5, 6, 7}},
  };
  for (const MapCase& c : cases) {
    EXPECT_EQ(MapOldLinesToNew(c.old_text, c.new_text), c.expected) << c.name;
  }
}

TEST(MapOldLinesToNew, LargeRewriteLeavesMiddleUnmappedWithinBudget) {
  std::string old_text = "head\n";
  std::string new_text = "head\n";
  for (int i = 0; i < 5000; ++i) {
    old_text += "old " + std::to_string(i) + "\n";
    new_text += "new " + std::to_string(i) + "\n";
  }
  old_text += "tail\n";
  new_text += "tail\n";
  const std::vector<int> map = MapOldLinesToNew(old_text, new_text, /*max_work=*/100000);
  ASSERT_EQ(map.size(), 5004u);
  EXPECT_EQ(map[1], 1);
  EXPECT_EQ(map[2], 0);
  EXPECT_EQ(map[5001], 0);
  EXPECT_EQ(map[5002], 5002);
  EXPECT_EQ(map[5003], 5003);
}

TEST(MapOldLinesToNew, ShiftedLineFarDownTheFileIsMapped) {
  std::string old_text;
  for (int i = 0; i < 20000; ++i) old_text += "line " + std::to_string(i) + "\n";
  std::string new_text = "import os\nimport sys\n" + old_text;
  new_text.replace(new_text.find("line 10000\n"), 11, "changed\n");
  const std::vector<int> map = MapOldLinesToNew(old_text, new_text);
  EXPECT_EQ(map[1], 3);
  EXPECT_EQ(map[10001], 0);  // "line 10000" was changed
  EXPECT_EQ(map[15000], 15002);
  EXPECT_EQ(map[20001], 20003);
}

}  // namespace
}  // namespace talaria::lint_internal
