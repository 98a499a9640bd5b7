#include "memory/entries.h"

#include <gtest/gtest.h>

namespace talaria::memory {
namespace {

TEST(MemoryEntries, SplitTrimsAndDropsEmptyEntries) {
  EXPECT_EQ(SplitEntries(""), std::vector<std::string>{});
  EXPECT_EQ(SplitEntries("  one  "), std::vector<std::string>{"one"});
  EXPECT_EQ(SplitEntries("a\n\xC2\xA7\nb\nc"), (std::vector<std::string>{"a", "b\nc"}));
  EXPECT_EQ(SplitEntries("a\n\xC2\xA7\n\n\xC2\xA7\nb"), (std::vector<std::string>{"a", "b"}));
}

TEST(MemoryEntries, JoinIsSplitsInverseForCleanEntries) {
  const std::vector<std::string> entries = {"first", "multi\nline", "third"};
  EXPECT_EQ(SplitEntries(JoinEntries(entries)), entries);
  EXPECT_EQ(JoinEntries(entries), "first\n\xC2\xA7\nmulti\nline\n\xC2\xA7\nthird");
}

TEST(MemoryEntries, CharactersAreCodePoints) {
  EXPECT_EQ(CountChars("abc"), 3u);
  EXPECT_EQ(CountChars("\xC3\xA9t\xC3\xA9"), 3u);         // "été"
  EXPECT_EQ(CountChars("\xE6\x97\xA5\xE6\x9C\xAC"), 2u);  // "日本"
  EXPECT_EQ(CountChars("\xF0\x9F\x98\x80"), 1u);          // an emoji
  // The delimiter is three characters, as in the original.
  EXPECT_EQ(JoinedChars({"ab", "cd"}), 7u);
  EXPECT_EQ(JoinedChars({}), 0u);
}

TEST(MemoryEntries, DriftCatchesWhatARewriteWouldChange) {
  EXPECT_EQ(DriftReason("", 100), "");
  EXPECT_EQ(DriftReason("a\n\xC2\xA7\nb", 100), "");
  EXPECT_EQ(DriftReason("a\n\xC2\xA7\nb\n", 100), "") << "an editor's final newline is fine";
  EXPECT_NE(DriftReason("a\n\n\xC2\xA7\nb", 100), "") << "blank line before a separator";
  EXPECT_NE(DriftReason("a\n\xC2\xA7\n\n\xC2\xA7\nb", 100), "") << "an empty entry";
  EXPECT_NE(DriftReason("a\xFF", 100).find("UTF-8"), std::string::npos);
  EXPECT_NE(DriftReason(std::string("a\0b", 3), 100).find("NUL"), std::string::npos);
  EXPECT_NE(DriftReason(std::string(101, 'x'), 100).find("entry 1 has 101"), std::string::npos);
}

TEST(MemoryEntries, UsageAndPreview) {
  EXPECT_EQ(UsageText(1100, 2200), "50% \xE2\x80\x94 1100/2200 chars");
  EXPECT_EQ(UsageShort(7, 100), "7/100");
  EXPECT_EQ(Preview("short"), "short");
  EXPECT_EQ(Preview(std::string(100, 'x')), std::string(80, 'x') + "...");
  // Cut on whole characters: 80 two-byte characters then more.
  std::string accents;
  for (int i = 0; i < 90; ++i) accents += "\xC3\xA9";
  EXPECT_EQ(Preview(accents).size(), 160u + 3u);
}

}  // namespace
}  // namespace talaria::memory
