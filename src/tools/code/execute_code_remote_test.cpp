// execute_code on a session whose terminal is an SSH machine (a real sshd on 127.0.0.1, so the
// "remote" side is this machine and a test can look at it): the script runs there, over the exec
// channel, and its tool calls come back through the same framing to this dispatcher.
#include <signal.h>
#include <sys/stat.h>

#include <string>

#include "support/sshd_server.h"
#include "support/wait_until.h"
#include "talaria/env/environment.h"
#include "talaria/tools/session_services.h"
#include "tools/code/execute_code_test_util.h"

namespace talaria::tools::testing {
namespace {

using Clock = std::chrono::steady_clock;

class ExecuteCodeRemoteTest : public ExecuteCodeTest {
 protected:
  void SetUp() override {
    ExecuteCodeTest::SetUp();
    if (const std::string reason = test_support::SshdUnavailableReason(); !reason.empty()) {
      GTEST_SKIP() << "no sshd to test against: " << reason;
    }
    auto sshd = test_support::SshdServer::Start();
    ASSERT_TRUE(sshd) << sshd.error().ToString();
    sshd_ = std::move(*sshd);
    auto ssh = env::OpenSsh(sshd_->ClientOptions());
    ASSERT_TRUE(ssh) << ssh.error().ToString();
    EnsureServices(ctx_).environment = *ssh;
  }
  void TearDown() override {
    EnsureServices(ctx_)
        .environment.reset();  // before sshd: the session's end reaches the remote side
    sshd_.reset();
    ExecuteCodeTest::TearDown();
  }

  std::unique_ptr<test_support::SshdServer> sshd_;
};

bool ProcessAlive(pid_t pid) {
  struct stat st {};
  return ::stat(("/proc/" + std::to_string(pid)).c_str(), &st) == 0;
}

TEST_F(ExecuteCodeRemoteTest, RunsOnTheRemoteMachineAndCallsToolsBackOverTheChannel) {
  Write("notes.txt", "read on the host\n");
  Json r = Run(R"py(
import os
from hermes_tools import read_file, terminal
print("cwd", os.path.basename(os.getcwd()).startswith("talaria-exec-"))
print("file", read_file("notes.txt")["content"].strip().endswith("read on the host"))
print("shell", terminal("pwd")["output"].strip())
)py");
  ASSERT_EQ(r["status"], "success") << last_.text;
  EXPECT_EQ(r["isolation"], "remote:ssh");
  // The terminal call ran in the SSH session (its shell starts in the sshd fixture's work dir).
  EXPECT_EQ(r["output"], "cwd True\nfile True\nshell " + sshd_->work_dir() + "\n") << last_.text;
  EXPECT_EQ(r["tool_calls_made"], 2);
}

TEST_F(ExecuteCodeRemoteTest, CallsFromThreadsOverlapOverTheChannel) {
  slow_searches_peak = 0;
  Json r = Run(R"py(
import threading
from hermes_tools import web_search
got = {}
def worker(i):
    got[i] = web_search("slow:4")["data"]["web"][0]["title"]
threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
for t in threads: t.start()
for t in threads: t.join()
print(sorted(got.values()))
)py");
  ASSERT_EQ(r["status"], "success") << last_.text;
  EXPECT_EQ(r["output"], "['slow:4', 'slow:4', 'slow:4', 'slow:4']\n");
  EXPECT_EQ(slow_searches_peak.load(), 4) << "the four calls were not served side by side";
}

TEST_F(ExecuteCodeRemoteTest, FailuresKeepStderrTheExitCodeAndTheLimits) {
  Json r =
      Run("import sys, resource\nprint('out')\n"
          "print('soft as', resource.getrlimit(resource.RLIMIT_AS)[0] == 1 << 30, "
          "file=sys.stderr)\nsys.exit(3)");
  EXPECT_EQ(r["status"], "error") << last_.text;
  EXPECT_EQ(r["exit_code"], 3);
  EXPECT_EQ(r["output"], "out\n");
  EXPECT_EQ(r["error"], "soft as True\n");

  r = Run("print('x' * 200000)");
  ASSERT_EQ(r["status"], "success") << last_.text;
  EXPECT_EQ(r["stdout_truncated"], true);
  EXPECT_EQ(r["stdout_bytes_total"], 200001);
  EXPECT_TRUE(r.contains("stdout_spill_path")) << last_.text;
}

TEST_F(ExecuteCodeRemoteTest, TimeoutKillsTheRemoteInterpreterAndWhatItStarted) {
  CodeExecutionOptions options;
  options.timeout = std::chrono::seconds(2);
  Enable(options);
  Json r =
      Run("import os, subprocess, time\n"
          "child = subprocess.Popen(['sleep', '600'])\n"
          "print(os.getpid(), child.pid, flush=True)\ntime.sleep(60)");
  EXPECT_EQ(r["status"], "timeout") << last_.text;
  const std::string output = r["output"].get<std::string>();
  const pid_t interpreter = std::stoi(output);
  const pid_t sleeper = std::stoi(output.substr(output.find(' ') + 1));
  EXPECT_TRUE(
      test_support::WaitUntil([&] { return !ProcessAlive(interpreter) && !ProcessAlive(sleeper); },
                              std::chrono::seconds(10), std::chrono::milliseconds(20)))
      << "the remote interpreter or its child outlived the timeout";
}

TEST_F(ExecuteCodeRemoteTest, AMissingRemoteInterpreterIsAClearError) {
  CodeExecutionOptions options;
  options.remote_python = "/nonexistent/python3";
  Enable(options);
  Json r = Run("print(1)");
  EXPECT_EQ(r["status"], "error") << last_.text;
  EXPECT_NE(r["error"].get<std::string>().find("without reporting an exit"), std::string::npos)
      << last_.text;
  EXPECT_NE(r["error"].get<std::string>().find("/nonexistent/python3"), std::string::npos)
      << last_.text;
}

}  // namespace
}  // namespace talaria::tools::testing
