// The bubblewrap sandbox with real bwrap: the workspace is writable, the rest of the host is
// not, /tmp is private, the network is gone unless allowed, other processes are invisible.
// Shell state and what every backend shares are tested in
// src/sandboxes/environment_conformance_test.cpp.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "support/bwrap_support.h"
#include "support/env_helpers.h"
#include "support/loopback_listener.h"
#include "support/temp_dir.h"
#include "talaria/env/environment.h"

namespace talaria::env {
namespace {

class Sandbox : public ::testing::Test {
 protected:
  void SetUp() override {
    TALARIA_SKIP_WITHOUT_BWRAP();
    // Not under /tmp: inside the sandbox that is a private tmpfs, which would hide an escape
    // instead of refusing it.
    base_ = test_support::MakeScratchOutsideTmp(TALARIA_BINARY_DIR, "talaria-sandbox");
    ASSERT_FALSE(base_.empty()) << "no writable directory outside /tmp and /var/tmp";
    ws_ = base_ + "/ws";
    std::filesystem::create_directories(ws_);
  }
  void TearDown() override {
    env_.reset();
    std::error_code ec;
    std::filesystem::remove_all(base_, ec);
  }
  void Open(bool network = false, SandboxOptions options = {}) {
    options.local.initial_cwd = ws_;
    options.writable = {ws_};
    options.network = network;
    auto env = OpenSandbox(options);
    ASSERT_TRUE(env) << env.error().ToString();
    env_ = *env;
  }
  CommandOutcome Run(std::string_view command) {
    auto r = env_->Run(command, {});
    EXPECT_TRUE(r) << r.error().ToString();
    return r ? *r : CommandOutcome{};
  }

  std::string base_;
  std::string ws_;
  std::shared_ptr<Environment> env_;
};

TEST_F(Sandbox, WorkspaceIsWritableAndTheRestOfTheHostIsNot) {
  Open();
  EXPECT_EQ(env_->kind(), "bwrap");
  CommandOutcome r = Run("echo inside > made.txt && cat made.txt");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output, "inside\n");
  std::ifstream made(ws_ + "/made.txt");
  std::string line;
  std::getline(made, line);
  EXPECT_EQ(line, "inside");

  // The directory beside the workspace exists on the host but is read-only inside.
  r = Run("echo escape > " + base_ + "/escape.txt");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("Read-only file system"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(base_ + "/escape.txt"));
  EXPECT_NE(Run("touch /etc/talaria-sandbox-test").exit_code, 0);
  EXPECT_FALSE(std::filesystem::exists("/etc/talaria-sandbox-test"));
}

TEST_F(Sandbox, TmpIsPrivateToTheSandbox) {
  Open();
  const std::string name = "/tmp/talaria-sandbox-private-" + std::to_string(::getpid());
  EXPECT_EQ(Run("echo x > " + name + " && cat " + name).output, "x\n");
  EXPECT_FALSE(std::filesystem::exists(name));
}

TEST_F(Sandbox, NetworkIsCutUnlessAllowed) {
  // A server on the host's loopback: unreachable from the sandbox's own network namespace.
  const test_support::LoopbackListener server = test_support::ListenOnLoopback();
  ASSERT_TRUE(server.fd);
  const std::string probe = "exec 3<>/dev/tcp/127.0.0.1/" + std::to_string(server.port) +
                            " && echo connected || echo refused";
  Open(false);
  EXPECT_EQ(Run(probe).output.find("connected"), std::string::npos);
  Open(true);
  EXPECT_NE(Run(probe).output.find("connected"), std::string::npos);
}

TEST_F(Sandbox, ProcessesOutsideAreInvisible) {
  Open();
  // Own PID namespace: bash sees itself near pid 1, and our pid does not exist in there.
  CommandOutcome r =
      Run("kill -0 " + std::to_string(::getpid()) + " 2>/dev/null && echo visible || echo hidden");
  EXPECT_EQ(r.output, "hidden\n");
}

// The user's credential stores and talaria's own state are not in the sandbox: a command can
// neither read a key nor write approvals.json, whatever it tries; the workspace still is.
TEST_F(Sandbox, CredentialStoresAndTalariaStateAreHidden) {
  const std::string home = base_ + "/home";
  const std::string talaria_home = home + "/.talaria";
  std::filesystem::create_directories(home + "/.ssh");
  std::filesystem::create_directories(home + "/.aws");
  std::filesystem::create_directories(talaria_home);
  std::ofstream(home + "/.ssh/id_ed25519") << "PRIVATE KEY\n";
  std::ofstream(home + "/.aws/credentials") << "aws_secret_access_key=x\n";
  std::ofstream(home + "/.netrc") << "machine h password p\n";
  std::ofstream(talaria_home + "/approvals.json") << "[]\n";
  std::ofstream(home + "/notes.txt") << "ordinary\n";
  SandboxOptions options;
  options.home = home;
  options.talaria_home = talaria_home;
  Open(false, options);
  for (const std::string& secret : {home + "/.ssh/id_ed25519", home + "/.aws/credentials",
                                    home + "/.netrc", talaria_home + "/approvals.json"}) {
    CommandOutcome r = Run("cat " + secret + " 2>&1 | head -c 200; echo");
    EXPECT_EQ(r.output.find("PRIVATE KEY"), std::string::npos) << secret << ": " << r.output;
    EXPECT_EQ(r.output.find("password"), std::string::npos) << secret << ": " << r.output;
    EXPECT_EQ(r.output.find("aws_secret"), std::string::npos) << secret << ": " << r.output;
    EXPECT_EQ(r.output.find("[]"), std::string::npos) << secret << ": " << r.output;
  }
  EXPECT_EQ(Run("ls -A " + home + "/.ssh " + talaria_home).output,
            home + "/.ssh:\n\n" + talaria_home + ":\n");
  EXPECT_NE(Run("echo '[\"recursive_delete\"]' > " + talaria_home + "/approvals.json").exit_code,
            0);
  EXPECT_EQ(Run("cat " + home + "/notes.txt").output, "ordinary\n");
  std::ifstream approvals(talaria_home + "/approvals.json");
  std::string line;
  std::getline(approvals, line);
  EXPECT_EQ(line, "[]");
}

// A store kept elsewhere and linked into the home (stow and other dotfile managers) is hidden
// under both names, and a link to a directory does not break the sandbox.
TEST_F(Sandbox, SymlinkedCredentialStoresAreHiddenAtTheirRealPath) {
  const std::string home = base_ + "/home";
  std::filesystem::create_directories(base_ + "/dotfiles/aws");
  std::filesystem::create_directories(home);
  std::ofstream(base_ + "/dotfiles/aws/credentials") << "aws_secret_access_key=x\n";
  std::filesystem::create_directory_symlink(base_ + "/dotfiles/aws", home + "/.aws");
  SandboxOptions options;
  options.home = home;
  Open(false, options);
  for (const std::string& p : {home + "/.aws/credentials", base_ + "/dotfiles/aws/credentials"}) {
    CommandOutcome r = Run("cat " + p + " 2>&1; true");
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(r.output.find("aws_secret"), std::string::npos) << p << ": " << r.output;
  }
}

// A workspace inside $TALARIA_HOME (a user's odd choice) stays usable; the state beside it
// does not show.
TEST_F(Sandbox, AWorkspaceInsideTheHiddenStateStaysReachable) {
  const std::string talaria_home = base_;  // ws_ lies inside it
  std::ofstream(base_ + "/trusted.json") << "{}\n";
  SandboxOptions options;
  options.talaria_home = talaria_home;
  Open(false, options);
  EXPECT_EQ(Run("echo ok > inside.txt && cat inside.txt").output, "ok\n");
  CommandOutcome r = Run("cat " + base_ + "/trusted.json 2>&1");
  EXPECT_EQ(r.output.find("{}"), std::string::npos) << r.output;
}

// /tmp is a tmpfs of a fixed size, not half of the machine's memory outside every limit.
TEST_F(Sandbox, TmpHasASizeLimit) {
  SandboxOptions options;
  options.tmp_size_bytes = 4u << 20;
  Open(false, options);
  CommandOutcome r = Run("dd if=/dev/zero of=/tmp/flood bs=1M count=16 2>&1; df -k /tmp | tail -1");
  EXPECT_NE(r.output.find("No space left on device"), std::string::npos) << r.output;
}

// Whether or not bubblewrap works here: bad options, a missing bwrap and a kernel that refuses
// user namespaces are each a clear error, never a crash.
TEST(SandboxRefusal, BadOptionsMissingBwrapAndRefusedNamespacesAreReported) {
  SandboxOptions options;
  options.writable = {"relative/dir"};
  EXPECT_EQ(OpenSandbox(options).error().code(), StatusCode::kInvalidArgument);
  SandboxOptions missing;
  missing.bwrap = "/nonexistent/bwrap";
  EXPECT_EQ(OpenSandbox(missing).error().code(), StatusCode::kNotFound);
  test_support::TempDir dir;
  SandboxOptions refused;
  refused.bwrap = test_support::WriteRefusingBwrap(dir.path());
  auto opened = OpenSandbox(refused);
  ASSERT_FALSE(opened);
  EXPECT_EQ(opened.error().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(opened.error().message().find("cannot create namespaces"), std::string::npos)
      << opened.error().message();
  EXPECT_NE(opened.error().message().find("non-privileged user namespaces"), std::string::npos)
      << opened.error().message();
}

}  // namespace
}  // namespace talaria::env
