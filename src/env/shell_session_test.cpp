// The session's shell state: which saved exports the next command must source. The state's
// behaviour across commands (cwd and exports carried over, exit codes, kills) is tested for
// every backend in src/sandboxes/environment_conformance_test.cpp.
#include "env/shell_session.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "talaria/base/file_io.h"
#include "talaria/base/subprocess.h"

namespace talaria::env {
namespace {

struct Case {
  const char* what;
  std::string saved;
  std::optional<std::string> expected;
};

TEST(ExportsNotInherited, KeepsOnlyWhatTheBaseEnvironmentDoesNotGive) {
  const std::vector<std::string> base = {"PATH=/usr/bin:/bin",
                                         "LANG=C.UTF-8",
                                         "ODD=q\"$`\\",
                                         "EMPTY=",
                                         "TWICE=a",
                                         "TWICE=b",
                                         "NOEQUALS"};
  const std::vector<Case> cases = {
      {"nothing saved", "", ""},
      {"inherited values", "declare -x LANG=\"C.UTF-8\"\ndeclare -x PATH=\"/usr/bin:/bin\"\n", ""},
      {"escaped quote, dollar, backquote, backslash", "declare -x ODD=\"q\\\"\\$\\`\\\\\"\n", ""},
      {"empty value", "declare -x EMPTY=\"\"\n", ""},
      {"changed value", "declare -x LANG=\"C\"\ndeclare -x PATH=\"/usr/bin:/bin\"\n",
       "declare -x LANG=\"C\"\n"},
      {"new variable", "declare -x NEW=\"1\"\n", "declare -x NEW=\"1\"\n"},
      {"readonly", "declare -rx LANG=\"C.UTF-8\"\n", "declare -rx LANG=\"C.UTF-8\"\n"},
      {"exported without a value", "declare -x LANG\n", "declare -x LANG\n"},
      {"ANSI-C quoting", "declare -x LANG=$'C.UTF-8\\'\\n'\n",
       "declare -x LANG=$'C.UTF-8\\'\\n'\n"},
      {"an expansion is not its text", "declare -x PATH=\"$PATH\"\n",
       "declare -x PATH=\"$PATH\"\n"},
      {"an unknown escape", "declare -x LANG=\"C\\.UTF-8\"\n", "declare -x LANG=\"C\\.UTF-8\"\n"},
      {"a name given twice", "declare -x TWICE=\"a\"\n", "declare -x TWICE=\"a\"\n"},
      {"a raw newline in the value", "declare -x NEW=\"a\nb\"\ndeclare -x LANG=\"C.UTF-8\"\n",
       "declare -x NEW=\"a\nb\"\n"},
      {"cut short in a value", "declare -x LANG=\"C.UTF-8\"\ndeclare -x NEW=\"ab", std::nullopt},
      {"cut short after a value", "declare -x LANG=\"C.UTF-8\"", std::nullopt},
      {"cut short in the keyword", "declare -x LANG=\"C.UTF-8\"\ndecl", std::nullopt},
      {"an array", "declare -ax A=([0]=\"x\")\n", std::nullopt},
      {"not a declare", "echo hi\n", std::nullopt},
      {"a bad name", "declare -x 1X=\"1\"\n", std::nullopt},
  };
  for (const Case& c : cases) EXPECT_EQ(ExportsNotInherited(c.saved, base), c.expected) << c.what;
}

class ShellSessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl =
        (std::filesystem::temp_directory_path() / "talaria-shell-test-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = std::filesystem::canonical(tmpl).string();
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  // Runs `command` in `shell` with `env`, adopting what it saved.
  std::string Run(ShellSession& shell, const std::vector<std::string>& env,
                  std::string_view command) {
    SpawnOptions spawn;
    spawn.argv = shell.Argv(command, /*persist=*/true);
    spawn.env = env;
    spawn.cwd = shell.cwd();
    auto r = RunProcess(spawn);
    EXPECT_TRUE(r) << r.error().ToString();
    shell.AdoptSavedState();
    return r ? r->stdout_text : std::string();
  }
  // What the next command sources (the wrapper's fourth argument).
  static std::string SourceOf(const ShellSession& shell) { return shell.Argv("true", true).at(9); }

  std::string dir_;
};

// bash's own export -p of the values it inherited reads back as inherited, so an unchanged
// session sources nothing; a value bash prints in $'...' (control bytes) is sourced, and
// survives that.
TEST_F(ShellSessionTest, BashsOwnExportsOfTheBaseEnvironmentAreRecognised) {
  const std::vector<std::string> env = {
      "PATH=/usr/bin:/bin", "LANG=C.UTF-8", "QUOTES=it's \"$HOME\" `x` \\n",
      "SPACES= a  b ",      "EMPTY=",       "UNICODE=ünï ✓ 日本"};
  auto shell = ShellSession::Create(dir_ + "/state", dir_, env);
  ASSERT_TRUE(shell) << shell.error().ToString();
  Run(**shell, env, "true");
  auto saved = ReadWholeFile(dir_ + "/state/env");
  ASSERT_TRUE(saved);
  EXPECT_EQ(ExportsNotInherited(*saved, env), "") << *saved;
  EXPECT_EQ(SourceOf(**shell), "");

  std::vector<std::string> with_control = env;
  with_control.push_back("CTRL=a\tb\nc\x01");
  Run(**shell, with_control, "true");
  auto delta = ReadWholeFile(dir_ + "/state/env.delta");
  ASSERT_TRUE(delta);
  EXPECT_EQ(*delta, "declare -x CTRL=$'a\\tb\\nc\\001'\n");
  EXPECT_EQ(Run(**shell, env, "printf '%s' \"$CTRL\""), "a\tb\nc\x01");
}

TEST_F(ShellSessionTest, OnlyChangedExportsAreSourcedAndTheyCarryOver) {
  const std::vector<std::string> env = {"PATH=/usr/bin:/bin", "KEEP=same", "CHANGE=old"};
  auto shell = ShellSession::Create(dir_ + "/state", dir_, env);
  ASSERT_TRUE(shell) << shell.error().ToString();
  Run(**shell, env, "export CHANGE=\"new \\$ value\" ADDED=1; readonly RO=2; export RO");
  EXPECT_EQ(SourceOf(**shell), dir_ + "/state/env.delta");
  auto delta = ReadWholeFile(dir_ + "/state/env.delta");
  ASSERT_TRUE(delta);
  EXPECT_EQ(*delta,
            "declare -x ADDED=\"1\"\ndeclare -x CHANGE=\"new \\$ value\"\ndeclare -rx RO=\"2\"\n");
  EXPECT_EQ(Run(**shell, env, "echo \"$KEEP|$CHANGE|$ADDED\"; declare -p RO"),
            "same|new $ value|1\ndeclare -rx RO=\"2\"\n");
  // Back to the inherited value: nothing left to source.
  Run(**shell, env, "export -n ADDED RO; export CHANGE=old");
  EXPECT_EQ(SourceOf(**shell), "");
  EXPECT_EQ(Run(**shell, env, "echo \"$CHANGE|${ADDED:-unset}\""), "old|unset\n");
}

TEST_F(ShellSessionTest, StateItCannotReadIsSourcedWhole) {
  const std::vector<std::string> env = {"PATH=/usr/bin:/bin"};
  auto shell = ShellSession::Create(dir_ + "/state", dir_, env);
  ASSERT_TRUE(shell) << shell.error().ToString();
  // As a command killed while saving leaves it.
  std::ofstream(dir_ + "/state/env") << "declare -x A=\"1\"\ndeclare -x B=\"2";
  (*shell)->AdoptSavedState();
  EXPECT_EQ(SourceOf(**shell), dir_ + "/state/env");
  EXPECT_EQ(Run(**shell, env, "echo \"${A:-unset}\""), "1\n");
}

TEST_F(ShellSessionTest, UnknownBaseEnvironmentSourcesEverythingSaved) {
  auto shell = ShellSession::Create(dir_ + "/state", dir_);
  ASSERT_TRUE(shell) << shell.error().ToString();
  // A state directory handed in may hold an earlier session's state.
  EXPECT_EQ(SourceOf(**shell), dir_ + "/state/env");
  Run(**shell, {"PATH=/usr/bin:/bin"}, "true");
  EXPECT_EQ(SourceOf(**shell), dir_ + "/state/env");
}

TEST_F(ShellSessionTest, AFreshStateDirectorySourcesNothing) {
  auto shell = ShellSession::Create("", dir_, {"PATH=/usr/bin:/bin"});
  ASSERT_TRUE(shell) << shell.error().ToString();
  EXPECT_EQ(SourceOf(**shell), "");
}

// Only an environment that cannot signal the command itself (docker exec) needs its pid.
TEST_F(ShellSessionTest, OnlyTheContainerFormWritesThePidFile) {
  const std::vector<std::string> env = {"PATH=/usr/bin:/bin"};
  auto shell = ShellSession::Create(dir_ + "/state", dir_, env);
  ASSERT_TRUE(shell) << shell.error().ToString();
  EXPECT_EQ(Run(**shell, env, "echo out; echo err >&2; exit 4"), "out\n");
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/state/pid"));

  SpawnOptions spawn;
  spawn.argv =
      ShellSession::ArgvFor("/bin/bash", dir_ + "/state", "export X=1; exit 5", /*persist=*/true);
  spawn.env = env;
  auto r = RunProcess(spawn);
  ASSERT_TRUE(r) << r.error().ToString();
  EXPECT_EQ(r->exit_code, 5);
  auto pid = ReadWholeFile(dir_ + "/state/pid");
  ASSERT_TRUE(pid);
  EXPECT_EQ(*pid, std::to_string(r->pid) + "\n");
  auto saved = ReadWholeFile(dir_ + "/state/env");
  ASSERT_TRUE(saved);
  EXPECT_NE(saved->find("declare -x X=\"1\"\n"), std::string::npos) << *saved;
}

}  // namespace
}  // namespace talaria::env
