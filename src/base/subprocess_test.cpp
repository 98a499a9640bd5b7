#include "talaria/base/subprocess.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "support/temp_dir.h"
#include "support/wait_until.h"
#include "talaria/base/unique_fd.h"

namespace talaria {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;
using test_support::WaitUntil;

SpawnOptions Shell(std::string script) {
  SpawnOptions o;
  o.argv = {"/bin/sh", "-c", std::move(script)};
  o.timeout = milliseconds(5000);
  return o;
}

ProcessResult RunOk(const SpawnOptions& o) {
  auto r = RunProcess(o);
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().ToString());
  return r ? std::move(*r) : ProcessResult{};
}

long ElapsedMs(Clock::time_point start) {
  return static_cast<long>(std::chrono::duration_cast<milliseconds>(Clock::now() - start).count());
}

// True while any non-zombie process is in group `pgid`. kill(-pgid, 0) alone is not enough:
// orphaned grandchildren stay zombies until init reaps them, which can take a while here.
bool GroupHasLiveMembers(pid_t pgid) {
  if (::kill(-pgid, 0) != 0 && errno == ESRCH) return false;
  DIR* dir = ::opendir("/proc");
  if (dir == nullptr) return true;
  bool live = false;
  while (dirent* e = ::readdir(dir)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    std::ifstream f(std::string("/proc/") + e->d_name + "/stat");
    std::string line;
    if (!std::getline(f, line)) continue;
    // pid (comm) state ppid pgrp ...; comm may hold spaces, so parse after the last ')'.
    std::istringstream rest(line.substr(line.rfind(')') + 2));
    char state = 0;
    long ppid = 0, pgrp = 0;
    rest >> state >> ppid >> pgrp;
    if (pgrp == pgid && state != 'Z' && state != 'X') live = true;
  }
  ::closedir(dir);
  return live;
}

// Whether every member of the group has gone within `limit` (a hang guard, not a speed claim:
// a killed member leaves when the kernel gets to it).
bool WaitGroupDead(pid_t pgid, milliseconds limit = milliseconds(10'000)) {
  return WaitUntil([&] { return !GroupHasLiveMembers(pgid); }, limit, milliseconds(10));
}

TEST(RunProcess, ReportsExitCodes) {
  EXPECT_EQ(RunOk(Shell("exit 0")).exit_code, 0);
  EXPECT_EQ(RunOk(Shell("exit 3")).exit_code, 3);
  auto signalled = RunOk(Shell("kill -TERM $$"));
  EXPECT_EQ(signalled.exit_code, 128 + SIGTERM);
  EXPECT_FALSE(signalled.timed_out);
  EXPECT_FALSE(signalled.cancelled);
}

TEST(RunProcess, CapturesStdoutAndStderrSeparately) {
  auto r = RunOk(Shell("printf out; printf err >&2"));
  EXPECT_EQ(r.stdout_text, "out");
  EXPECT_EQ(r.stderr_text, "err");
  EXPECT_EQ(r.stdout_total_bytes, 3u);
  EXPECT_EQ(r.stderr_total_bytes, 3u);
  EXPECT_GT(r.pid, 0);
}

TEST(RunProcess, LooksUpBareProgramNamesInPath) {
  SpawnOptions o;
  o.argv = {"echo", "hello"};
  auto r = RunOk(o);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.stdout_text, "hello\n");
}

TEST(RunProcess, DeliversStdin) {
  auto o = Shell("cat");
  o.stdin_data = "line one\nline two\n";
  EXPECT_EQ(RunOk(o).stdout_text, "line one\nline two\n");
}

TEST(RunProcess, EmptyStdinIsDevNull) {
  auto r = RunOk(Shell("cat; echo done"));
  EXPECT_EQ(r.stdout_text, "done\n");
}

TEST(RunProcess, LargeStdinRoundTrips) {
  auto o = Shell("wc -c");
  o.stdin_data.assign(8 << 20, 'a');
  auto r = RunOk(o);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(std::stoul(r.stdout_text), 8u << 20);
}

TEST(RunProcess, LargeStdinToChildThatNeverReadsDoesNotHang) {
  auto o = Shell("sleep 0.1; exit 4");
  o.stdin_data.assign(16 << 20, 'x');
  auto r = RunOk(o);  // a writer that waited for room the child never makes would hang here
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_FALSE(r.timed_out);

  // And one that exits at once, so writes hit EPIPE; SIGPIPE must not kill the test.
  auto quick = Shell("exit 0");
  quick.stdin_data.assign(1 << 20, 'y');
  EXPECT_EQ(RunOk(quick).exit_code, 0);
}

TEST(RunProcess, TimeoutKillsTheWholeGroup) {
  auto o = Shell("sleep 30 & sleep 30; echo never");
  o.timeout = milliseconds(300);
  auto r = RunOk(o);
  EXPECT_TRUE(r.timed_out);
  EXPECT_FALSE(r.cancelled);
  EXPECT_EQ(r.exit_code, kExitCodeTimedOut);
  EXPECT_EQ(r.stdout_text.find("never"), std::string::npos) << "the command was waited out";
  EXPECT_TRUE(WaitGroupDead(r.pid));
}

TEST(RunProcess, TimeoutEscalatesToSigkillAfterGrace) {
  const auto start = Clock::now();
  auto o = Shell("trap '' TERM; while :; do sleep 0.05; done");
  o.timeout = milliseconds(200);
  o.kill_grace = milliseconds(300);
  auto r = RunOk(o);
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.exit_code, kExitCodeTimedOut);
  EXPECT_GE(ElapsedMs(start), 450) << "SIGKILL came before the grace was over";
  EXPECT_TRUE(WaitGroupDead(r.pid));
}

// Cancelled once the command runs (it says so through a file); a cancel noticed only when the
// command ends would leave "finished" in the output.
TEST(RunProcess, CancelReturns130WithoutWaitingForTheCommand) {
  const test_support::TempDir dir;
  const std::string started = dir.path() + "/started";
  std::stop_source stop;
  auto o = Shell("touch '" + started + "'; sleep 30; echo finished");
  o.cancel = stop.get_token();
  std::jthread canceller([&stop, &started] {
    WaitUntil([&] { return std::filesystem::exists(started); }, std::chrono::seconds(10));
    stop.request_stop();
  });
  auto r = RunOk(o);
  EXPECT_TRUE(r.cancelled);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, kExitCodeCancelled);
  EXPECT_EQ(r.stdout_text.find("finished"), std::string::npos) << "the command was waited out";
  EXPECT_TRUE(WaitGroupDead(r.pid));
}

TEST(RunProcess, AlreadyCancelledSpawnsNothing) {
  std::stop_source stop;
  stop.request_stop();
  auto o = Shell("exit 0");
  o.cancel = stop.get_token();
  auto r = RunOk(o);
  EXPECT_TRUE(r.cancelled);
  EXPECT_EQ(r.exit_code, kExitCodeCancelled);
  EXPECT_EQ(r.pid, -1);
}

TEST(RunProcess, CapsHugeOutputKeepingHeadAndTail) {
  // 50 MB between two markers; capture is capped at 10,000 bytes per stream.
  auto o = Shell("printf HEAD; head -c 50000000 /dev/zero | tr '\\0' x; printf TAIL");
  o.max_output_bytes = 10000;
  rusage before{};
  ::getrusage(RUSAGE_SELF, &before);
  auto r = RunOk(o);
  rusage after{};
  ::getrusage(RUSAGE_SELF, &after);
  ASSERT_EQ(r.exit_code, 0);
  // Memory stays flat: the peak RSS must not grow by anything like the 50 MB printed.
  EXPECT_LT(after.ru_maxrss - before.ru_maxrss, 20 * 1024) << "KiB";
  EXPECT_EQ(r.stdout_total_bytes, 50000008u);
  EXPECT_EQ(r.stdout_text.rfind("HEADxxxx", 0), 0u);
  EXPECT_EQ(r.stdout_text.substr(r.stdout_text.size() - 8), "xxxxTAIL");
  const std::string marker =
      "\n... [OUTPUT TRUNCATED - 49990008 chars omitted out of 50000008 total] ...\n";
  const size_t at = r.stdout_text.find(marker);
  ASSERT_NE(at, std::string::npos);
  EXPECT_EQ(at, 4000u);  // head is 40% of the cap
  EXPECT_EQ(r.stdout_text.size(), 10000u + marker.size());
}

TEST(RunProcess, OutputWithinCapIsUntouched) {
  auto o = Shell("head -c 1000 /dev/zero | tr '\\0' y");
  o.max_output_bytes = 1000;
  auto r = RunOk(o);
  EXPECT_EQ(r.stdout_text, std::string(1000, 'y'));
}

TEST(TruncateHeadTail, CutsOnUtf8Boundaries) {
  std::string text;
  for (int i = 0; i < 100; ++i) text += "\xC3\xA9";    // "é" x 100 = 200 bytes
  const std::string cut = TruncateHeadTail(text, 51);  // head 20, tail 31 -> odd: must trim
  const size_t open = cut.find("\n... [OUTPUT TRUNCATED - ");
  ASSERT_NE(open, std::string::npos);
  EXPECT_EQ(open % 2, 0u);
  const size_t close = cut.find("] ...\n") + 6;
  EXPECT_EQ((cut.size() - close) % 2, 0u);
  EXPECT_NE(static_cast<unsigned char>(cut[close]) & 0xC0, 0x80);
  EXPECT_EQ(TruncateHeadTail("short", 10), "short");
}

// Waiting for the grandchild to let go of stdout would put "late" into the output.
TEST(RunProcess, GrandchildHoldingStdoutDoesNotHang) {
  auto r = RunOk(Shell("echo parent; { sleep 30; echo late; } & exit 0"));
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.stdout_text, "parent\n");
  EXPECT_TRUE(WaitGroupDead(r.pid));
}

TEST(RunProcess, MissingBinaryIsAnError) {
  SpawnOptions o;
  o.argv = {"/nonexistent/talaria-no-such-binary"};
  auto r = RunProcess(o);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), StatusCode::kNotFound);

  o.argv = {"talaria-no-such-binary-in-path"};
  r = RunProcess(o);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), StatusCode::kNotFound);

  o.argv = {};
  r = RunProcess(o);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), StatusCode::kInvalidArgument);
}

TEST(RunProcess, NonExecutableIsPermissionDenied) {
  SpawnOptions o;
  o.argv = {"/etc/passwd"};
  auto r = RunProcess(o);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), StatusCode::kPermissionDenied);
}

TEST(RunProcess, AppliesCwd) {
  const auto dir = std::filesystem::temp_directory_path();
  auto o = Shell("pwd -P");
  o.cwd = dir.string();
  auto r = RunOk(o);
  EXPECT_EQ(r.stdout_text, std::filesystem::canonical(dir).string() + "\n");

  o.cwd = "/nonexistent/talaria-dir";
  auto bad = RunProcess(o);
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().code(), StatusCode::kNotFound);
  EXPECT_NE(bad.error().message().find("working directory"), std::string::npos);
}

TEST(RunProcess, AppliesFullEnvironment) {
  auto o = Shell("printf '%s|%s' \"$TALARIA_TEST_VAR\" \"${HOME-unset}\"");
  o.env = std::vector<std::string>{"TALARIA_TEST_VAR=hello", "PATH=/usr/bin:/bin"};
  EXPECT_EQ(RunOk(o).stdout_text, "hello|unset");
}

TEST(RunProcess, InheritsEnvironmentByDefault) {
  ::setenv("TALARIA_SUBPROCESS_INHERIT", "yes", 1);
  auto r = RunOk(Shell("printf %s \"$TALARIA_SUBPROCESS_INHERIT\""));
  ::unsetenv("TALARIA_SUBPROCESS_INHERIT");
  EXPECT_EQ(r.stdout_text, "yes");
}

TEST(RunProcess, ChildStartsWithDefaultSignals) {
  // Block and ignore SIGINT here; the child must still die of it (an ignored signal would
  // otherwise survive exec, and sh cannot reset it).
  sigset_t set, old;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  ::pthread_sigmask(SIG_BLOCK, &set, &old);
  struct sigaction ign = {};
  struct sigaction prev = {};
  ign.sa_handler = SIG_IGN;
  ::sigaction(SIGINT, &ign, &prev);
  auto r = RunOk(Shell("kill -INT $$; sleep 1"));
  ::sigaction(SIGINT, &prev, nullptr);
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  EXPECT_EQ(r.exit_code, 128 + SIGINT);
}

TEST(RunProcess, ChildIsInItsOwnProcessGroup) {
  auto r = RunOk(Shell("ps -o pgid= -p $$ 2>/dev/null || cut -d' ' -f5 /proc/$$/stat"));
  EXPECT_EQ(std::stol(r.stdout_text), r.pid);
  EXPECT_NE(r.pid, ::getpgrp());
}

}  // namespace
}  // namespace talaria

namespace talaria {
namespace {

// execute_code's RPC socket: one chosen descriptor reaches the child as fd 3, nothing else does.
TEST(RunProcessInheritFd, PassesExactlyTheChosenDescriptorAsFd3) {
  int pipe_fds[2];
  ASSERT_EQ(::pipe2(pipe_fds, O_CLOEXEC), 0);
  UniqueFd read_end(pipe_fds[0]);
  UniqueFd write_end(pipe_fds[1]);
  int stray[2];  // close-on-exec off: must still not leak past fd 3
  ASSERT_EQ(::pipe(stray), 0);
  SpawnOptions o;
  o.argv = {"/bin/sh", "-c", "echo via-fd3 >&3; ls /proc/self/fd"};
  o.inherit_fd = write_end.get();
  pid_t spawned = -1;
  o.on_spawn = [&](pid_t pid) {
    spawned = pid;
    write_end.reset();  // the child has its copy
  };
  std::string seen;
  o.on_stdout = [&](std::string_view chunk) { seen += chunk; };
  auto r = RunProcess(o);
  ::close(stray[0]);
  ::close(stray[1]);
  ASSERT_TRUE(r) << r.error().ToString();
  EXPECT_EQ(spawned, r->pid);
  EXPECT_EQ(seen, r->stdout_text);
  char buf[64] = {};
  ASSERT_GT(::read(read_end.get(), buf, sizeof buf - 1), 0);
  EXPECT_STREQ(buf, "via-fd3\n");
  // ls sees 0 1 2 3 and the directory descriptor it opened itself, nothing more.
  std::istringstream fds(r->stdout_text);
  int count = 0;
  for (std::string fd; fds >> fd;) ++count;
  EXPECT_EQ(count, 5) << r->stdout_text;
}

TEST(RunProcessInheritFd, LowDescriptorsAreMovedUpFirst) {
  SpawnOptions o;
  o.argv = {"/bin/sh", "-c", "cat <&3"};
  std::string path = (std::filesystem::temp_directory_path() / "talaria-inherit-XXXXXX").string();
  UniqueFd file(::mkstemp(path.data()));
  ASSERT_TRUE(file);
  ASSERT_EQ(::write(file.get(), "data", 4), 4);
  ASSERT_EQ(::lseek(file.get(), 0, SEEK_SET), 0);
  // The lowest free number from 3 up: 3 itself in a test process, which dup2 onto itself would
  // leave close-on-exec.
  UniqueFd low(::fcntl(file.get(), F_DUPFD_CLOEXEC, 3));
  ASSERT_TRUE(low);
  o.inherit_fd = low.get();
  auto r = RunProcess(o);
  ::unlink(path.c_str());
  ASSERT_TRUE(r) << r.error().ToString();
  EXPECT_EQ(r->stdout_text, "data");
}

TEST(RunProcess, StderrMayHaveItsOwnCap) {
  SpawnOptions o;
  o.argv = {"/bin/sh", "-c",
            "head -c 1000 /dev/zero | tr '\\0' o; head -c 1000 /dev/zero | tr '\\0' e >&2"};
  o.max_output_bytes = 500;
  o.max_stderr_bytes = 100;
  auto r = RunProcess(o);
  ASSERT_TRUE(r) << r.error().ToString();
  EXPECT_EQ(r->stderr_total_bytes, 1000u);
  EXPECT_LT(r->stderr_text.size(), 200u);
  EXPECT_GT(r->stdout_text.size(), 500u);
  EXPECT_LT(r->stdout_text.size(), 600u);
}

}  // namespace
}  // namespace talaria
