// `talaria mcp --http 127.0.0.1:0` as a client sees it: a real process serving Streamable HTTP on
// an ephemeral loopback port (read off its stderr), driven by cpp-httplib's client, stopped by
// SIGTERM.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "cli_harness.h"
#include "mcp_process.h"
#include "scripted_llm.h"
#include "talaria/base/spawn.h"

namespace talaria {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using testing_cli::TempHome;
using namespace std::chrono_literals;

// One running `talaria mcp --http ...`.
class HttpMcpProcess : public testing_cli::McpProcessBase {
 public:
  HttpMcpProcess(const std::string& home, const std::string& cwd,
                 const std::vector<std::string>& args,
                 const std::vector<std::string>& extra_env = {})
      : McpProcessBase(home, cwd, args, /*stdin_pipe=*/false, extra_env) {}

  // The port from the "serving ... at http://127.0.0.1:PORT/mcp" line; 0 if it never came.
  int WaitForPort(std::chrono::milliseconds timeout = 5s) {
    const std::string marker = "at http://127.0.0.1:";
    const auto until = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < until) {
      const std::string err = Stderr();
      if (size_t at = err.find(marker); at != std::string::npos) {
        const size_t start = at + marker.size();
        const size_t end = err.find("/mcp", start);
        if (end != std::string::npos) return std::stoi(err.substr(start, end - start));
      }
      if (Exited()) return 0;
      std::this_thread::sleep_for(10ms);
    }
    return 0;
  }
};

using testing_cli::Request;

// initialize, then notifications/initialized, over `client`: the headers of requests in the new
// session; empty (and the test failed) when the server did not open one.
httplib::Headers OpenHttpMcpSession(httplib::Client& client) {
  const httplib::Headers accept = {{"Accept", "application/json, text/event-stream"}};
  auto init = client.Post("/mcp", accept,
                          Request(1, "initialize",
                                  {{"protocolVersion", "2025-11-25"},
                                   {"capabilities", json::object()},
                                   {"clientInfo", {{"name", "it"}, {"version", "1"}}}})
                              .dump(),
                          "application/json");
  if (!init || init->status != 200) {
    ADD_FAILURE() << "initialize: " << (init ? init->body : httplib::to_string(init.error()));
    return {};
  }
  EXPECT_EQ(json::parse(init->body)["result"]["serverInfo"]["name"], "talaria");
  const std::string session = init->get_header_value("Mcp-Session-Id");
  EXPECT_FALSE(session.empty()) << "no Mcp-Session-Id";
  httplib::Headers in_session = accept;
  in_session.emplace("Mcp-Session-Id", session);
  in_session.emplace("Mcp-Protocol-Version", "2025-11-25");
  auto initialized =
      client.Post("/mcp", in_session, R"({"jsonrpc":"2.0","method":"notifications/initialized"})",
                  "application/json");
  if (!initialized || initialized->status != 202) {
    ADD_FAILURE() << "notifications/initialized was not accepted";
    return {};
  }
  return in_session;
}

TEST(McpHttp, ServesInitializeToolsCallAndDeleteThenStopsOnSigterm) {
  TempHome home;
  const std::string root = home.path() + "/root";
  std::filesystem::create_directories(root);
  std::ofstream(root + "/a.txt") << "alpha over http\n";

  HttpMcpProcess mcp(home.path(), root, {"--http", "127.0.0.1:0", "--root", root});
  const int port = mcp.WaitForPort();
  ASSERT_GT(port, 0) << "no URL on stderr: " << mcp.Stderr();

  httplib::Client client("127.0.0.1", port);
  client.set_tcp_nodelay(true);
  client.set_connection_timeout(2, 0);
  client.set_read_timeout(5, 0);
  const httplib::Headers in_session = OpenHttpMcpSession(client);
  ASSERT_FALSE(in_session.empty()) << mcp.Stderr();

  auto read = client.Post(
      "/mcp", in_session,
      Request(2, "tools/call", {{"name", "read_file"}, {"arguments", {{"path", "a.txt"}}}}).dump(),
      "application/json");
  ASSERT_TRUE(read);
  ASSERT_EQ(read->status, 200) << read->body;
  json result = json::parse(read->body);
  EXPECT_EQ(result["id"], 2);
  EXPECT_THAT(result["result"]["content"][0]["text"].get<std::string>(),
              HasSubstr("alpha over http"));

  auto deleted = client.Delete("/mcp", in_session);
  ASSERT_TRUE(deleted);
  EXPECT_EQ(deleted->status, 200);
  auto gone = client.Post("/mcp", in_session, Request(3, "ping").dump(), "application/json");
  ASSERT_TRUE(gone);
  EXPECT_EQ(gone->status, 404);

  mcp.Signal(SIGTERM);
  EXPECT_EQ(mcp.Wait(), 128 + SIGTERM) << mcp.Stderr();
}

// Issue 17, finding 9: a page on another local port is not the server's origin; --allow-origin
// admits one by name.
TEST(McpHttp, AcceptsItsOwnOriginAndAllowOriginOnly) {
  TempHome home;
  const std::string root = home.path() + "/root";
  std::filesystem::create_directories(root);
  HttpMcpProcess mcp(
      home.path(), root,
      {"--http", "127.0.0.1:0", "--root", root, "--allow-origin", "http://localhost:5173"});
  const int port = mcp.WaitForPort();
  ASSERT_GT(port, 0) << "no URL on stderr: " << mcp.Stderr();
  httplib::Client client("127.0.0.1", port);
  client.set_tcp_nodelay(true);
  client.set_connection_timeout(2, 0);
  client.set_read_timeout(5, 0);
  const std::string init = Request(1, "initialize",
                                   {{"protocolVersion", "2025-11-25"},
                                    {"capabilities", json::object()},
                                    {"clientInfo", {{"name", "it"}, {"version", "1"}}}})
                               .dump();
  auto status_for = [&](const std::string& origin) {
    auto r =
        client.Post("/mcp", {{"Accept", "application/json, text/event-stream"}, {"Origin", origin}},
                    init, "application/json");
    return r ? r->status : 0;
  };
  EXPECT_EQ(status_for("http://localhost:9999"), 403);
  EXPECT_EQ(status_for("http://127.0.0.1:" + std::to_string(port)), 200);
  EXPECT_EQ(status_for("http://localhost:5173"), 200);
  mcp.Signal(SIGTERM);
  EXPECT_EQ(mcp.Wait(), 128 + SIGTERM) << mcp.Stderr();
}

// The JSON-RPC response a POST got: the body itself, or the stream's event that answers.
json HttpMcpResponse(const httplib::Result& r) {
  if (!r) return json();
  if (r->get_header_value("Content-Type").rfind("text/event-stream", 0) != 0) {
    return json::parse(r->body, nullptr, /*allow_exceptions=*/false);
  }
  json answer;
  std::istringstream events(r->body);
  for (std::string line; std::getline(events, line);) {
    if (line.rfind("data:", 0) != 0) continue;
    json event = json::parse(line.substr(5), nullptr, /*allow_exceptions=*/false);
    if (!event.is_discarded() && event.contains("id") && !event.contains("method")) answer = event;
  }
  return answer;
}

// mixture_of_agents over Streamable HTTP: a client's tools/call reaches the moa: section's models
// (the scripted server checks each request) and the aggregator's answer comes back.
TEST(McpHttp, ServesMixtureOfAgentsFromItsConfiguredModels) {
  auto llm = testing_cli::StartScriptedLlm(test_support::FakeJson::parse(R"({"turns": [
    {"match": {"model": "ref-a"},
     "expect": {"last_content_contains": "PROBLEM over http",
                "header_contains": "Authorization: Bearer sk-moa-http",
                "fields": {"max_tokens": 32000}},
     "text": "answer a"},
    {"match": {"model": "agg"},
     "expect": {"system_contains": "1. answer a", "fields": {"max_tokens": null}},
     "text": "combined over http"}]})"));
  ASSERT_TRUE(llm);
  TempHome home;
  home.WriteConfig("moa:\n  base_url: " + llm->base_url() +
                   "\n  api_key_env: TALARIA_IT_MOA_HTTP_KEY\n  max_retries: 0\n"
                   "  reference_models: [ref-a]\n  aggregator: agg\n");
  HttpMcpProcess mcp(home.path(), home.path(), {"--http", "127.0.0.1:0", "--toolsets", "moa"},
                     {"TALARIA_IT_MOA_HTTP_KEY=sk-moa-http"});
  const int port = mcp.WaitForPort();
  ASSERT_GT(port, 0) << "no URL on stderr: " << mcp.Stderr();
  httplib::Client client("127.0.0.1", port);
  client.set_tcp_nodelay(true);
  client.set_connection_timeout(2, 0);
  client.set_read_timeout(60, 0);  // a hang guard only
  const httplib::Headers in_session = OpenHttpMcpSession(client);
  ASSERT_FALSE(in_session.empty()) << mcp.Stderr();

  json list = HttpMcpResponse(
      client.Post("/mcp", in_session, Request(2, "tools/list").dump(), "application/json"));
  ASSERT_EQ(list["result"]["tools"].size(), 1u) << list.dump();
  EXPECT_EQ(list["result"]["tools"][0]["name"], "mixture_of_agents");
  json call =
      HttpMcpResponse(client.Post("/mcp", in_session,
                                  Request(3, "tools/call",
                                          {{"name", "mixture_of_agents"},
                                           {"arguments", {{"user_prompt", "PROBLEM over http"}}}})
                                      .dump(),
                                  "application/json"));
  ASSERT_TRUE(call.contains("result")) << call.dump() << "\nstderr: " << mcp.Stderr();
  EXPECT_FALSE(call["result"].value("isError", false)) << call.dump();
  const json answer = json::parse(call["result"]["content"][0]["text"].get<std::string>());
  EXPECT_EQ(answer["response"], "combined over http") << answer.dump();
  EXPECT_EQ(llm->ProblemsText(), "");
  EXPECT_EQ(llm->turns_remaining(), 0u);
  mcp.Signal(SIGTERM);
  EXPECT_EQ(mcp.Wait(), 128 + SIGTERM) << mcp.Stderr();
}

TEST(McpHttp, RefusesANonLoopbackAddressWithoutAToken) {
  TempHome home;
  const std::vector<std::string> args = {"mcp", "--http", "0.0.0.0:0"};
  testing_cli::CliInvocation how;
  how.home = home.path();
  how.timeout = std::chrono::seconds(5);
  auto run = testing_cli::RunTalaria(how, args);
  EXPECT_EQ(run.exit_code, 2) << testing_cli::Describe(args, run);
  EXPECT_THAT(run.err, HasSubstr("--token"));
  EXPECT_THAT(run.err, HasSubstr("not a loopback address"));
}

TEST(McpHttp, RefusesABadAddress) {
  TempHome home;
  const std::vector<std::string> args = {"mcp", "--http", "127.0.0.1:99999"};
  testing_cli::CliInvocation how;
  how.home = home.path();
  how.timeout = std::chrono::seconds(5);
  auto run = testing_cli::RunTalaria(how, args);
  EXPECT_EQ(run.exit_code, 2) << testing_cli::Describe(args, run);
  EXPECT_THAT(run.err, HasSubstr("--http"));
}

}  // namespace
}  // namespace talaria
