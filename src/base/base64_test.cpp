// Base64Encode/Base64Decode: RFC 4648's test vectors, every byte value, and what a hostile peer
// can send: characters outside the alphabet, misplaced or excess padding, whitespace, a
// truncated group, and input of tens of megabytes.
#include "talaria/base/base64.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace talaria {
namespace {

TEST(Base64, EncodesTheRfc4648Vectors) {
  const std::vector<std::pair<std::string, std::string>> vectors = {{"", ""},
                                                                    {"f", "Zg=="},
                                                                    {"fo", "Zm8="},
                                                                    {"foo", "Zm9v"},
                                                                    {"foob", "Zm9vYg=="},
                                                                    {"fooba", "Zm9vYmE="},
                                                                    {"foobar", "Zm9vYmFy"}};
  for (const auto& [plain, encoded] : vectors) {
    EXPECT_EQ(Base64Encode(plain), encoded) << plain;
    EXPECT_EQ(Base64Decode(encoded), plain) << encoded;
  }
}

TEST(Base64, RoundTripsEveryByteValueAtEveryLength) {
  std::string bytes;
  for (int i = 0; i < 256; ++i) bytes += static_cast<char>(i);
  for (size_t n = 0; n <= bytes.size(); n += 1) {
    const std::string part = bytes.substr(0, n);
    const std::string encoded = Base64Encode(part);
    EXPECT_EQ(encoded.size() % 4, 0U);
    EXPECT_EQ(Base64Decode(encoded), part) << n;
  }
  EXPECT_EQ(Base64Encode(std::string("\xfb\xff", 2)), "+/8=");
}

TEST(Base64, SkipsWhitespaceAndAcceptsMissingPadding) {
  EXPECT_EQ(Base64Decode("Zm9v\r\nYmFy\n"), "foobar");  // MIME's wrapped lines
  EXPECT_EQ(Base64Decode(" Z m 9\tv "), "foo");
  EXPECT_EQ(Base64Decode("Zm9vYg"), "foob");  // unpadded
  EXPECT_EQ(Base64Decode("Zm9vYmE"), "fooba");
  EXPECT_EQ(Base64Decode("Zm9vYg=\n="), "foob");
  EXPECT_EQ(Base64Decode(""), "");
  EXPECT_EQ(Base64Decode(" \r\n"), "");
}

TEST(Base64, RefusesCharactersOutsideTheAlphabet) {
  for (const std::string& bad : std::vector<std::string>{
           "Zm9v!", "Zm-9", "Zm_9", "Zm9v\v", std::string("Zm\0v", 4), "Zm9\xc3\xa9", "\x80\x80"}) {
    auto r = Base64Decode(bad);
    ASSERT_FALSE(r.has_value()) << bad;
    EXPECT_EQ(r.error().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.error().message().find("outside the alphabet"), std::string::npos)
        << r.error().message();
  }
  EXPECT_NE(Base64Decode("Zm9v!").error().message().find("offset 4"), std::string::npos);
}

TEST(Base64, TakesTheUrlSafeAlphabetOnlyWhenAsked) {
  EXPECT_FALSE(Base64Decode("-_8=").has_value());
  EXPECT_EQ(Base64Decode("-_8=", Base64Alphabet::kStandardOrUrlSafe), std::string("\xfb\xff", 2));
  EXPECT_EQ(Base64Decode("+/8=", Base64Alphabet::kStandardOrUrlSafe), std::string("\xfb\xff", 2));
}

TEST(Base64, RefusesBadPadding) {
  for (const std::string& bad :
       std::vector<std::string>{"Zm9v=", "Zg=", "Zm8==", "Zg===", "=", "==", "Zg==Zg==", "Zm=9v",
                                "Zm9vY", "Z", "Zm9vYmFyY"}) {
    auto r = Base64Decode(bad);
    EXPECT_FALSE(r.has_value()) << bad;
    if (!r) {
      EXPECT_EQ(r.error().code(), StatusCode::kInvalidArgument) << bad;
    }
  }
}

TEST(Base64, HandlesHugeInput) {
  // 24 MiB of bytes (more than the largest MEDIA attachment): 32 MiB of text, decoded back
  // whole; and as much junk refused at its first character, and as many spaces read as nothing.
  std::string big(size_t{24} << 20, '\0');
  for (size_t i = 0; i < big.size(); i += 4096) big[i] = static_cast<char>(i >> 12);
  const std::string encoded = Base64Encode(big);
  ASSERT_EQ(encoded.size(), size_t{32} << 20);
  auto decoded = Base64Decode(encoded);
  ASSERT_TRUE(decoded.has_value());
  EXPECT_TRUE(*decoded == big);
  const std::string junk(size_t{32} << 20, '*');
  EXPECT_FALSE(Base64Decode(junk).has_value());
  const std::string spaces(size_t{32} << 20, ' ');
  EXPECT_EQ(Base64Decode(spaces), "");
}

}  // namespace
}  // namespace talaria
