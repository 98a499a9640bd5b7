#include "support/apptainer_support.h"

#include <unistd.h>

#include <chrono>
#include <vector>

#include "talaria/base/subprocess.h"

namespace talaria::test_support {
namespace {

bool Answers(std::vector<std::string> argv) {
  SpawnOptions spawn;
  spawn.argv = std::move(argv);
  spawn.timeout = std::chrono::seconds(10);
  auto r = RunProcess(spawn);
  return r && r->exit_code == 0;
}

}  // namespace

std::string ApptainerStandinPath() { return TALARIA_APPTAINER_STANDIN; }

ApptainerForTests FindApptainerForTests() {
  ApptainerForTests found;
  for (const char* program : {"apptainer", "singularity"}) {
    if (Answers({program, "version"})) {
      found.program = program;
      return found;
    }
  }
  if (::geteuid() != 0) {
    found.skip_reason = "no apptainer installed, and its stand-in needs root (nsenter)";
    return found;
  }
  if (!Answers({"bwrap", "--ro-bind", "/", "/", "--unshare-pid", "true"})) {
    found.skip_reason = "no apptainer installed, and bwrap (its stand-in's base) does not work";
    return found;
  }
  if (!Answers({"nsenter", "--version"})) {
    found.skip_reason = "no apptainer installed, and nsenter (its stand-in's exec) is missing";
    return found;
  }
  found.program = ApptainerStandinPath();
  found.standin = true;
  return found;
}

}  // namespace talaria::test_support
