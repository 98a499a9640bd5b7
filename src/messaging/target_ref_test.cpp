// Target refs: the platform split, home channels, configured names, and each platform's id shape
// (a thread only where the platform has one).
#include "messaging/target_ref.h"

#include <gtest/gtest.h>

#include "messaging/media_refs.h"

namespace talaria::messaging {
namespace {

PlatformSettings Platform(const std::string& name) {
  PlatformSettings p;
  p.name = name;
  p.enabled = true;
  return p;
}

Result<Destination> Resolve(const std::string& target, const PlatformSettings& p) {
  auto ref = ParseTarget(target);
  if (!ref) return Err(ref.error());
  return ResolveTarget(*ref, p);
}

TEST(TargetRef, SplitsAtTheFirstColonAndLowersThePlatform) {
  auto ref = ParseTarget(" Matrix:!room:example.org ");
  ASSERT_TRUE(ref.has_value());
  EXPECT_EQ(ref->platform, "matrix");
  EXPECT_EQ(ref->rest, "!room:example.org");
  EXPECT_FALSE(ParseTarget("").has_value());
  EXPECT_FALSE(ParseTarget(":x").has_value());
}

TEST(TargetRef, ReadsEachPlatformsIdShape) {
  auto tg = Resolve("telegram:-1001234567890:17585", Platform("telegram"));
  ASSERT_TRUE(tg.has_value());
  EXPECT_EQ(tg->chat, "-1001234567890");
  EXPECT_EQ(tg->thread, "17585");
  auto slack = Resolve("slack:C0123ABC:1700000000.000100", Platform("slack"));
  ASSERT_TRUE(slack.has_value());
  EXPECT_EQ(slack->chat, "C0123ABC");
  EXPECT_EQ(slack->thread, "1700000000.000100");
  auto room = Resolve("matrix:!abc:example.org", Platform("matrix"));
  ASSERT_TRUE(room.has_value());
  EXPECT_EQ(room->chat, "!abc:example.org");
  EXPECT_TRUE(room->thread.empty());
  EXPECT_TRUE(Resolve("signal:+15551234567", Platform("signal")).has_value());
  EXPECT_TRUE(Resolve("signal:group.YWJjZA==", Platform("signal")).has_value());
  EXPECT_TRUE(Resolve("email:a@example.org", Platform("email")).has_value());
  EXPECT_TRUE(Resolve("sms:+15551234567", Platform("sms")).has_value());
  EXPECT_TRUE(Resolve("ntfy:my-topic_1", Platform("ntfy")).has_value());
  // Not ids: a header injection, a phone without +, a name nobody configured.
  EXPECT_FALSE(Resolve("email:a@x.org\r\nBcc: b@y.org", Platform("email")).has_value());
  EXPECT_FALSE(Resolve("sms:5551234567", Platform("sms")).has_value());
  auto unknown = Resolve("discord:#general", Platform("discord"));
  ASSERT_FALSE(unknown.has_value());
  EXPECT_EQ(unknown.error().code(), StatusCode::kNotFound);
}

TEST(TargetRef, HomeChannelAndNamesComeFromSettings) {
  PlatformSettings p = Platform("discord");
  auto none = Resolve("discord", p);
  ASSERT_FALSE(none.has_value());
  EXPECT_NE(none.error().message().find("DISCORD_HOME_CHANNEL"), std::string::npos);
  p.home_channel = "111";
  p.channels = {{"bot-home", "222"}};
  EXPECT_EQ(Resolve("discord", p)->chat, "111");
  EXPECT_EQ(Resolve("discord:#bot-home", p)->chat, "222");
  EXPECT_EQ(Resolve("discord:bot-home", p)->chat, "222");
}

TEST(MediaRefs, TakesMarkersOutOfTheText) {
  const MediaRefs m = ExtractMedia("See MEDIA:out/chart.png and MEDIA:a.pdf [[as_document]]");
  EXPECT_EQ(m.text, "See  and");
  EXPECT_EQ(m.paths, (std::vector<std::string>{"out/chart.png", "a.pdf"}));
  EXPECT_TRUE(m.as_document);
  EXPECT_TRUE(ExtractMedia("xMEDIA:nope").paths.empty());
}

}  // namespace
}  // namespace talaria::messaging
