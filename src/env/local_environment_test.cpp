// What only the local environment does: the scrubbed child environment. Shell state, timeouts,
// cancellation, bounded output and background starts, which every backend shares, are tested in
// src/sandboxes/environment_conformance_test.cpp.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>

#include "env/child_env.h"
#include "talaria/env/environment.h"

namespace talaria::env {
namespace {

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

TEST_F(LocalEnv, SecretLookingVariablesAreNotInherited) {
  ::setenv("TALARIA_TEST_API_KEY", "sk-test-123", 1);
  ::setenv("TALARIA_TEST_PLAIN", "visible", 1);
  Open({});
  EXPECT_EQ(Run("echo ${TALARIA_TEST_API_KEY:-scrubbed} $TALARIA_TEST_PLAIN $GIT_PAGER").output,
            "scrubbed visible cat\n");
  Open({"TALARIA_TEST_API_KEY"});
  EXPECT_EQ(Run("echo $TALARIA_TEST_API_KEY").output, "sk-test-123\n");
  ::unsetenv("TALARIA_TEST_API_KEY");
  ::unsetenv("TALARIA_TEST_PLAIN");
}

TEST(ChildEnv, SecretNamesAreRecognisedCaseInsensitively) {
  for (const char* name : {"OPENAI_API_KEY", "github_token", "AWS_SECRET_ACCESS_KEY", "DB_PASSWORD",
                           "HTTP_AUTH", "SSH_PRIVATE", "session_cookie", "MY_CREDENTIALS"}) {
    EXPECT_TRUE(LooksSecret(name)) << name;
  }
  for (const char* name : {"PATH", "HOME", "LANG", "TERM", "USER", "SHELL"})
    EXPECT_FALSE(LooksSecret(name)) << name;
  const char* entries[] = {"PATH=/bin", "API_TOKEN=x", "PAGER=less", "broken", nullptr};
  EXPECT_EQ(ChildEnvironment(entries, {}),
            (std::vector<std::string>{"PATH=/bin", "PAGER=cat", "GIT_PAGER=cat",
                                      "GIT_TERMINAL_PROMPT=0"}));
}

}  // namespace
}  // namespace talaria::env
