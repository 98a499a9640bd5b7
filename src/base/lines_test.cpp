#include "talaria/base/lines.h"

#include <gtest/gtest.h>

#include <string_view>
#include <vector>

namespace talaria {
namespace {

TEST(SplitLines, CountsLinesLikeParsers) {
  EXPECT_TRUE(SplitLines("").empty());
  EXPECT_EQ(SplitLines("a"), (std::vector<std::string_view>{"a"}));
  EXPECT_EQ(SplitLines("a\nb"), (std::vector<std::string_view>{"a", "b"}));
  EXPECT_EQ(SplitLines("a\nb\n"), (std::vector<std::string_view>{"a", "b"}));
  EXPECT_EQ(SplitLines("a\r\n\nb"), (std::vector<std::string_view>{"a\r", "", "b"}));
}

}  // namespace
}  // namespace talaria
