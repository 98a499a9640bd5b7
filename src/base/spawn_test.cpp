// StartProcess and TerminateProcessGroup with real children: pipes, a real pseudo-terminal,
// and a process group with grandchildren that must all die.
#include "talaria/base/spawn.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>

#include <cerrno>
#include <chrono>
#include <string>

namespace talaria {
namespace {

using namespace std::chrono_literals;

// Reads `fd` until EOF/EIO (a pty master reports EIO once the slave side is gone) or 10 s.
std::string ReadAll(int fd) {
  std::string out;
  const auto until = std::chrono::steady_clock::now() + 10s;
  char buf[4096];
  while (std::chrono::steady_clock::now() < until) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      out.append(buf, static_cast<size_t>(n));
    } else if (n == 0 || errno != EAGAIN) {
      break;
    }
  }
  return out;
}

int Reap(pid_t pid) {
  siginfo_t info{};
  if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED) != 0) return -1;
  return info.si_code == CLD_EXITED ? info.si_status : 128 + info.si_status;
}

TEST(StartProcess, MergesStdoutAndStderrIntoOneStream) {
  SpawnOptions options;
  options.argv = {"/bin/sh", "-c", "echo out; echo err >&2; echo out2"};
  auto child = StartProcess(options, {});
  ASSERT_TRUE(child) << child.error().ToString();
  EXPECT_FALSE(child->input.valid());
  EXPECT_EQ(ReadAll(child->output.get()), "out\nerr\nout2\n");
  EXPECT_EQ(Reap(child->pid), 0);
}

TEST(StartProcess, StdinPipeReachesTheChild) {
  SpawnOptions options;
  options.argv = {"/bin/cat"};
  auto child = StartProcess(options, {.stdin_pipe = true, .pty = false});
  ASSERT_TRUE(child) << child.error().ToString();
  ASSERT_EQ(::write(child->input.get(), "hello\n", 6), 6);
  child->input.reset();  // EOF: cat exits
  EXPECT_EQ(ReadAll(child->output.get()), "hello\n");
  EXPECT_EQ(Reap(child->pid), 0);
}

TEST(StartProcess, PtyGivesTheChildAControllingTerminal) {
  SpawnOptions options;
  options.argv = {"/bin/sh", "-c", "test -t 0 && test -t 1 && echo is-a-tty; stty size"};
  auto child = StartProcess(options, {.stdin_pipe = false, .pty = true});
  ASSERT_TRUE(child) << child.error().ToString();
  const std::string out = ReadAll(child->output.get());
  EXPECT_NE(out.find("is-a-tty"), std::string::npos) << out;
  EXPECT_NE(out.find("24 80"), std::string::npos) << out;
  EXPECT_EQ(Reap(child->pid), 0);
}

TEST(StartProcess, BadWorkingDirectoryIsNotFound) {
  SpawnOptions options;
  options.argv = {"/bin/true"};
  options.cwd = "/nonexistent/dir";
  auto child = StartProcess(options, {});
  ASSERT_FALSE(child);
  EXPECT_EQ(child.error().code(), StatusCode::kNotFound);
}

TEST(TerminateProcessGroup, KillsTheLeaderAndItsGrandchildren) {
  SpawnOptions options;
  // The grandchild ignores SIGTERM, so only the SIGKILL after the grace ends it.
  options.argv = {"/bin/sh", "-c", "sh -c 'trap \"\" TERM; sleep 100' & echo started; wait"};
  auto child = StartProcess(options, {});
  ASSERT_TRUE(child) << child.error().ToString();
  char buf[16];
  pollfd p{child->output.get(), POLLIN, 0};
  ASSERT_EQ(::poll(&p, 1, 5000), 1);
  ASSERT_GT(::read(child->output.get(), buf, sizeof buf), 0);
  EXPECT_TRUE(TerminateProcessGroup(child->pid, child->pidfd.get(), 200ms));
  Reap(child->pid);
  // Nobody of the group is left (the pid is reaped, so the group id is free only when empty).
  for (int i = 0; i < 200 && ::kill(-child->pid, 0) == 0; ++i) ::usleep(10'000);
  EXPECT_EQ(::kill(-child->pid, 0), -1);
  EXPECT_EQ(errno, ESRCH);
}

TEST(RunProcess, MergeStderrInterleavesIntoStdout) {
  SpawnOptions options;
  options.argv = {"/bin/sh", "-c", "echo a; echo b >&2; echo c"};
  options.merge_stderr = true;
  auto r = RunProcess(options);
  ASSERT_TRUE(r) << r.error().ToString();
  EXPECT_EQ(r->stdout_text, "a\nb\nc\n");
  EXPECT_EQ(r->stderr_text, "");
}

}  // namespace
}  // namespace talaria
