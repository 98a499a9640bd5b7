#include "tools/code/rpc_frame.h"

#include <gtest/gtest.h>

namespace talaria::tools::code {
namespace {

TEST(RpcFrame, RoundTripsFramesSplitAnywhere) {
  const std::string stream =
      EncodeFrame(R"({"id":1})") + EncodeFrame("") + EncodeFrame(std::string(70'000, 'x'));
  for (size_t piece : {size_t{1}, size_t{3}, size_t{4096}, stream.size()}) {
    FrameReader reader;
    std::vector<std::string> got;
    for (size_t at = 0; at < stream.size(); at += piece) {
      reader.Feed(std::string_view(stream).substr(at, piece));
      for (;;) {
        auto next = reader.Next();
        ASSERT_TRUE(next) << next.error().ToString();
        if (!*next) break;
        got.push_back(**next);
      }
    }
    ASSERT_EQ(got.size(), 3u) << "piece " << piece;
    EXPECT_EQ(got[0], R"({"id":1})");
    EXPECT_EQ(got[1], "");
    EXPECT_EQ(got[2].size(), 70'000u);
    EXPECT_EQ(reader.pending(), 0u);
  }
}

TEST(RpcFrame, HeaderIsBigEndianLength) {
  const std::string frame = EncodeFrame("abc");
  ASSERT_EQ(frame.size(), 7u);
  EXPECT_EQ(frame.substr(0, 4), std::string("\0\0\0\3", 4));
}

TEST(RpcFrame, RefusesOversizedFrame) {
  FrameReader reader;
  reader.Feed(std::string("\x7f\xff\xff\xff", 4));
  auto next = reader.Next();
  ASSERT_FALSE(next);
  EXPECT_EQ(next.error().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace talaria::tools::code
