#include "talaria/base/utf8.h"

#include <string>

#include <gtest/gtest.h>

namespace talaria {
namespace {

TEST(IsValidUtf8, AcceptsWellFormedAndPointsAtTheFirstBadByte) {
  EXPECT_TRUE(IsValidUtf8(""));
  EXPECT_TRUE(IsValidUtf8("ascii"));
  EXPECT_TRUE(
      IsValidUtf8("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xf4\x8f\xbf\xbf"));  // é € 😀 U+10FFFF
  size_t at = 0;
  EXPECT_FALSE(IsValidUtf8("ab\x80", &at));
  EXPECT_EQ(at, 2u);
  EXPECT_FALSE(IsValidUtf8("a\xe0\x80\x80", &at));  // overlong U+0000
  EXPECT_EQ(at, 1u);
  EXPECT_FALSE(IsValidUtf8("\xf8\x88\x80\x80\x80", &at));  // five-byte form
  EXPECT_EQ(at, 0u);
  EXPECT_FALSE(IsValidUtf8(std::string_view("\xc3", 1), &at));
}

// The ASCII runs are skipped eight bytes at a time: a bad byte at any offset of a long text,
// before, inside or after such a run, is still found at its offset.
TEST(IsValidUtf8, FindsTheFirstBadByteAtAnyOffsetOfALongText) {
  for (size_t at = 0; at < 40; ++at) {
    for (const std::string_view bad :
         {std::string_view("\x80"), std::string_view("\xc3"), std::string_view("\xed\xa0\x80"),
          std::string_view("\xff")}) {
      std::string text(at, 'a');
      text += "\xc3\xa9";  // one good sequence first: the bad one is the second non-ASCII
      text += bad;
      text += std::string(17, 'b');
      size_t offset = 0;
      EXPECT_FALSE(IsValidUtf8(text, &offset)) << at;
      EXPECT_EQ(offset, at + 2) << at;
      EXPECT_TRUE(IsValidUtf8(std::string(at, 'a') + "\xf0\x9f\x98\x80" + std::string(at, 'c')))
          << at;
    }
  }
}

TEST(Utf8SequenceLength, MeasuresOneWellFormedSequenceOrSaysZero) {
  EXPECT_EQ(Utf8SequenceLength(""), 0u);
  EXPECT_EQ(Utf8SequenceLength("ab"), 1u);
  EXPECT_EQ(Utf8SequenceLength("\xc3\xa9x"), 2u);
  EXPECT_EQ(Utf8SequenceLength("\xe2\x82\xac"), 3u);
  EXPECT_EQ(Utf8SequenceLength("\xf0\x9f\x98\x80"), 4u);
  EXPECT_EQ(Utf8SequenceLength("\xf0\x9f\x98"), 0u);      // cut off
  EXPECT_EQ(Utf8SequenceLength("\x80"), 0u);              // a continuation byte first
  EXPECT_EQ(Utf8SequenceLength("\xc0\xaf"), 0u);          // overlong
  EXPECT_EQ(Utf8SequenceLength("\xed\xa0\x80"), 0u);      // surrogate
  EXPECT_EQ(Utf8SequenceLength("\xf4\x90\x80\x80"), 0u);  // past U+10FFFF
}

}  // namespace
}  // namespace talaria
