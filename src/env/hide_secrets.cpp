#include "talaria/env/hide_secrets.h"

#include <sys/prctl.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "env/child_env.h"

extern char** environ;

namespace talaria::env {

int HideSecretsFromChildren() {
  // The entries as the kernel laid them out (the block /proc/<pid>/environ reads), collected
  // before setenv replaces their pointers in `environ`.
  struct Original {
    std::string name;
    std::string value;
    char* bytes;
  };
  std::vector<Original> secrets;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const char* eq = std::strchr(*e, '=');
    if (eq == nullptr) continue;
    std::string name(*e, static_cast<size_t>(eq - *e));
    if (!LooksSecret(name)) continue;
    secrets.push_back({std::move(name), std::string(eq + 1), *e});
  }
  int moved = 0;
  for (const Original& s : secrets) {
    // setenv allocates a fresh "NAME=value" and points environ at it; only then is the
    // original wiped (the value, and the '=' so no reader mistakes the rest for a variable).
    if (::setenv(s.name.c_str(), s.value.c_str(), 1) != 0) continue;
    if (::getenv(s.name.c_str()) == s.bytes + s.name.size() + 1) continue;  // not moved
    std::memset(s.bytes + s.name.size(), 0, s.value.size() + 1);
    ++moved;
  }
  ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  return moved;
}

}  // namespace talaria::env
