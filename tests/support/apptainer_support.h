// Which Apptainer the tests run against: the real `apptainer` (or `singularity`) where one is
// installed, else the stand-in tests/support/apptainer_standin.sh (bubblewrap + nsenter; root).
// Thread-safety: free functions; thread-safe.
#pragma once

#include <string>

namespace talaria::test_support {

struct ApptainerForTests {
  std::string program;      // empty: none here
  bool standin = false;     // the stand-in, whose state files tests may read
  std::string skip_reason;  // why there is none
};

ApptainerForTests FindApptainerForTests();

// The stand-in's path (TALARIA_APPTAINER_STANDIN, set by CMake).
std::string ApptainerStandinPath();

}  // namespace talaria::test_support
