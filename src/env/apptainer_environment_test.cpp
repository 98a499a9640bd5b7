// The Apptainer environment: what only it does (the instance's flags, read-only credential
// binds, the SIF built once, the instance stopped with the session). Against the stand-in of
// tests/support (which records the argv it got); the shared behaviour is in
// src/sandboxes/environment_conformance_test.cpp (EnvironmentConformance.*/apptainer).
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <future>
#include <sstream>
#include <string>
#include <vector>

#include "support/apptainer_support.h"
#include "support/env_helpers.h"
#include "talaria/env/environment.h"

namespace talaria::env {
namespace {

std::vector<std::string> Lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

class ApptainerEnvironmentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const test_support::ApptainerForTests apptainer = test_support::FindApptainerForTests();
    if (!apptainer.standin) {
      GTEST_SKIP() << (apptainer.program.empty()
                           ? apptainer.skip_reason
                           : "these tests read the stand-in's records; a real apptainer is here");
    }
    program_ = apptainer.program;
    scratch_ = test_support::MakeScratchOutsideTmp(TALARIA_BINARY_DIR, "talaria-apptainer");
    ASSERT_FALSE(scratch_.empty());
    std::filesystem::create_directories(scratch_ + "/ws");
    std::filesystem::create_directories(scratch_ + "/creds");
    std::ofstream(scratch_ + "/creds/token") << "secret\n";
    // The stand-in keeps its records where this test can read them alone.
    ::setenv("TALARIA_APPTAINER_STANDIN_STATE", (scratch_ + "/state").c_str(), 1);
  }

  void TearDown() override {
    ::unsetenv("TALARIA_APPTAINER_STANDIN_STATE");
    if (!scratch_.empty()) {
      std::error_code ec;
      std::filesystem::remove_all(scratch_, ec);
    }
  }

  ApptainerOptions Options() const {
    ApptainerOptions o;
    o.program = program_;
    o.image = "docker://python:3.11-slim";
    o.cache_dir = scratch_ + "/cache";
    o.binds = {scratch_ + "/ws:" + scratch_ + "/ws"};
    o.initial_cwd = scratch_ + "/ws";
    return o;
  }

  // The recorded argv of the one instance started so far.
  std::vector<std::string> StartArgv() const {
    for (const auto& entry : std::filesystem::directory_iterator(scratch_ + "/state")) {
      if (entry.path().extension() == ".argv") return Lines(entry.path().string());
    }
    return {};
  }

  std::string program_;
  std::string scratch_;
};

TEST_F(ApptainerEnvironmentTest, StartsAContainedInstanceWithCredentialsReadOnly) {
  ApptainerOptions options = Options();
  options.readonly_binds = {scratch_ + "/creds"};
  options.memory_mb = 512;
  options.cpus = 1;
  auto env = OpenApptainer(options);
  ASSERT_TRUE(env) << env.error().ToString();
  EXPECT_EQ((*env)->kind(), "apptainer");
  const std::vector<std::string> argv = StartArgv();
  ASSERT_GE(argv.size(), 6u);
  EXPECT_EQ(std::vector<std::string>(argv.begin(), argv.begin() + 5),
            (std::vector<std::string>{"instance", "start", "--containall", "--no-home",
                                      "--writable-tmpfs"}));
  const std::string joined = [&] {
    std::string j;
    for (const std::string& a : argv) j += a + "\n";
    return j;
  }();
  EXPECT_NE(joined.find("--bind\n" + scratch_ + "/creds:" + scratch_ + "/creds:ro\n"),
            std::string::npos)
      << joined;
  EXPECT_NE(joined.find("--memory\n512M\n"), std::string::npos) << joined;
  // The image went through the SIF cache, not the docker:// URL.
  EXPECT_EQ(argv[argv.size() - 2], scratch_ + "/cache/docker_python_3.11-slim.sif");
  EXPECT_EQ(argv.back().rfind("talaria_", 0), 0u);

  auto r = (*env)->Run("cat " + scratch_ + "/creds/token; { echo x > " + scratch_ +
                           "/creds/new; } 2>/dev/null || echo read-only; echo w > out; cat out; "
                           "echo ${HOME:-nohome}",
                       {});
  ASSERT_TRUE(r) << r.error().ToString();
  EXPECT_EQ(r->output, "secret\nread-only\nw\nnohome\n");
  EXPECT_TRUE(std::filesystem::exists(scratch_ + "/ws/out"));
}

TEST_F(ApptainerEnvironmentTest, ConcurrentSessionsBuildTheImageOnce) {
  auto open = [this] { return OpenApptainer(Options()); };
  auto first = std::async(std::launch::async, open);
  auto second = std::async(std::launch::async, open);
  auto a = first.get();
  auto b = second.get();
  ASSERT_TRUE(a) << a.error().ToString();
  ASSERT_TRUE(b) << b.error().ToString();
  EXPECT_EQ(Lines(scratch_ + "/state/builds.log"),
            std::vector<std::string>{"docker://python:3.11-slim"});
  // A later session finds the SIF and builds nothing.
  auto c = OpenApptainer(Options());
  ASSERT_TRUE(c) << c.error().ToString();
  EXPECT_EQ(Lines(scratch_ + "/state/builds.log").size(), 1u);
}

TEST_F(ApptainerEnvironmentTest, TheInstanceStopsWithTheSession) {
  auto env = OpenApptainer(Options());
  ASSERT_TRUE(env) << env.error().ToString();
  ASSERT_TRUE((*env)->Run("nohup sleep 1000.73 >/dev/null 2>&1 &", {}));
  EXPECT_TRUE(test_support::ProcessRunning("sleep 1000[.]73"));
  env->reset();
  EXPECT_TRUE(test_support::NoProcessWithin("sleep 1000[.]73", std::chrono::seconds(10)));
}

TEST_F(ApptainerEnvironmentTest, AnInstanceThatDoesNotStartIsUnavailableWithTheReason) {
  ApptainerOptions options = Options();
  options.binds = {"no-colon"};  // the stand-in refuses it, as apptainer would
  auto env = OpenApptainer(options);
  ASSERT_FALSE(env);
  EXPECT_EQ(env.error().code(), StatusCode::kUnavailable);
  EXPECT_NE(env.error().message().find("--bind"), std::string::npos) << env.error().message();
}

TEST(ApptainerEnvironment, NoProgramIsNotFound) {
  ApptainerOptions options;
  options.program = "/nonexistent/apptainer";
  auto env = OpenApptainer(options);
  ASSERT_FALSE(env);
  EXPECT_EQ(env.error().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace talaria::env
