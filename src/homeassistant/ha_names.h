// The names a Home Assistant call may carry, judged before any of them reaches a URL: entity
// ids (`light.living_room`), domains and services (`light`, `turn_on`), and the domains talaria
// never calls because they run commands or make requests on the HA host.
// Thread-safety: free functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace talaria::homeassistant {

// ^[a-z_][a-z0-9_]*\.[a-z0-9_]+$ : one dot, no slash, so it cannot walk out of /api/states/.
bool IsEntityId(std::string_view s);
// ^[a-z][a-z0-9_]*$ : a domain or a service name; no dots or slashes, so
// `shell_command/../light` cannot hide a blocked domain or reach another path.
bool IsServiceName(std::string_view s);
// shell_command, command_line, python_script, pyscript, hassio, rest_command.
bool IsBlockedDomain(std::string_view domain);
// "command_line, hassio, ..." sorted, for the refusal message.
std::string BlockedDomainList();

}  // namespace talaria::homeassistant
