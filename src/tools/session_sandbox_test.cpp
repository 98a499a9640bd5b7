// terminal.backend: modal | daytona | e2b | kubernetes: the service's config section, its key
// from the environment, and the terminal tool running in the service's sandbox (the fake
// control plane of tests/support), which is deleted with the session; and terminal.<service>.sync
// keeping the workspace and the sandbox in step (SessionSandboxSync).
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "support/bwrap_support.h"
#include "support/env_helpers.h"
#include "support/file_text.h"
#include "support/sandbox_control_plane.h"
#include "support/temp_dir.h"
#include "talaria/core/config.h"
#include "talaria/core/runtime.h"
#include "talaria/tools/session.h"
#include "talaria/tools/session_services.h"

namespace talaria::tools {
namespace {

TEST(SessionSandboxConfig, ReadsTheBackendsOwnSection) {
  auto config = ParseConfig(
      "terminal:\n"
      "  backend: kubernetes\n"
      "  daytona: {url: http://ignored}\n"
      "  kubernetes: {url: 'https://10.0.0.1', namespace: agents, token_file: /t, ca_file: /c,\n"
      "               data_plane_url: 'http://router:8080', image: rt, cwd: /app,\n"
      "               persistent: true}\n");
  ASSERT_TRUE(config) << config.error().ToString();
  auto o = SessionOptionsFromConfig(*config);
  ASSERT_TRUE(o) << o.error().ToString();
  EXPECT_EQ(o->terminal.backend, "kubernetes");
  EXPECT_EQ(o->terminal.sandbox_url, "https://10.0.0.1");
  EXPECT_EQ(o->terminal.sandbox_namespace, "agents");
  EXPECT_EQ(o->terminal.sandbox_token_file, "/t");
  EXPECT_EQ(o->terminal.sandbox_ca_file, "/c");
  EXPECT_EQ(o->terminal.sandbox_data_plane_url, "http://router:8080");
  EXPECT_EQ(o->terminal.sandbox_image, "rt");
  EXPECT_EQ(o->terminal.sandbox_cwd, "/app");
  EXPECT_TRUE(o->terminal.sandbox_persistent);
  auto bad = ParseConfig("terminal: {backend: lambda}\n");
  ASSERT_TRUE(bad);
  EXPECT_FALSE(SessionOptionsFromConfig(*bad));
}

class SessionSandbox : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    scratch_ = test_support::MakeScratchOutsideTmp(TALARIA_BINARY_DIR, "talaria-sess-sbx");
    ASSERT_FALSE(scratch_.empty());
    std::filesystem::create_directories(scratch_ + "/ws");
    test_support::SandboxControlPlaneOptions fake;
    fake.root = scratch_;
    fake.workspace = scratch_ + "/ws";
    plane_ = test_support::SandboxControlPlane::Start(fake);
    std::ofstream(scratch_ + "/token") << "test-key\n";
  }
  void TearDown() override {
    plane_.reset();
    for (const char* name : {"TOOL_GATEWAY_USER_TOKEN", "DAYTONA_API_KEY", "E2B_API_KEY"})
      ::unsetenv(name);
    std::error_code ec;
    std::filesystem::remove_all(scratch_, ec);
  }
  std::string Yaml() const {
    const std::string& kind = GetParam();
    std::string yaml = "terminal:\n  backend: " + kind + "\n  " + kind + ": {url: '" +
                       plane_->url() + "', cwd: '" + scratch_ + "/ws'";
    if (kind == "e2b" || kind == "kubernetes") yaml += ", data_plane_url: '" + plane_->url() + "'";
    if (kind == "kubernetes") yaml += ", token_file: '" + scratch_ + "/token'";
    return yaml + "}\n";
  }
  static const char* KeyName(const std::string& kind) {
    if (kind == "modal") return "TOOL_GATEWAY_USER_TOKEN";
    if (kind == "daytona") return "DAYTONA_API_KEY";
    if (kind == "e2b") return "E2B_API_KEY";
    return nullptr;
  }

  std::string scratch_;
  std::unique_ptr<test_support::SandboxControlPlane> plane_;
};

TEST_P(SessionSandbox, TheTerminalRunsInTheServicesSandbox) {
  auto config = ParseConfig(Yaml());
  ASSERT_TRUE(config) << config.error().ToString();
  auto options = SessionOptionsFromConfig(*config);
  ASSERT_TRUE(options) << options.error().ToString();
  options->roots = {scratch_ + "/ws"};
  options->audit = false;
  if (const char* key = KeyName(GetParam())) {
    // Without its key the backend says which variable it needs.
    auto refused = OpenSession(*options);
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().message().find(key), std::string::npos);
    ::setenv(key, "test-key", 1);
  }
  std::ofstream(scratch_ + "/config.yaml") << "{}\n";
  RuntimeOptions rt_options;
  rt_options.config_path = scratch_ + "/config.yaml";
  auto rt = Runtime::Create(rt_options);
  ASSERT_TRUE(rt) << rt.error().ToString();
  {
    auto session = OpenSession(*options);
    ASSERT_TRUE(session) << session.error().ToString();
    EXPECT_EQ(plane_->counts().live, 1);
    ToolContext ctx = (*session)->NewContext("call_1");
    const ToolResult r = (*rt)->dispatcher().Dispatch(
        "terminal", Json{{"command", "echo in-sandbox; pwd"}}.dump(), ctx);
    ASSERT_TRUE(r.ok()) << r.text;
    EXPECT_NE(r.text.find("in-sandbox"), std::string::npos) << r.text;
    EXPECT_NE(r.text.find(scratch_ + "/ws"), std::string::npos) << r.text;
  }
  EXPECT_GE(plane_->counts().execs, 2);
  EXPECT_EQ(plane_->counts().live, 0);  // deleted with the session
}

// Modal goes through the managed tool gateway (net/tool_gateway.h): with no key in the
// environment and no url in the config, the gateway's token file and MODAL_GATEWAY_URL are
// what the session uses.
TEST_P(SessionSandbox, ModalTakesItsOriginAndTokenFromTheToolGateway) {
  if (GetParam() != "modal") GTEST_SKIP() << "the tool gateway serves Modal only";
  const std::string token_file = scratch_ + "/tool_gateway.json";
  std::ofstream(token_file)
      << R"({"access_token": "test-key", "expires_at": "2999-01-01T00:00:00Z"})"
      << "\n";
  ::setenv("TOOL_GATEWAY_TOKEN_FILE", token_file.c_str(), 1);
  ::setenv("MODAL_GATEWAY_URL", plane_->url().c_str(), 1);
  auto config = ParseConfig("terminal:\n  backend: modal\n  modal: {cwd: '" + scratch_ + "/ws'}\n");
  ASSERT_TRUE(config) << config.error().ToString();
  auto options = SessionOptionsFromConfig(*config);
  ASSERT_TRUE(options) << options.error().ToString();
  options->roots = {scratch_ + "/ws"};
  options->audit = false;
  {
    auto session = OpenSession(*options);
    ASSERT_TRUE(session) << session.error().ToString();
    EXPECT_EQ(plane_->counts().live, 1);
  }
  EXPECT_EQ(plane_->counts().live, 0);
  EXPECT_EQ(plane_->counts().auth_failures, 0);
  // A token file without a token: the error names what to set.
  std::ofstream(token_file) << "{}\n";
  auto refused = OpenSession(*options);
  ::unsetenv("TOOL_GATEWAY_TOKEN_FILE");
  ::unsetenv("MODAL_GATEWAY_URL");
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message().find("access_token"), std::string::npos)
      << refused.error().ToString();
}

// terminal.<service>.sync: the sandbox has its own file system here (the fake binds no
// workspace; /tmp is the jail's own), so what the tools see on either side got there by sync.
class SessionSandboxSync : public SessionSandbox {
 protected:
  // Restarts the plane without the workspace bound and opens a synced session on ws/.
  void OpenSynced() {
    plane_.reset();
    test_support::SandboxControlPlaneOptions fake;
    fake.root = scratch_;
    plane_ = test_support::SandboxControlPlane::Start(fake);
    const std::string ws = scratch_ + "/ws";
    std::string yaml = Yaml();
    yaml.replace(yaml.find("cwd: '"), std::string("cwd: '" + ws + "'").size(),
                 "cwd: '/tmp/work', sync: true");
    auto config = ParseConfig(yaml);
    ASSERT_TRUE(config) << config.error().ToString() << yaml;
    auto options = SessionOptionsFromConfig(*config);
    ASSERT_TRUE(options) << options.error().ToString();
    EXPECT_TRUE(options->terminal.sandbox_sync);
    options->roots = {ws};
    options->audit = false;
    if (const char* key = KeyName(GetParam())) ::setenv(key, "test-key", 1);
    std::ofstream(scratch_ + "/config.yaml") << "{}\n";
    RuntimeOptions rt_options;
    rt_options.config_path = scratch_ + "/config.yaml";
    auto rt = Runtime::Create(rt_options);
    ASSERT_TRUE(rt) << rt.error().ToString();
    rt_ = std::move(*rt);
    auto session = OpenSession(*options);
    ASSERT_TRUE(session) << session.error().ToString();
    session_ = std::move(*session);
  }
  void TearDown() override {
    session_.reset();
    rt_.reset();
    SessionSandbox::TearDown();
  }
  ToolResult Terminal(const std::string& command) {
    ToolContext ctx = session_->NewContext("call");
    return rt_->dispatcher().Dispatch("terminal", Json{{"command", command}}.dump(), ctx);
  }
  ToolResult WriteFileTool(const std::string& path, const std::string& content) {
    ToolContext ctx = session_->NewContext("write");
    return rt_->dispatcher().Dispatch("write_file",
                                      Json{{"path", path}, {"content", content}}.dump(), ctx);
  }

  std::unique_ptr<Runtime> rt_;
  std::shared_ptr<Session> session_;
};

TEST_P(SessionSandboxSync, SyncKeepsTheWorkspaceAndTheSandboxInStep) {
  // Unjailed, the fake's sandboxes would all share the machine's /tmp/work.
  TALARIA_SKIP_WITHOUT_BWRAP();
  const std::string ws = scratch_ + "/ws";
  std::filesystem::create_directories(ws + "/sub");
  std::filesystem::create_directories(scratch_ + "/outside");
  std::ofstream(ws + "/a.txt") << "from-local\n";
  std::ofstream(ws + "/sub/c.txt") << "old\n";
  std::filesystem::create_directory_symlink(scratch_ + "/outside", ws + "/out");
  ASSERT_NO_FATAL_FAILURE(OpenSynced());
  // In: the workspace at open. Back: what the command changed.
  ToolResult r = Terminal("cat a.txt; pwd; echo made > b.txt; echo edited > sub/c.txt");
  ASSERT_TRUE(r.ok()) << r.text;
  EXPECT_NE(r.text.find("from-local"), std::string::npos) << r.text;
  EXPECT_NE(r.text.find("/tmp/work"), std::string::npos) << r.text;
  EXPECT_EQ(test_support::ReadWholeFile(ws + "/b.txt"), "made\n");
  EXPECT_EQ(test_support::ReadWholeFile(ws + "/sub/c.txt"), "edited\n");
  // In again: a file tool's write reaches the sandbox before the next command.
  const ToolResult w = WriteFileTool(ws + "/a.txt", "tool-wrote\n");
  ASSERT_TRUE(w.ok()) << w.text;
  r = Terminal("cat a.txt");
  EXPECT_NE(r.text.find("tool-wrote"), std::string::npos) << r.text;
  // Back through the workspace's rules: a file under a link that leaves it is not written.
  r = Terminal("rm out && mkdir out && echo evil > out/evil.txt");
  EXPECT_NE(r.text.find("out/evil.txt not written back"), std::string::npos) << r.text;
  EXPECT_FALSE(std::filesystem::exists(scratch_ + "/outside/evil.txt"));
}

TEST_P(SessionSandboxSync, DeletionsGoBothWaysThroughTheWorkspace) {
  TALARIA_SKIP_WITHOUT_BWRAP();
  const std::string ws = scratch_ + "/ws";
  std::filesystem::create_directories(ws + "/sub");
  std::filesystem::create_directories(scratch_ + "/outside");
  std::ofstream(ws + "/gone-there.txt") << "1\n";
  std::ofstream(ws + "/gone-here.txt") << "2\n";
  std::ofstream(ws + "/sub/kept.txt") << "3\n";
  std::ofstream(scratch_ + "/outside/precious.txt") << "keep me\n";
  ASSERT_NO_FATAL_FAILURE(OpenSynced());
  // A file the command deletes is removed here.
  ToolResult r = Terminal("rm gone-there.txt && ls");
  ASSERT_TRUE(r.ok()) << r.text;
  EXPECT_FALSE(std::filesystem::exists(ws + "/gone-there.txt"));
  EXPECT_TRUE(std::filesystem::exists(ws + "/sub/kept.txt"));
  // A file deleted here is removed there before the next command.
  std::filesystem::remove(ws + "/gone-here.txt");
  r = Terminal("ls; cat sub/kept.txt");
  EXPECT_EQ(r.text.find("gone-here.txt"), std::string::npos) << r.text;
  EXPECT_NE(r.text.find("3"), std::string::npos) << r.text;
  // A deletion in the sandbox is carried out through the workspace's rules: here "link" leads
  // outside it, so the file it reaches stays.
  std::filesystem::create_directory_symlink(scratch_ + "/outside", ws + "/link");
  r = Terminal("mkdir -p link && echo x > link/precious.txt");
  EXPECT_NE(r.text.find("link/precious.txt not written back"), std::string::npos) << r.text;
  r = Terminal("rm link/precious.txt");
  EXPECT_NE(r.text.find("link/precious.txt not removed here"), std::string::npos) << r.text;
  EXPECT_EQ(test_support::ReadWholeFile(scratch_ + "/outside/precious.txt"), "keep me\n");
}

// Changes are told apart by mtime to the nanosecond (and size), not by the second: a file that
// did not change here is never sent again, so it cannot overwrite what a background job in the
// sandbox wrote since, however soon after the last exchange.
TEST_P(SessionSandboxSync, AnUnchangedFileIsNotSentAgainOverANewerCopy) {
  TALARIA_SKIP_WITHOUT_BWRAP();
  const std::string ws = scratch_ + "/ws";
  std::filesystem::create_directories(ws);
  std::ofstream(ws + "/state.txt") << "local\n";
  ASSERT_NO_FATAL_FAILURE(OpenSynced());
  // A write here, then at once a background job there rewrites the file: same second.
  ASSERT_TRUE(WriteFileTool(ws + "/state.txt", "tool\n").ok());
  ASSERT_TRUE(Terminal("true").ok());
  auto job = EnvironmentOf(session_->NewContext("bg"))->Start("echo job > state.txt", {}, {});
  ASSERT_TRUE(job) << job.error().ToString();
  siginfo_t info{};
  ::waitid(P_PID, static_cast<id_t>(job->pid), &info, WEXITED);
  // The next command sees the job's copy, and it comes back here.
  ToolResult r = Terminal("cat state.txt");
  EXPECT_NE(r.text.find("job"), std::string::npos) << r.text;
  EXPECT_EQ(test_support::ReadWholeFile(ws + "/state.txt"), "job\n");
  // Two local changes within one second both go in.
  ASSERT_TRUE(WriteFileTool(ws + "/state.txt", "first\n").ok());
  EXPECT_NE(Terminal("cat state.txt").text.find("first"), std::string::npos);
  ASSERT_TRUE(WriteFileTool(ws + "/state.txt", "second\n").ok());
  EXPECT_NE(Terminal("cat state.txt").text.find("second"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(, SessionSandbox,
                         ::testing::Values("modal", "daytona", "e2b", "kubernetes"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });
INSTANTIATE_TEST_SUITE_P(, SessionSandboxSync,
                         ::testing::Values("modal", "daytona", "e2b", "kubernetes"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

}  // namespace
}  // namespace talaria::tools
