// The MCP client against a real server: @modelcontextprotocol/server-everything over stdio
// (installed by `npm ci --ignore-scripts` in tests/mcp_peers).
#include "talaria/mcp/client.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <poll.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <thread>

#include "mcp/client_internal.h"
#include "mcp/client_test_util.h"
#include "talaria/base/spawn.h"
#include "talaria/core/registry.h"

namespace talaria::mcp {
namespace {

using namespace std::chrono_literals;
using talaria::mcp::client_testing::Dispatched;
using talaria::mcp::client_testing::FastRetries;
using talaria::mcp::client_testing::WaitUntil;

std::string FindOnPath(const std::string& program) {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return {};
  std::string_view rest(path);
  while (!rest.empty()) {
    const size_t colon = rest.find(':');
    const std::string dir(rest.substr(0, colon));
    rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + program;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return {};
}

// Built with += : g++ 12 reports a false -Warray-bounds for the `std::string(...) + "..."` form.
std::string EverythingScript() {
  std::string path = TALARIA_SOURCE_DIR;
  path += "/tests/mcp_peers/node_modules/@modelcontextprotocol/server-everything/dist/index.js";
  return path;
}

#define REQUIRE_EVERYTHING_SERVER()                                                           \
  do {                                                                                        \
    if (FindOnPath("node").empty()) GTEST_SKIP() << "node is not on PATH";                    \
    if (!std::filesystem::exists(EverythingScript())) {                                       \
      GTEST_SKIP() << "server-everything is not installed: run `npm ci --ignore-scripts` in " \
                      "tests/mcp_peers";                                                      \
    }                                                                                         \
  } while (0)

ServerConfig Everything(std::string name = "everything") {
  ServerConfig config;
  config.name = std::move(name);
  config.command = "node";
  config.args = {EverythingScript(), "stdio"};
  config.connect_timeout = 20s;
  config.timeout = 20s;
  return config;
}

ToolResult Call(Registry& registry, const std::string& name, const Json& args,
                std::chrono::milliseconds timeout = 20s, std::stop_token cancel = {}) {
  auto entry = registry.GetEntry(name);
  if (!entry) return ToolResult::Error("no tool " + name);
  ToolContext ctx;
  ctx.deadline = std::chrono::steady_clock::now() + timeout;
  ctx.cancel = std::move(cancel);
  return entry->handler()(args, ctx);
}

// The JSON inside a result, unwrapped from its <untrusted_tool_result> envelope when it has one.
Json ParsedText(const ToolResult& r) {
  std::string text = r.text;
  if (text.rfind("<untrusted_tool_result", 0) == 0) {
    const size_t open = text.find('{');
    text = text.substr(open, text.rfind('}') + 1 - open);
  }
  return Json::parse(text);
}

// server-everything's Streamable HTTP transport on 127.0.0.1 (tests/data/mcp/listen_loopback.cjs
// makes it bind loopback and print its port), ended by pid with its process group.
class EverythingOverHttp {
 public:
  explicit EverythingOverHttp(int port = 0) {
    SpawnOptions spawn;
    std::string preload = TALARIA_SOURCE_DIR;
    preload += "/tests/data/mcp/listen_loopback.cjs";
    std::string port_env = "PORT=";
    port_env += std::to_string(port);
    std::string path_env = "PATH=";
    path_env += std::getenv("PATH");
    spawn.argv = {"node", "--require", preload, EverythingScript(), "streamableHttp"};
    spawn.env = {port_env, path_env};
    auto child = StartProcess(spawn, StartOptions{});
    if (!child) {
      ADD_FAILURE() << child.error().ToString();
      return;
    }
    child_ = std::move(*child);
    // Its output is drained for its whole life: a full pipe would stall the server.
    reader_ = std::jthread([this](const std::stop_token& stop) {
      char buf[4096];
      while (!stop.stop_requested()) {
        pollfd p{child_.output.get(), POLLIN, 0};
        if (::poll(&p, 1, 100) <= 0) continue;
        const ssize_t n = ::read(child_.output.get(), buf, sizeof buf);
        if (n <= 0) {
          if (n == 0) break;
          continue;
        }
        std::lock_guard lock(mu_);
        output_.append(buf, static_cast<size_t>(n));
        if (const size_t at = output_.find("TALARIA_TEST_PORT=");
            at != std::string::npos && port_ == 0) {
          port_ = std::atoi(output_.c_str() + at + 18);
        }
        if (output_.size() > 65536) output_.erase(0, output_.size() - 4096);
      }
    });
  }
  ~EverythingOverHttp() { Kill(); }

  // The port once the server listens (0 after `timeout`).
  int WaitForPort(std::chrono::milliseconds timeout = 20s) {
    WaitUntil(
        [&] {
          std::lock_guard lock(mu_);
          return port_ != 0;
        },
        timeout);
    std::lock_guard lock(mu_);
    return port_;
  }
  void Kill() {
    if (child_.pid <= 0) return;
    TerminateProcessGroup(child_.pid, child_.pidfd.get(), 500ms);
    siginfo_t info{};
    ::waitid(P_PID, static_cast<id_t>(child_.pid), &info, WEXITED);
    child_.pid = -1;
    reader_.request_stop();
    if (reader_.joinable()) reader_.join();
  }

 private:
  StartedProcess child_;
  std::jthread reader_;
  std::mutex mu_;
  std::string output_;  // Guarded by mu_.
  int port_ = 0;        // Guarded by mu_.
};

TEST(McpClient, ConnectsAndRegistersTools) {
  REQUIRE_EVERYTHING_SERVER();
  Registry registry;
  auto manager = McpClientManager::Start(registry, {Everything()}, FastRetries());
  ASSERT_TRUE(manager->WaitForInitialConnections(20s));
  auto status = manager->StatusOf("everything");
  ASSERT_TRUE(status.has_value());
  ASSERT_EQ(status->state, ServerState::kConnected) << status->reason;
  EXPECT_EQ(status->protocol_version, "2025-11-25");
  const auto tools = registry.ToolsOfToolset("mcp-everything");
  EXPECT_NE(std::find(tools.begin(), tools.end(), "mcp_everything_echo"), tools.end());
  EXPECT_NE(std::find(tools.begin(), tools.end(), "mcp_everything_get_sum"), tools.end());
  EXPECT_EQ(registry.ResolveToolsetAlias("everything"), "mcp-everything");
  auto echo = registry.GetEntry("mcp_everything_echo");
  ASSERT_TRUE(echo);
  EXPECT_EQ(echo->toolset(), "mcp-everything");
  EXPECT_EQ(echo->parallel(), ParallelClass::kSafe);  // readOnlyHint: true
  EXPECT_EQ(echo->description(), "Echoes back the input string");
  EXPECT_TRUE(registry.CheckAvailability("mcp_everything_echo").available);
  const Json schema = Json::parse(echo->schema_text());
  EXPECT_EQ(schema["parameters"]["type"], "object");
  EXPECT_FALSE(schema["parameters"].contains("$schema"));
  manager->Shutdown();
  EXPECT_TRUE(registry.ToolsOfToolset("mcp-everything").empty());
}

TEST(McpClient, CallsToolsAndReportsErrors) {
  REQUIRE_EVERYTHING_SERVER();
  Registry registry;
  auto manager = McpClientManager::Start(registry, {Everything()}, FastRetries());
  ASSERT_TRUE(manager->WaitForInitialConnections(20s));

  ToolResult echo = Call(registry, "mcp_everything_echo", Json{{"message", "hello"}});
  ASSERT_TRUE(echo.ok()) << echo.text;
  EXPECT_EQ(ParsedText(echo)["result"], "Echo: hello");

  ToolResult sum = Call(registry, "mcp_everything_get_sum", Json{{"a", 2}, {"b", 3}});
  ASSERT_TRUE(sum.ok()) << sum.text;
  EXPECT_NE(ParsedText(sum)["result"].get<std::string>().find('5'), std::string::npos) << sum.text;

  ToolResult structured =
      Call(registry, "mcp_everything_get_structured_content", Json{{"location", "New York"}});
  ASSERT_TRUE(structured.ok()) << structured.text;
  EXPECT_TRUE(ParsedText(structured).contains("structuredContent")) << structured.text;

  // An isError result (invalid arguments, judged by the server).
  ToolResult bad = Call(registry, "mcp_everything_echo", Json::object());
  EXPECT_EQ(bad.status, CallStatus::kError);
  EXPECT_EQ(ParsedText(bad)["error"].get<std::string>().rfind("MCP call failed: ", 0), 0u)
      << bad.text;
}

TEST(McpClient, ChildGetsConfiguredEnvButNotOurSecrets) {
  REQUIRE_EVERYTHING_SERVER();
  ::setenv("TALARIA_TEST_SECRET_KEY", "sk-test-should-not-leak-0123456789", 1);
  Registry registry;
  ServerConfig config = Everything();
  config.env = {{"MCP_CONFIGURED_VAR", "from-config"}};
  auto manager = McpClientManager::Start(registry, {config}, FastRetries());
  ASSERT_TRUE(manager->WaitForInitialConnections(20s));
  ToolResult env = Call(registry, "mcp_everything_get_env", Json::object());
  ::unsetenv("TALARIA_TEST_SECRET_KEY");
  ASSERT_TRUE(env.ok()) << env.text;
  const std::string text = ParsedText(env)["result"].get<std::string>();
  EXPECT_NE(text.find("from-config"), std::string::npos);
  EXPECT_EQ(text.find("TALARIA_TEST_SECRET_KEY"), std::string::npos);
  EXPECT_NE(text.find("\"PATH\""), std::string::npos);
}

TEST(McpClient, KilledServerMakesToolsUnavailableThenReconnects) {
  REQUIRE_EVERYTHING_SERVER();
  Registry registry;
  auto manager = McpClientManager::Start(registry, {Everything()}, FastRetries());
  ASSERT_TRUE(manager->WaitForInitialConnections(20s));
  const auto first = *manager->StatusOf("everything");
  ASSERT_EQ(first.state, ServerState::kConnected) << first.reason;
  ASSERT_GT(first.pid, 0);
  // The listener sees the tools marked unavailable (re-published, never dropped).
  ASSERT_EQ(::kill(static_cast<pid_t>(first.pid), SIGKILL), 0);
  ASSERT_TRUE(WaitUntil(
      [&] {
        auto s = manager->StatusOf("everything");
        return s->state == ServerState::kUnavailable ||
               (s->state == ServerState::kConnected && s->connections >= 2);
      },
      10s));
  // Either caught in between or already back: the tools never left the registry.
  EXPECT_TRUE(registry.GetEntry("mcp_everything_echo"));
  ASSERT_TRUE(WaitUntil(
      [&] {
        auto s = manager->StatusOf("everything");
        return s->state == ServerState::kConnected && s->connections >= 2;
      },
      20s))
      << manager->StatusOf("everything")->reason;
  EXPECT_NE(manager->StatusOf("everything")->pid, first.pid);
  EXPECT_TRUE(registry.CheckAvailability("mcp_everything_echo").available);
  ToolResult echo = Call(registry, "mcp_everything_echo", Json{{"message", "again"}});
  ASSERT_TRUE(echo.ok()) << echo.text;
  EXPECT_EQ(ParsedText(echo)["result"], "Echo: again");
}

TEST(McpClient, DeadServerToolsStayListedButUnavailable) {
  REQUIRE_EVERYTHING_SERVER();
  Registry registry;
  ClientOptions options = FastRetries();
  options.initial_backoff = 5s;  // keep it down long enough to look at
  options.max_backoff = 5s;
  auto manager = McpClientManager::Start(registry, {Everything()}, options);
  ASSERT_TRUE(manager->WaitForInitialConnections(20s));
  const auto first = *manager->StatusOf("everything");
  ASSERT_EQ(first.state, ServerState::kConnected) << first.reason;
  ASSERT_TRUE(registry.CheckAvailability("mcp_everything_echo").available);
  ASSERT_EQ(::kill(static_cast<pid_t>(first.pid), SIGKILL), 0);
  ASSERT_TRUE(WaitUntil(
      [&] { return manager->StatusOf("everything")->state == ServerState::kUnavailable; }, 5s));
  auto status = *manager->StatusOf("everything");
  EXPECT_NE(status.reason.find("killed by signal 9"), std::string::npos) << status.reason;
  EXPECT_TRUE(registry.GetEntry("mcp_everything_echo"));
  EXPECT_FALSE(registry.CheckAvailability("mcp_everything_echo").available);
  ToolResult r = Call(registry, "mcp_everything_echo", Json{{"message", "x"}});
  EXPECT_EQ(ParsedText(r)["error"], "MCP server 'everything' is not connected");
}

TEST(McpClient, HttpServerEverythingCallsCancelsAndReconnects) {
  REQUIRE_EVERYTHING_SERVER();
  auto server = std::make_unique<EverythingOverHttp>();
  const int port = server->WaitForPort();
  ASSERT_GT(port, 0);
  Registry registry;
  ServerConfig config;
  config.name = "web";
  config.url = "http://127.0.0.1:" + std::to_string(port) + "/mcp";
  config.headers = {{"X-Api-Key", "header-secret-123"}};
  config.connect_timeout = 10s;
  config.timeout = 20s;
  ClientOptions options = FastRetries();
  options.keepalive_interval = 300ms;
  auto manager = McpClientManager::Start(registry, {config}, options);
  ASSERT_TRUE(manager->WaitForInitialConnections(20s));
  auto status = *manager->StatusOf("web");
  ASSERT_EQ(status.state, ServerState::kConnected) << status.reason;
  EXPECT_EQ(status.protocol_version, "2025-11-25");
  EXPECT_EQ(status.pid, 0);
  EXPECT_EQ(registry.ResolveToolsetAlias("web"), "mcp-web");

  ToolResult echo = Call(registry, "mcp_web_echo", Json{{"message", "over http"}});
  ASSERT_TRUE(echo.ok()) << echo.text;
  EXPECT_EQ(ParsedText(echo)["result"], "Echo: over http");
  ToolResult structured =
      Dispatched(registry, "mcp_web_get_structured_content", Json{{"location", "Chicago"}});
  ASSERT_TRUE(structured.ok()) << structured.text;
  // Long enough to be wrapped: the model is told it is data from outside.
  EXPECT_EQ(
      structured.text.rfind("<untrusted_tool_result source=\"mcp_web_get_structured_content\">", 0),
      0u)
      << structured.text;
  EXPECT_TRUE(ParsedText(structured).contains("structuredContent")) << structured.text;

  // A 10 s operation: the call's deadline, then its cancel token, end it (had either been
  // ignored, the operation would run its 10 s and succeed). The cancel comes a moment into the
  // call; one that came before it would end the call too, so the moment only shapes the case.
  const Json long_op = {{"duration", 10}, {"steps", 10}};
  ToolResult timed_out = Call(registry, "mcp_web_trigger_long_running_operation", long_op, 400ms);
  EXPECT_EQ(timed_out.status, CallStatus::kTimedOut) << timed_out.text;
  std::stop_source cancel;
  std::jthread canceller([&] {
    std::this_thread::sleep_for(300ms);
    cancel.request_stop();
  });
  ToolResult cancelled =
      Call(registry, "mcp_web_trigger_long_running_operation", long_op, 20s, cancel.get_token());
  EXPECT_EQ(cancelled.status, CallStatus::kCancelled) << cancelled.text;

  // The server dies: the keepalive notices, the tools stay listed but unavailable; a server on
  // the same port again is reconnected to.
  server->Kill();
  ASSERT_TRUE(
      WaitUntil([&] { return manager->StatusOf("web")->state == ServerState::kUnavailable; }, 5s));
  EXPECT_TRUE(registry.GetEntry("mcp_web_echo"));
  EXPECT_FALSE(registry.CheckAvailability("mcp_web_echo").available);
  EXPECT_EQ(manager->StatusOf("web")->reason.find("header-secret-123"), std::string::npos);
  server = std::make_unique<EverythingOverHttp>(port);
  ASSERT_EQ(server->WaitForPort(), port);
  ASSERT_TRUE(WaitUntil(
      [&] {
        auto s = manager->StatusOf("web");
        return s->state == ServerState::kConnected && s->connections >= 2;
      },
      20s))
      << manager->StatusOf("web")->reason;
  ToolResult again = Call(registry, "mcp_web_echo", Json{{"message", "back"}});
  ASSERT_TRUE(again.ok()) << again.text;
  EXPECT_EQ(ParsedText(again)["result"], "Echo: back");
  manager->Shutdown();
}

TEST(McpClient, IncludeAndExcludeFilters) {
  REQUIRE_EVERYTHING_SERVER();
  Registry registry;
  ServerConfig only = Everything("inc");
  only.tools.include = std::vector<std::string>{"echo", "get-s*"};
  ServerConfig except = Everything("exc");
  except.tools.exclude = {"echo"};
  auto manager = McpClientManager::Start(registry, {only, except}, FastRetries());
  ASSERT_TRUE(manager->WaitForInitialConnections(20s));
  const auto inc = registry.ToolsOfToolset("mcp-inc");
  EXPECT_EQ(inc, (std::vector<std::string>{"mcp_inc_echo", "mcp_inc_get_structured_content",
                                           "mcp_inc_get_sum"}));
  const auto exc = registry.ToolsOfToolset("mcp-exc");
  EXPECT_EQ(std::find(exc.begin(), exc.end(), "mcp_exc_echo"), exc.end());
  EXPECT_NE(std::find(exc.begin(), exc.end(), "mcp_exc_get_sum"), exc.end());
}

TEST(McpClient, MissingCommandIsUnavailableWithReason) {
  Registry registry;
  ServerConfig missing;
  missing.name = "ghost";
  missing.command = "/nonexistent/talaria-mcp-server";
  ServerConfig http;
  http.name = "remote";
  http.url = "ftp://example.invalid/mcp";
  http.unusable_reason = "'url' must start with http:// or https://";
  ServerConfig off = missing;
  off.name = "off";
  off.enabled = false;
  ClientOptions options = FastRetries();
  options.failures_before_break = 2;
  auto manager = McpClientManager::Start(registry, {missing, http, off}, options);
  ASSERT_TRUE(manager->WaitForInitialConnections(5s));
  EXPECT_EQ(manager->StatusOf("remote")->reason, "'url' must start with http:// or https://");
  EXPECT_EQ(manager->StatusOf("off")->state, ServerState::kDisabled);
  // The circuit opens after two failures in a row (between attempts the state may briefly read
  // "connecting"; once open it stays unavailable with the last reason).
  ASSERT_TRUE(WaitUntil([&] { return manager->StatusOf("ghost")->circuit_open; }, 3s));
  auto ghost = *manager->StatusOf("ghost");
  EXPECT_EQ(ghost.state, ServerState::kUnavailable);
  EXPECT_NE(ghost.reason.find("/nonexistent/talaria-mcp-server"), std::string::npos)
      << ghost.reason;
  EXPECT_TRUE(registry.ToolsetNames().empty());
}

TEST(McpClientConfig, ParsesServersAndReportsBadEntries) {
  const Json section = Json::parse(R"({
    "fs": {"command": "npx", "args": ["-y", "server"], "env": {"K": "v"}, "timeout": 12,
           "connect_timeout": 3.5, "tools": {"include": ["read_*"], "exclude": ["x"]}},
    "web": {"url": "https://h/mcp", "headers": {"Authorization": "Bearer t"}},
    "mixed": {"url": "https://h/mcp", "args": ["x"]},
    "ftp": {"url": "ftp://h/mcp"},
    "off": {"command": "x", "enabled": false},
    "bad": {"command": 3},
    "empty": {}
  })");
  auto servers = ParseServerConfigs(section);
  ASSERT_TRUE(servers) << servers.error().ToString();
  ASSERT_EQ(servers->size(), 7u);
  const ServerConfig& fs = (*servers)[0];
  EXPECT_EQ(fs.name, "fs");
  EXPECT_EQ(fs.unusable_reason, "");
  EXPECT_EQ(fs.args, (std::vector<std::string>{"-y", "server"}));
  EXPECT_EQ(fs.env.at("K"), "v");
  EXPECT_EQ(fs.timeout, 12s);
  EXPECT_EQ(fs.connect_timeout, 3500ms);
  EXPECT_TRUE(fs.tools.Allows("read_file"));
  EXPECT_FALSE(fs.tools.Allows("write_file"));
  EXPECT_EQ((*servers)[1].unusable_reason, "");
  EXPECT_EQ((*servers)[1].headers.at("Authorization"), "Bearer t");
  EXPECT_EQ((*servers)[2].unusable_reason,
            "'args' and 'env' are for 'command' servers, not 'url' ones");
  EXPECT_EQ((*servers)[3].unusable_reason, "'url' must start with http:// or https://");
  EXPECT_FALSE((*servers)[4].enabled);
  EXPECT_EQ((*servers)[5].unusable_reason, "'command' must be a string");
  EXPECT_EQ((*servers)[6].unusable_reason, "no 'command' given");
  EXPECT_FALSE(ParseServerConfigs(Json::array()));
  EXPECT_TRUE(ParseServerConfigs(Json())->empty());
  ServerConfig defaults;
  EXPECT_EQ(defaults.timeout, 300s);
  EXPECT_EQ(defaults.connect_timeout, 60s);
}

TEST(McpClientConfig, NamesFiltersAndSchemas) {
  EXPECT_EQ(McpToolName("my-server", "get.thing/x"), "mcp_my_server_get_thing_x");
  ToolFilter empty_include;
  empty_include.include = std::vector<std::string>{};
  empty_include.exclude = {"nothing"};
  EXPECT_FALSE(empty_include.Allows("echo"));  // [] = none; include wins over exclude
  EXPECT_EQ(client_internal::NormalizeInputSchema(Json()),
            Json::parse(R"({"type":"object","properties":{}})"));
  EXPECT_EQ(client_internal::NormalizeInputSchema(Json::parse(R"({"required":[]})")),
            Json::parse(R"({"required":[],"type":"object","properties":{}})"));
  // Names that collide after sanitizing are both skipped (fail closed).
  std::vector<std::string> skipped;
  auto defs = client_internal::BuildToolDefs(
      "s", {Json{{"name", "a-b"}}, Json{{"name", "a_b"}}, Json{{"name", "c"}}}, ToolFilter{},
      &skipped);
  ASSERT_EQ(defs.size(), 1u);
  EXPECT_EQ(defs[0].name, "mcp_s_c");
  EXPECT_EQ(skipped.size(), 2u);
}

TEST(McpClientConfig, RendersResultsAndRedactsErrors) {
  ToolResult ok = client_internal::RenderCallResult(Json::parse(
      R"({"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}],"structuredContent":{"n":1}})"));
  EXPECT_TRUE(ok.ok());
  EXPECT_EQ(Json::parse(ok.text), Json::parse(R"({"result":"a\nb","structuredContent":{"n":1}})"));
  ToolResult err = client_internal::RenderCallResult(Json::parse(
      R"({"isError":true,"content":[{"type":"text","text":"auth failed for token ghp_abcdefghijklmnopqrstuvwxyz0123456789"}]})"));
  EXPECT_EQ(err.status, CallStatus::kError);
  const std::string message = Json::parse(err.text)["error"].get<std::string>();
  EXPECT_EQ(message.rfind("MCP call failed: ", 0), 0u);
  EXPECT_EQ(message.find("ghp_abcdefghijklmnopqrstuvwxyz0123456789"), std::string::npos) << message;
}

}  // namespace
}  // namespace talaria::mcp
