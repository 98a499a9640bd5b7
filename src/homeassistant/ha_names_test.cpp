// The name rules keep every argument inside its URL path segment.
#include "homeassistant/ha_names.h"

#include <gtest/gtest.h>

namespace talaria::homeassistant {
namespace {

TEST(HaNames, EntityIdsHaveOneDotAndNoPathCharacters) {
  for (const char* good : {"light.living_room", "sensor.temperature_1", "_x.y", "a.0"}) {
    EXPECT_TRUE(IsEntityId(good)) << good;
  }
  for (const char* bad : {"", "light", ".x", "light.", "Light.x", "1light.x", "light.x.y",
                          "light./x", "../api/config", "light.x/../../config", "light.x?y=1",
                          "light.X", "light.a-b", "light.a b"}) {
    EXPECT_FALSE(IsEntityId(bad)) << bad;
  }
}

TEST(HaNames, ServiceNamesAreOneSegment) {
  for (const char* good : {"light", "turn_on", "a", "set_temperature2"}) {
    EXPECT_TRUE(IsServiceName(good)) << good;
  }
  for (const char* bad :
       {"", "_light", "2x", "Light", "shell_command/../light", "a.b", "a b", "..", "turn-on"}) {
    EXPECT_FALSE(IsServiceName(bad)) << bad;
  }
}

TEST(HaNames, BlocksTheDomainsThatRunCommandsOrSendRequests) {
  for (const char* blocked :
       {"shell_command", "command_line", "python_script", "pyscript", "hassio", "rest_command"}) {
    EXPECT_TRUE(IsBlockedDomain(blocked)) << blocked;
  }
  EXPECT_FALSE(IsBlockedDomain("light"));
  EXPECT_EQ(BlockedDomainList(),
            "command_line, hassio, pyscript, python_script, rest_command, shell_command");
}

}  // namespace
}  // namespace talaria::homeassistant
