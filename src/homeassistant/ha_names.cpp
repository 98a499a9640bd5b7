// Home Assistant name rules (ha_names.h). Hand-written scanners: the patterns are tiny, and a
// regex engine would only add a dependency.
#include "homeassistant/ha_names.h"

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "talaria/base/strings.h"

namespace talaria::homeassistant {
namespace {

// HA gives services no access control of its own: these run shell commands or scripts on the
// HA host, control add-ons and the host itself, or send requests from it (SSRF).
constexpr std::array<std::string_view, 6> kBlockedDomains = {
    "shell_command", "command_line", "python_script", "pyscript", "hassio", "rest_command"};

bool IsLowerDigitUnderscore(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

bool AllLowerDigitUnderscore(std::string_view s) {
  return std::all_of(s.begin(), s.end(), IsLowerDigitUnderscore);
}

}  // namespace

bool IsEntityId(std::string_view s) {
  const size_t dot = s.find('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 1 == s.size()) return false;
  const std::string_view domain = s.substr(0, dot);
  const std::string_view object = s.substr(dot + 1);
  if (!((domain[0] >= 'a' && domain[0] <= 'z') || domain[0] == '_')) return false;
  return AllLowerDigitUnderscore(domain) && AllLowerDigitUnderscore(object);
}

bool IsServiceName(std::string_view s) {
  if (s.empty() || s[0] < 'a' || s[0] > 'z') return false;
  return AllLowerDigitUnderscore(s);
}

bool IsBlockedDomain(std::string_view domain) {
  return std::find(kBlockedDomains.begin(), kBlockedDomains.end(), domain) != kBlockedDomains.end();
}

std::string BlockedDomainList() {
  std::vector<std::string> names(kBlockedDomains.begin(), kBlockedDomains.end());
  std::sort(names.begin(), names.end());
  return Join(names, ", ");
}

}  // namespace talaria::homeassistant
