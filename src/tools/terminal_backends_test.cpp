// terminal.backend apptainer and pool, chosen through SessionOptions as config.yaml chooses them.
#include "tools/terminal_backends.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "support/apptainer_support.h"
#include "support/env_helpers.h"
#include "talaria/core/dispatcher.h"
#include "talaria/env/environment.h"
#include "talaria/tools/session.h"
#include "talaria/tools/session_services.h"

namespace talaria::tools {
namespace {

TEST(ClusterBackends, TheTerminalRunsInAnApptainerInstanceOverTheWorkspace) {
  const test_support::ApptainerForTests apptainer = test_support::FindApptainerForTests();
  if (apptainer.program.empty()) GTEST_SKIP() << apptainer.skip_reason;
  const std::string root =
      test_support::MakeScratchOutsideTmp(TALARIA_BINARY_DIR, "talaria-session-apptainer");
  ASSERT_FALSE(root.empty());
  // The SIF cache, not the user's TALARIA_HOME.
  ::setenv("APPTAINER_CACHEDIR", (root + "/.cache").c_str(), 1);
  {
    SessionOptions options;
    options.roots = {root};
    options.audit = false;
    options.terminal.backend = "apptainer";
    options.terminal.apptainer_program = apptainer.program;
    auto session = Session::Open(options);
    ASSERT_TRUE(session) << session.error().ToString();
    ToolContext ctx = (*session)->NewContext("call");
    EXPECT_EQ(EnvironmentOf(ctx)->kind(), "apptainer");
    Dispatcher dispatcher;
    const ToolResult r =
        dispatcher.Dispatch("terminal", Json{{"command", "pwd; echo made > made.txt"}}.dump(), ctx);
    EXPECT_TRUE(r.ok()) << r.text;
    EXPECT_NE(r.text.find(root), std::string::npos) << r.text;
    std::ifstream made(root + "/made.txt");
    std::string line;
    EXPECT_TRUE(std::getline(made, line));
    EXPECT_EQ(line, "made");
  }
  ::unsetenv("APPTAINER_CACHEDIR");
  std::error_code ec;
  std::filesystem::remove_all(root, ec);
}

TEST(ClusterBackends, APoolWithoutHostsIsRefused) {
  SessionOptions options;
  options.audit = false;
  options.terminal.backend = "pool";
  auto session = Session::Open(options);
  ASSERT_FALSE(session);
  EXPECT_NE(session.error().message().find("terminal.pool.hosts"), std::string::npos)
      << session.error().ToString();
}

TEST(ClusterBackends, PoolHostsReadAsUserHostAndPort) {
  env::SshOptions ssh;
  ASSERT_TRUE(ParsePoolHost("ci@build1:2222", ssh).ok());
  EXPECT_EQ(ssh.user, "ci");
  EXPECT_EQ(ssh.host, "build1");
  EXPECT_EQ(ssh.port, 2222);
  env::SshOptions plain;
  ASSERT_TRUE(ParsePoolHost("build2", plain).ok());
  EXPECT_EQ(plain.user, "");
  EXPECT_EQ(plain.host, "build2");
  EXPECT_EQ(plain.port, 22);
  for (const char* bad : {"", "ci@", "h:", "h:0", "h:70000", "h:22x", "h:99999999999"}) {
    env::SshOptions o;
    EXPECT_EQ(ParsePoolHost(bad, o).code(), StatusCode::kInvalidArgument) << bad;
  }
}

}  // namespace
}  // namespace talaria::tools
