#include "talaria/base/random.h"

#include <set>
#include <string>

#include <gtest/gtest.h>

namespace talaria {
namespace {

TEST(RandomHex, GivesTwoLowercaseHexDigitsPerByte) {
  for (size_t bytes : {0u, 1u, 6u, 8u, 33u}) {
    const std::string hex = RandomHex(bytes);
    ASSERT_EQ(hex.size(), 2 * bytes);
    EXPECT_EQ(hex.find_first_not_of("0123456789abcdef"), std::string::npos) << hex;
  }
}

TEST(RandomHex, RepeatsNothingInTenThousandDraws) {
  std::set<std::string> seen;
  for (int i = 0; i < 10'000; ++i) EXPECT_TRUE(seen.insert(RandomHex(8)).second);
}

}  // namespace
}  // namespace talaria
