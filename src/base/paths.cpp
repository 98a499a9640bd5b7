#include "talaria/base/paths.h"

#include <pwd.h>
#include <unistd.h>

#include <cstdlib>

namespace talaria {

std::string TalariaHome() {
  if (const char* h = std::getenv("TALARIA_HOME"); h != nullptr && *h != '\0') return h;
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    return std::string(home) + "/.talaria";
  }
  return ".talaria";
}

std::string UserHome() {
  if (const passwd* pw = ::getpwuid(::getuid()); pw != nullptr && pw->pw_dir != nullptr) return pw->pw_dir;
  const char* home = std::getenv("HOME");
  return home != nullptr ? home : "";
}

}  // namespace talaria
