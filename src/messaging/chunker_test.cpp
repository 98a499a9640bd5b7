// Splitting at each platform's limit as it counts: every part within the limit, words kept
// whole, code fences closed and reopened, UTF-8 never cut inside a character.
#include "messaging/chunker.h"

#include <gtest/gtest.h>

#include <string>

#include "talaria/base/utf8.h"

namespace talaria::messaging {
namespace {

TEST(Chunker, MeasuresInEachUnit) {
  const std::string s = "a\xC3\xA9\xF0\x9F\x98\x80";  // a, é, 😀
  EXPECT_EQ(MeasureLength(s, LengthUnit::kBytes), 7U);
  EXPECT_EQ(MeasureLength(s, LengthUnit::kCodePoints), 3U);
  EXPECT_EQ(MeasureLength(s, LengthUnit::kUtf16), 4U);
}

TEST(Chunker, ShortTextIsOnePartUnchanged) {
  EXPECT_EQ(SplitMessage("hello", 100, LengthUnit::kCodePoints), std::vector<std::string>{"hello"});
  EXPECT_EQ(SplitMessage(std::string(5000, 'x'), 0, LengthUnit::kCodePoints).size(), 1U);
}

TEST(Chunker, EveryPartFitsAndWordsStayWhole) {
  std::string text;
  for (int i = 0; i < 500; ++i) text += "word" + std::to_string(i) + " ";
  for (LengthUnit unit : {LengthUnit::kBytes, LengthUnit::kCodePoints, LengthUnit::kUtf16}) {
    const auto parts = SplitMessage(text, 200, unit);
    ASSERT_GT(parts.size(), 10U);
    std::string joined;
    for (const std::string& p : parts) {
      EXPECT_LE(MeasureLength(p, unit), 200U) << p;
      const size_t tag = p.rfind(" (");
      joined += p.substr(0, tag) + " ";
    }
    EXPECT_NE(joined.find("word250 word251"), std::string::npos);
    EXPECT_EQ(parts.back().substr(parts.back().rfind(" (")),
              " (" + std::to_string(parts.size()) + "/" + std::to_string(parts.size()) + ")");
  }
}

TEST(Chunker, AstralCharactersCountTwiceForTelegramAndAreNeverCut) {
  std::string text;
  for (int i = 0; i < 300; ++i) text += "\xF0\x9F\x98\x80";
  const auto parts = SplitMessage(text, 100, LengthUnit::kUtf16);
  size_t emoji = 0;
  for (const std::string& p : parts) {
    EXPECT_LE(MeasureLength(p, LengthUnit::kUtf16), 100U);
    EXPECT_TRUE(IsValidUtf8(p));
    emoji += p.substr(0, p.rfind(" (")).size() / 4;
  }
  EXPECT_EQ(emoji, 300U);
}

TEST(Chunker, ReopensACodeFenceCutInTwo) {
  std::string text = "Intro\n```python\n";
  for (int i = 0; i < 40; ++i) text += "print(" + std::to_string(i) + ")\n";
  text += "```\nOutro";
  const auto parts = SplitMessage(text, 120, LengthUnit::kCodePoints);
  ASSERT_GE(parts.size(), 3U);
  for (size_t i = 0; i < parts.size(); ++i) {
    const std::string body = parts[i].substr(0, parts[i].rfind(" ("));
    size_t fences = 0;
    for (size_t at = body.find("```"); at != std::string::npos; at = body.find("```", at + 3)) {
      ++fences;
    }
    EXPECT_EQ(fences % 2, 0U) << "part " << i << ": " << body;
    if (i > 0 && i + 1 < parts.size()) {
      EXPECT_TRUE(body.starts_with("```python\n")) << body;
    }
  }
}

}  // namespace
}  // namespace talaria::messaging
