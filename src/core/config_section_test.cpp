#include "talaria/core/config_section.h"

#include <gtest/gtest.h>

namespace talaria {
namespace {

Config Parse(std::string_view yaml) {
  auto config = ParseConfig(yaml);
  EXPECT_TRUE(config) << config.error().message();
  return config ? *config : Config{};
}

TEST(ConfigSection, AnAbsentSectionKeepsEveryDefault) {
  const Config config = Parse("other: 1\n");
  auto s = ConfigSection::Of(config, "shell");
  ASSERT_TRUE(s);
  EXPECT_FALSE(s->present());
  std::string text = "default";
  bool flag = true;
  int64_t n = 7;
  EXPECT_TRUE(s->ReadString("backend", text).ok());
  EXPECT_TRUE(s->ReadBool("network", flag).ok());
  EXPECT_TRUE(s->ReadInt("port", 1, 9, n).ok());
  auto sub = s->Sub("ssh");
  ASSERT_TRUE(sub);
  EXPECT_FALSE(sub->present());
  EXPECT_EQ(text, "default");
  EXPECT_TRUE(flag);
  EXPECT_EQ(n, 7);
}

TEST(ConfigSection, ErrorsNameTheWholeKey) {
  const Config config =
      Parse("t: {ssh: {port: 70000, host: [1]}, list: [a, 2], flag: maybe}\nu: [1]\n");
  EXPECT_NE(ConfigSection::Of(config, "u").error().message().find("config: u must be a mapping"),
            std::string::npos);
  auto t = ConfigSection::Of(config, "t");
  ASSERT_TRUE(t);
  auto ssh = t->Sub("ssh");
  ASSERT_TRUE(ssh);
  int64_t port = 22;
  EXPECT_EQ(ssh->ReadInt("port", 1, 65535, port).message(),
            "config: t.ssh.port must be an integer from 1 to 65535");
  EXPECT_EQ(port, 22);
  std::string host;
  EXPECT_NE(ssh->ReadString("host", host).message().find("t.ssh.host must be a string"),
            std::string::npos);
  std::vector<std::string> list{"kept"};
  EXPECT_FALSE(t->ReadStrings("list", list).ok());
  EXPECT_EQ(list, std::vector<std::string>{"kept"});  // nothing half-read
  bool flag = false;
  EXPECT_NE(t->ReadBool("flag", flag).message().find("t.flag must be true or false"),
            std::string::npos);
}

}  // namespace
}  // namespace talaria
