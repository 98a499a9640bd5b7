#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "talaria/core/config.h"
#include "talaria/memory/memory_store.h"

namespace talaria::memory {
namespace {

Config WithRaw(std::string_view yaml) {
  Config c;
  auto parsed = ParseYaml(yaml);
  if (parsed) c.raw = std::make_shared<const Json>(*parsed);
  return c;
}

TEST(MemorySettings, DefaultsWithoutASection) {
  auto s = MemorySettingsFromConfig(Config{});
  ASSERT_TRUE(s);
  EXPECT_EQ(s->memory_char_limit, 2200u);
  EXPECT_EQ(s->user_char_limit, 1375u);
}

TEST(MemorySettings, ReadsTheLimits) {
  auto s = MemorySettingsFromConfig(
      WithRaw("memory:\n  memory_char_limit: 5000\n  user_char_limit: 800\n"));
  ASSERT_TRUE(s) << s.error().message();
  EXPECT_EQ(s->memory_char_limit, 5000u);
  EXPECT_EQ(s->user_char_limit, 800u);
}

TEST(MemorySettings, RefusesBadValuesNamingTheKey) {
  for (const char* yaml :
       {"memory: 3\n", "memory:\n  memory_char_limit: -1\n", "memory:\n  user_char_limit: lots\n",
        "memory:\n  memory_char_limit: 10\n"}) {
    auto s = MemorySettingsFromConfig(WithRaw(yaml));
    EXPECT_FALSE(s) << yaml;
  }
  auto s = MemorySettingsFromConfig(WithRaw("memory:\n  user_char_limit: lots\n"));
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message().find("memory.user_char_limit"), std::string::npos);
}

}  // namespace
}  // namespace talaria::memory
