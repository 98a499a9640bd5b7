#include "talaria/base/uri.h"

#include <gtest/gtest.h>

namespace talaria {
namespace {

TEST(PercentDecode, DecodesPairsAndLeavesBrokenEscapes) {
  EXPECT_EQ(PercentDecode("a%20b%2Fc"), "a b/c");
  EXPECT_EQ(PercentDecode("100%"), "100%");
  EXPECT_EQ(PercentDecode("%zz%4"), "%zz%4");
}

TEST(FileUriPath, GivesLocalAbsolutePathsOnly) {
  EXPECT_EQ(FileUriPath("file:///home/u/my%20project"), "/home/u/my project");
  EXPECT_EQ(FileUriPath("FILE://localhost/srv"), "/srv");
  EXPECT_EQ(FileUriPath("file://otherhost/srv"), std::nullopt);
  EXPECT_EQ(FileUriPath("https://example.com/x"), std::nullopt);
  EXPECT_EQ(FileUriPath("file:relative"), std::nullopt);
  EXPECT_EQ(FileUriPath("file:///a?b"), std::nullopt);
  EXPECT_EQ(FileUriPath("file:///a%00b"), std::nullopt);
  EXPECT_EQ(FileUriPath("file://"), std::nullopt);
}

}  // namespace
}  // namespace talaria
