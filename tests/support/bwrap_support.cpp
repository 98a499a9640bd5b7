#include "support/bwrap_support.h"

#include <sys/stat.h>

#include <fstream>

#include "talaria/env/bwrap.h"

namespace talaria::test_support {

const std::string& BwrapUnusableReason() {
  static const std::string reason = [] {
    const Status probed = env::ProbeBwrap("bwrap");
    return probed.ok() ? std::string() : probed.message();
  }();
  return reason;
}

std::string WriteRefusingBwrap(const std::string& dir) {
  const std::string path = dir + "/bwrap";
  std::ofstream(path) << "#!/bin/sh\n"
                         "echo 'bwrap: No permissions to creating new namespace, likely because "
                         "the kernel does not allow non-privileged user namespaces.' >&2\n"
                         "exit 1\n";
  ::chmod(path.c_str(), 0755);
  return path;
}

}  // namespace talaria::test_support
