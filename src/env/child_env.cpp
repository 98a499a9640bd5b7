#include "env/child_env.h"

#include <algorithm>
#include <array>
#include <cctype>

namespace talaria::env {
namespace {

constexpr std::array<std::string_view, 9> kSecretWords = {
    "KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH", "PRIVATE", "COOKIE"};

// Set for every child; an inherited value is replaced.
constexpr std::array<std::string_view, 3> kQuietSettings = {"PAGER=cat", "GIT_PAGER=cat",
                                                            "GIT_TERMINAL_PROMPT=0"};

std::string_view NameOf(std::string_view entry) { return entry.substr(0, entry.find('=')); }

}  // namespace

bool LooksSecret(std::string_view name) {
  std::string upper(name);
  std::transform(upper.begin(), upper.end(), upper.begin(),
                 [](unsigned char c) { return std::toupper(c); });
  return std::any_of(kSecretWords.begin(), kSecretWords.end(),
                     [&](std::string_view word) { return upper.find(word) != std::string::npos; });
}

std::vector<std::string> ChildEnvironment(const char* const* environ_entries,
                                          const std::vector<std::string>& passthrough) {
  std::vector<std::string> out;
  for (const char* const* e = environ_entries; e != nullptr && *e != nullptr; ++e) {
    const std::string_view entry(*e);
    const std::string_view name = NameOf(entry);
    if (name.empty() || entry.find('=') == std::string_view::npos) continue;
    const bool passed =
        std::find(passthrough.begin(), passthrough.end(), name) != passthrough.end();
    if (LooksSecret(name) && !passed) continue;
    const bool overridden = std::any_of(kQuietSettings.begin(), kQuietSettings.end(),
                                        [&](std::string_view s) { return NameOf(s) == name; });
    if (!overridden) out.emplace_back(entry);
  }
  for (std::string_view s : kQuietSettings) out.emplace_back(s);
  return out;
}

}  // namespace talaria::env
