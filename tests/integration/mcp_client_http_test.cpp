// talaria's MCP client against talaria's own Streamable HTTP server (`talaria mcp --http`), with a
// bearer token: the right one connects and calls tools, a wrong one is refused without the token
// showing up anywhere.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli_harness.h"
#include "mcp_process.h"
#include "talaria/core/dispatcher.h"
#include "talaria/core/registry.h"
#include "talaria/mcp/client.h"

namespace talaria {
namespace {

using namespace std::chrono_literals;
using testing_cli::TempHome;

class TalariaHttpServer : public testing_cli::McpProcessBase {
 public:
  TalariaHttpServer(const std::string& home, const std::string& root, const std::string& token)
      : McpProcessBase(home, root, {"--http", "127.0.0.1:0", "--root", root, "--token", token},
                       /*stdin_pipe=*/false) {}

  // The port from its "... at http://127.0.0.1:PORT/mcp" line; 0 if it never came.
  int WaitForPort() {
    const std::string marker = "at http://127.0.0.1:";
    for (int i = 0; i < 500 && !Exited(); ++i) {
      const std::string err = Stderr();
      if (size_t at = err.find(marker); at != std::string::npos) {
        const size_t end = err.find("/mcp", at);
        if (end != std::string::npos)
          return std::stoi(err.substr(at + marker.size(), end - at - marker.size()));
      }
      std::this_thread::sleep_for(10ms);
    }
    return 0;
  }
};

TEST(McpClientHttp, TalariaClientAgainstTalariaServerWithBearerToken) {
  TempHome home;
  const std::string root = home.path() + "/root";
  std::filesystem::create_directories(root);
  std::ofstream(root + "/notes.txt") << "alpha beta gamma delta epsilon zeta eta theta\n";
  const std::string token = "tok-0123456789-very-secret";
  TalariaHttpServer server(home.path(), root, token);
  const int port = server.WaitForPort();
  ASSERT_GT(port, 0) << server.Stderr();
  const std::string url = "http://127.0.0.1:" + std::to_string(port) + "/mcp";

  mcp::ServerConfig good;
  good.name = "self";
  good.url = url;
  good.headers = {{"Authorization", "Bearer " + token}};
  good.connect_timeout = 5s;
  mcp::ServerConfig bad = good;
  bad.name = "wrong";
  bad.headers = {{"Authorization", "Bearer wrong-token-abcdef"}};
  mcp::ClientOptions options;
  options.failures_before_break = 1;
  Registry registry;
  auto manager = mcp::McpClientManager::Start(registry, {good, bad}, options);
  ASSERT_TRUE(manager->WaitForInitialConnections(10s));

  auto status = *manager->StatusOf("self");
  ASSERT_EQ(status.state, mcp::ServerState::kConnected) << status.reason;
  ASSERT_TRUE(registry.GetEntry("mcp_self_read_file"));
  Dispatcher dispatcher(registry);
  ToolContext ctx;
  ctx.deadline = std::chrono::steady_clock::now() + 10s;
  ToolResult read = dispatcher.DispatchArgs(
      "mcp_self_read_file", nlohmann::ordered_json{{"path", root + "/notes.txt"}}, ctx);
  ASSERT_TRUE(read.ok()) << read.text;
  EXPECT_EQ(read.text.rfind("<untrusted_tool_result source=\"mcp_self_read_file\">", 0), 0u)
      << read.text;
  EXPECT_NE(read.text.find("alpha beta gamma"), std::string::npos) << read.text;

  auto wrong = *manager->StatusOf("wrong");
  EXPECT_EQ(wrong.state, mcp::ServerState::kUnavailable);
  EXPECT_NE(wrong.reason.find("HTTP 401"), std::string::npos) << wrong.reason;
  EXPECT_EQ(wrong.reason.find("wrong-token-abcdef"), std::string::npos) << wrong.reason;
  EXPECT_FALSE(registry.GetEntry("mcp_wrong_read_file"));
  manager->Shutdown();
}

}  // namespace
}  // namespace talaria
