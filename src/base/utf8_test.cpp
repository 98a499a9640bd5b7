#include "talaria/base/utf8.h"

#include <string>

#include <gtest/gtest.h>

namespace talaria {
namespace {

TEST(IsValidUtf8, AcceptsWellFormedAndPointsAtTheFirstBadByte) {
  EXPECT_TRUE(IsValidUtf8(""));
  EXPECT_TRUE(IsValidUtf8("ascii"));
  EXPECT_TRUE(IsValidUtf8("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xf4\x8f\xbf\xbf"));  // é € 😀 U+10FFFF
  size_t at = 0;
  EXPECT_FALSE(IsValidUtf8("ab\x80", &at));
  EXPECT_EQ(at, 2u);
  EXPECT_FALSE(IsValidUtf8("a\xe0\x80\x80", &at));  // overlong U+0000
  EXPECT_EQ(at, 1u);
  EXPECT_FALSE(IsValidUtf8("\xf8\x88\x80\x80\x80", &at));  // five-byte form
  EXPECT_EQ(at, 0u);
  EXPECT_FALSE(IsValidUtf8(std::string_view("\xc3", 1), &at));
}

}  // namespace
}  // namespace talaria
