#include "talaria/base/paths.h"

#include <cstdlib>

namespace talaria {

std::string TalariaHome() {
  if (const char* h = std::getenv("TALARIA_HOME"); h != nullptr && *h != '\0') return h;
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    return std::string(home) + "/.talaria";
  }
  return ".talaria";
}

}  // namespace talaria
