#include "talaria/base/uri.h"

#include <gtest/gtest.h>

namespace talaria {
namespace {

TEST(PercentDecode, DecodesPairsAndLeavesBrokenEscapes) {
  EXPECT_EQ(PercentDecode("a%20b%2Fc"), "a b/c");
  EXPECT_EQ(PercentDecode("100%"), "100%");
  EXPECT_EQ(PercentDecode("%zz%4"), "%zz%4");
}

TEST(PercentEncode, KeepsOnlyUnreservedBytesAndRoundTrips) {
  EXPECT_EQ(PercentEncode("aZ09-._~"), "aZ09-._~");
  EXPECT_EQ(PercentEncode(R"({"k":"v w"}/?&=+%)"), "%7B%22k%22%3A%22v%20w%22%7D%2F%3F%26%3D%2B%25");
  const std::string bytes("\0\xff\x80\xc3\xa9", 5);
  EXPECT_EQ(PercentEncode(bytes), "%00%FF%80%C3%A9");
  std::string all;
  for (int c = 0; c < 256; ++c) all += static_cast<char>(c);
  EXPECT_EQ(PercentDecode(PercentEncode(all)), all);
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
