#include "talaria/base/sha256.h"

#include <gtest/gtest.h>

#include <string>

namespace talaria {
namespace {

TEST(Sha256, KnownVectors) {
  // FIPS 180-4 / NIST CAVP examples.
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(Sha256Hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, StreamingMatchesOneShot) {
  std::string data;
  for (int i = 0; i < 10000; ++i) data += static_cast<char>(i * 7);
  Sha256 h;
  for (size_t off = 0; off < data.size(); off += 333)
    h.Update(std::string_view(data).substr(off, 333));
  EXPECT_EQ(h.FinalHex(), Sha256Hex(data));
  // Reusable after Final.
  h.Update("abc");
  EXPECT_EQ(h.FinalHex(), Sha256Hex("abc"));
}

}  // namespace
}  // namespace talaria
