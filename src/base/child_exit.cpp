#include "talaria/base/child_exit.h"

#include <string.h>

namespace talaria {

int ShellExitCode(const siginfo_t& info) {
  return info.si_code == CLD_EXITED ? info.si_status : 128 + info.si_status;
}

std::string DescribeChildExit(const siginfo_t& info) {
  if (info.si_code == CLD_EXITED) return "exited with status " + std::to_string(info.si_status);
  std::string out = "was killed by signal " + std::to_string(info.si_status);
  if (const char* abbrev = ::sigabbrev_np(info.si_status); abbrev != nullptr) {
    out += " (SIG";
    out += abbrev;
    out += ')';
  }
  return out;
}

}  // namespace talaria
