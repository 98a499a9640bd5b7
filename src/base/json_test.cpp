#include "talaria/base/json.h"

#include <random>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace talaria {
namespace {

// The reference: what nlohmann writes for the string (invalid UTF-8 replaced).
std::string Reference(const std::string& s) { return DumpJson(Json(s)); }

TEST(JsonQuote, WritesExactlyWhatDumpJsonWrites) {
  std::string every_byte;
  for (int c = 0; c < 256; ++c) every_byte += static_cast<char>(c);
  for (const std::string& s : {std::string(), std::string("plain"), std::string("q\"b\\s/"),
                               std::string("\b\f\n\r\t\x01\x1f\x7f"), std::string("é € 😀"),
                               std::string("bad \xc3 and \xed\xa0\x80 surrogate"), every_byte}) {
    EXPECT_EQ(JsonQuote(s), Reference(s)) << s;
  }
}

TEST(JsonQuote, AgreesWithDumpJsonOnRandomBytes) {
  std::mt19937 gen(7);
  std::uniform_int_distribution<int> byte(0, 255), len(0, 64);
  for (int round = 0; round < 5000; ++round) {
    std::string s;
    for (int n = len(gen); n > 0; --n) s += static_cast<char>(byte(gen) < 200 ? 'a' + byte(gen) % 26 : byte(gen));
    std::string appended = "prefix";
    AppendJsonQuoted(appended, s);
    ASSERT_EQ(appended, "prefix" + Reference(s)) << round;
  }
}

}  // namespace
}  // namespace talaria
