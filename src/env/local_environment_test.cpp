// The local environment with real bash children: shell state carried between commands, the
// scrubbed environment, timeouts, cancellation and bounded output.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "env/child_env.h"
#include "talaria/env/environment.h"

namespace talaria::env {
namespace {

using namespace std::chrono_literals;

class LocalEnv : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (std::filesystem::temp_directory_path() / "talaria-env-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = std::filesystem::canonical(tmpl).string();
    Open({});
  }
  void TearDown() override {
    env_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  void Open(std::vector<std::string> passthrough) {
    LocalOptions options;
    options.initial_cwd = dir_;
    options.env_passthrough = std::move(passthrough);
    auto env = OpenLocal(options);
    ASSERT_TRUE(env) << env.error().ToString();
    env_ = *env;
  }
  CommandOutcome Run(std::string_view command, CommandOptions options = {}) {
    auto r = env_->Run(command, options);
    EXPECT_TRUE(r) << r.error().ToString();
    return r ? *r : CommandOutcome{};
  }

  std::string dir_;
  std::shared_ptr<Environment> env_;
};

TEST_F(LocalEnv, RunsInTheInitialDirectoryAndMergesStderr) {
  CommandOutcome r = Run("pwd; echo oops >&2; exit 3");
  EXPECT_EQ(r.output, dir_ + "\noops\n");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(env_->kind(), "local");
}

TEST_F(LocalEnv, CwdAndExportsCarryOverToTheNextCommand) {
  std::filesystem::create_directories(dir_ + "/sub/deeper");
  Run("cd sub/deeper && export GREETING='hello world' && LOCAL_ONLY=1");
  EXPECT_EQ(env_->cwd(), dir_ + "/sub/deeper");
  EXPECT_EQ(Run("pwd; echo \"$GREETING\"; echo \"${LOCAL_ONLY:-unset}\"").output,
            dir_ + "/sub/deeper\nhello world\nunset\n");
  // A failing command (and `exit`) still saves what it changed before.
  Run("cd ..; export LEVEL=2; exit 7");
  EXPECT_EQ(Run("pwd; echo $LEVEL").output, dir_ + "/sub\n2\n");
}

TEST_F(LocalEnv, WorkdirOverridesTheSessionDirectoryForOneCommand) {
  std::filesystem::create_directories(dir_ + "/other");
  CommandOptions options;
  options.workdir = dir_ + "/other";
  EXPECT_EQ(Run("pwd", options).output, dir_ + "/other\n");
}

TEST_F(LocalEnv, ADeletedWorkingDirectoryFallsBackToItsNearestAncestor) {
  std::filesystem::create_directories(dir_ + "/gone/deep");
  Run("cd gone/deep");
  std::filesystem::remove_all(dir_ + "/gone");
  EXPECT_EQ(Run("pwd").output, dir_ + "\n");
}

TEST_F(LocalEnv, SecretLookingVariablesAreNotInherited) {
  ::setenv("TALARIA_TEST_API_KEY", "sk-test-123", 1);
  ::setenv("TALARIA_TEST_PLAIN", "visible", 1);
  Open({});
  EXPECT_EQ(Run("echo ${TALARIA_TEST_API_KEY:-scrubbed} $TALARIA_TEST_PLAIN $GIT_PAGER").output, "scrubbed visible cat\n");
  Open({"TALARIA_TEST_API_KEY"});
  EXPECT_EQ(Run("echo $TALARIA_TEST_API_KEY").output, "sk-test-123\n");
  ::unsetenv("TALARIA_TEST_API_KEY");
  ::unsetenv("TALARIA_TEST_PLAIN");
}

TEST_F(LocalEnv, TimeoutKillsTheGroupAndKeepsPartialOutput) {
  CommandOptions options;
  options.timeout = 300ms;
  const auto t0 = std::chrono::steady_clock::now();
  CommandOutcome r = Run("echo before; sleep 30 & sleep 30; echo never", options);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 10s);
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.exit_code, 124);
  EXPECT_EQ(r.output.rfind("before\n", 0), 0u) << r.output;  // bash may add "Terminated"
  EXPECT_EQ(r.output.find("never"), std::string::npos);
}

TEST_F(LocalEnv, CancellationEndsTheCommandWith130) {
  std::stop_source stop;
  CommandOptions options;
  options.cancel = stop.get_token();
  std::thread canceller([&] {
    std::this_thread::sleep_for(200ms);
    stop.request_stop();
  });
  CommandOutcome r = Run("sleep 30", options);
  canceller.join();
  EXPECT_TRUE(r.cancelled);
  EXPECT_EQ(r.exit_code, 130);
}

TEST_F(LocalEnv, HugeOutputIsBoundedHeadAndTail) {
  CommandOptions options;
  options.max_output_bytes = 1000;
  CommandOutcome r = Run("echo START; head -c 50000000 /dev/zero | tr '\\0' x; echo; echo END", options);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.output_total_bytes, 50'000'000u + 6 + 1 + 4);
  EXPECT_LT(r.output.size(), 1200u);
  EXPECT_EQ(r.output.rfind("START\n", 0), 0u);
  EXPECT_NE(r.output.find("[OUTPUT TRUNCATED - "), std::string::npos);
  EXPECT_EQ(r.output.substr(r.output.size() - 4), "END\n");
}

TEST_F(LocalEnv, StartRunsInTheBackgroundFromTheSessionState) {
  Run("export FROM_SESSION=yes");
  auto child = env_->Start("echo $FROM_SESSION; export LEAK=1; cd /", {}, {});
  ASSERT_TRUE(child) << child.error().ToString();
  std::string out;
  char buf[256];
  for (int i = 0; i < 500; ++i) {
    const ssize_t n = ::read(child->output.get(), buf, sizeof buf);
    if (n > 0) out.append(buf, static_cast<size_t>(n));
    if (n == 0) break;
    std::this_thread::sleep_for(10ms);
  }
  siginfo_t info{};
  ::waitid(P_PID, static_cast<id_t>(child->pid), &info, WEXITED);
  EXPECT_EQ(out, "yes\n");
  // A background command's changes stay its own.
  EXPECT_EQ(Run("echo ${LEAK:-none}; pwd").output, "none\n" + dir_ + "\n");
}

TEST(ChildEnv, SecretNamesAreRecognisedCaseInsensitively) {
  for (const char* name : {"OPENAI_API_KEY", "github_token", "AWS_SECRET_ACCESS_KEY", "DB_PASSWORD", "HTTP_AUTH",
                           "SSH_PRIVATE", "session_cookie", "MY_CREDENTIALS"}) {
    EXPECT_TRUE(LooksSecret(name)) << name;
  }
  for (const char* name : {"PATH", "HOME", "LANG", "TERM", "USER", "SHELL"}) EXPECT_FALSE(LooksSecret(name)) << name;
  const char* entries[] = {"PATH=/bin", "API_TOKEN=x", "PAGER=less", "broken", nullptr};
  EXPECT_EQ(ChildEnvironment(entries, {}),
            (std::vector<std::string>{"PATH=/bin", "PAGER=cat", "GIT_PAGER=cat", "GIT_TERMINAL_PROMPT=0"}));
}

}  // namespace
}  // namespace talaria::env
