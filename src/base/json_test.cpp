#include "talaria/base/json.h"

#include <functional>
#include <random>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace talaria {
namespace {

// The reference: what nlohmann's own serializer writes (invalid UTF-8 replaced).
std::string Reference(const Json& v) {
  return v.dump(-1, ' ', false, Json::error_handler_t::replace);
}
std::string Reference(const std::string& s) { return Reference(Json(s)); }

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
    for (int n = len(gen); n > 0; --n)
      s += static_cast<char>(byte(gen) < 200 ? 'a' + byte(gen) % 26 : byte(gen));
    std::string appended = "prefix";
    AppendJsonQuoted(appended, s);
    ASSERT_EQ(appended, "prefix" + Reference(s)) << round;
  }
}

// Long texts, mostly plain with now and then a byte to escape or a (sometimes bad) UTF-8
// sequence: the runs copied eight bytes at a time end exactly where byte-wise escaping would.
TEST(JsonQuote, AgreesWithDumpJsonOnLongMostlyPlainTexts) {
  std::mt19937 gen(11);
  std::uniform_int_distribution<int> pick(0, 99), len(0, 300);
  const std::string specials[] = {"\"",
                                  "\\",
                                  "\n",
                                  "\t",
                                  std::string(1, '\0'),
                                  "\x1f",
                                  "\x7f",
                                  "\xc3\xa9",
                                  "\xf0\x9f\x98\x80",
                                  "\xc3",
                                  "\xed\xa0\x80",
                                  "\x80"};
  for (int round = 0; round < 3000; ++round) {
    std::string s;
    for (int n = len(gen); n > 0; --n) {
      const int p = pick(gen);
      // Bad UTF-8 in one round of four only, so most rounds take the fast path to the end.
      const size_t kinds = round % 4 == 0 ? std::size(specials) : 9;
      s += p < 94 ? std::string(1, static_cast<char>(' ' + p))
                  : specials[static_cast<size_t>(pick(gen)) % kinds];
    }
    std::string appended = "prefix";
    AppendJsonQuoted(appended, s);
    ASSERT_EQ(appended, "prefix" + Reference(s)) << round;
    const std::string quoted = Reference(s);
    ASSERT_TRUE(IsValidJsonText(quoted)) << round;
    ASSERT_TRUE(IsValidJsonText("{\"k\":" + quoted + "}")) << round;
    if (quoted.size() > 2) {  // a raw control byte or a bad sequence inside makes it invalid
      std::string broken = quoted;
      broken.insert(1 + static_cast<size_t>(pick(gen)) % (quoted.size() - 1),
                    round % 2 == 0 ? "\n" : "\xc3");
      ASSERT_EQ(IsValidJsonText(broken), Json::accept(broken)) << round;
    }
  }
}

TEST(IsValidJsonText, AcceptsWhatTheGrammarAllowsAndNothingElse) {
  for (const char* ok :
       {"{}", "[]", " {\"a\" : [1, -0.5e+3, true, false, null, \"\\u00e9\\ud83d\\ude00\\n\"]} ",
        "0", "\"\"", "[[],{}]", "{\"k\":{\"k\":{}}}", "\"\xc3\xa9\xf0\x9f\x98\x80\""}) {
    EXPECT_TRUE(IsValidJsonText(ok)) << ok;
    EXPECT_TRUE(Json::accept(ok)) << ok;
  }
  for (const char* bad : {"",
                          " ",
                          "{",
                          "}",
                          "[1,]",
                          "{\"a\":1,}",
                          "{\"a\" 1}",
                          "{1:2}",
                          "01",
                          "1.",
                          ".5",
                          "-",
                          "1e",
                          "+1",
                          "tru",
                          "nul",
                          "[1 2]",
                          "{} {}",
                          "\"\\x\"",
                          "\"\\u12\"",
                          "\"\\ud800\"",
                          "\"\\udc00\"",
                          "\"\\ud800\\u0041\"",
                          "\"a\nb\"",
                          "\"\xc3\"",
                          "\"\xed\xa0\x80\"",
                          "\"\xc0\xaf\"",
                          "[\"unterminated]",
                          "{\"a\":}",
                          "[,1]",
                          "NaN",
                          "//"}) {
    EXPECT_FALSE(IsValidJsonText(bad)) << bad;
  }
  EXPECT_TRUE(IsValidJsonText(std::string(256, '[') + std::string(256, ']')));
  EXPECT_FALSE(IsValidJsonText(std::string(257, '[') + std::string(257, ']')));
  EXPECT_FALSE(IsValidJsonText(std::string(100000, '[')));
}

TEST(IsValidJsonText, AgreesWithNlohmannOnMutatedDocuments) {
  const std::string base =
      R"({"content":"1|line \"one\"\n2|é\u00e9","total_lines":2,"list":[1,-2.5e3,true,null,{}],"x":{"y":[]}})";
  ASSERT_TRUE(IsValidJsonText(base));
  std::mt19937 gen(5);
  const std::string alphabet = "{}[]\",:\\u0123456789abcdefnrtle-+. \n\xc3\xa9";
  std::uniform_int_distribution<size_t> where(0, base.size() - 1), what(0, alphabet.size() - 1);
  std::uniform_int_distribution<int> how(0, 2);
  for (int round = 0; round < 20000; ++round) {
    std::string s = base;
    for (int edits = 1 + round % 3; edits > 0; --edits) {
      const size_t at = where(gen) % s.size();
      switch (how(gen)) {
        case 0:
          s[at] = alphabet[what(gen)];
          break;
        case 1:
          s.erase(at, 1);
          break;
        default:
          s.insert(at, 1, alphabet[what(gen)]);
      }
      if (s.empty()) s = "x";
    }
    ASSERT_EQ(IsValidJsonText(s), Json::accept(s)) << s;
  }
}

TEST(DumpJson, WritesExactlyWhatNlohmannWrites) {
  Json doc = Json::parse(
      R"({"z": 1, "a": [true, false, null, -0, -17, 18446744073709551615, 9223372036854775807,
      -9223372036854775808, 0.1, 1e300, -2.5e-7, 3.0, "", "é\u0000\u001f\"\\"], "empty": {}, "list": [],
      "nested": {"k\n\"y": {"deeper": [[[]], {"x": {}}]}}})");
  doc["bad utf8"] = std::string("\xff\xc3 end");
  doc[std::string("key \xed\xa0\x80")] = 1.5;
  EXPECT_EQ(DumpJson(doc), Reference(doc));
  EXPECT_EQ(DumpJson(Json()), "null");
  EXPECT_EQ(DumpJson(Json(2.0)), Reference(Json(2.0)));
}

TEST(DumpJson, AgreesWithNlohmannOnRandomDocuments) {
  std::mt19937 gen(11);
  std::uniform_int_distribution<int> pick(0, 9), byte(0, 255);
  std::function<Json(int)> make = [&](int depth) -> Json {
    switch (depth > 4 ? pick(gen) % 6 : pick(gen)) {
      case 0:
        return Json(nullptr);
      case 1:
        return Json(pick(gen) % 2 == 0);
      case 2:
        return Json(static_cast<int64_t>(gen()) - static_cast<int64_t>(gen()) * 3);
      case 3:
        return Json(static_cast<double>(gen()) / 7.0);
      case 4:
        return Json(static_cast<uint64_t>(gen()) << 20);
      case 5: {
        std::string s;
        for (int n = pick(gen) * 3; n > 0; --n) s += static_cast<char>(byte(gen));
        return Json(s);
      }
      case 6:
      case 7: {
        Json a = Json::array();
        for (int n = pick(gen) % 4; n > 0; --n) a.push_back(make(depth + 1));
        return a;
      }
      default: {
        Json o = Json::object();
        for (int n = pick(gen) % 4; n > 0; --n)
          o[std::to_string(pick(gen)) + static_cast<char>(byte(gen))] = make(depth + 1);
        return o;
      }
    }
  };
  for (int round = 0; round < 2000; ++round) {
    const Json doc = make(0);
    ASSERT_EQ(DumpJson(doc), Reference(doc)) << round;
  }
}

}  // namespace
}  // namespace talaria
