// ShellExitCode and DescribeChildExit on real children: one that exits with a status, one that a
// signal ends.
#include "talaria/base/child_exit.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

namespace talaria {
namespace {

// Forks a child that runs `body`, and returns waitid's record of its end.
template <typename Body>
siginfo_t EndOf(Body body) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    body();
    ::_exit(0);
  }
  siginfo_t info{};
  EXPECT_EQ(::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED), 0);
  return info;
}

TEST(ChildExit, AnExitStatusIsItself) {
  const siginfo_t info = EndOf([] { ::_exit(3); });
  EXPECT_EQ(ShellExitCode(info), 3);
  EXPECT_EQ(DescribeChildExit(info), "exited with status 3");
}

TEST(ChildExit, ASignalIs128PlusItsNumberAndNamed) {
  const siginfo_t info = EndOf([] { ::kill(::getpid(), SIGKILL); });
  EXPECT_EQ(ShellExitCode(info), 128 + SIGKILL);
  EXPECT_EQ(DescribeChildExit(info), "was killed by signal 9 (SIGKILL)");
}

}  // namespace
}  // namespace talaria
