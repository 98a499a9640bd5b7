// How a child process ended, from the siginfo_t waitid(2) filled in: as a shell's exit code and
// as words for messages.
#pragma once

#include <signal.h>

#include <string>

namespace talaria {

// The child's exit status, or 128 + the signal that ended it (what a shell shows as $?).
int ShellExitCode(const siginfo_t& info);

// "exited with status 3" or "was killed by signal 11 (SIGSEGV)": to follow the process's name.
std::string DescribeChildExit(const siginfo_t& info);

}  // namespace talaria
