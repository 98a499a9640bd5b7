// session_search end to end (issue 21): `talaria run` finds an earlier session by a word from
// it (the scripted OpenAI-compatible server calls the tool and checks the result it gets back),
// and `talaria mcp --toolsets session_search` serves the same search to an MCP client over
// stdio, read-only over the same sessions database.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_harness.h"
#include "mcp_process.h"
#include "scripted_llm.h"
#include "support/fake_llm_server.h"

namespace talaria::testing_cli {
namespace {

using nlohmann::json;
using test_support::FakeJson;
using test_support::FakeLlmServer;
using namespace std::chrono_literals;

// The JSON inside a tools/call answer's text (recalled text arrives wrapped as untrusted).
json Recalled(const json& answer) {
  const std::string text = answer["result"]["content"][0]["text"].get<std::string>();
  const size_t open = text.find('{'), close = text.rfind('}');
  if (open == std::string::npos || close == std::string::npos) return json();
  return json::parse(text.substr(open, close - open + 1), nullptr, false);
}

FakeJson SearchTurn(const FakeJson& args) {
  return FakeJson{{"tool_calls", FakeJson::array({FakeJson{{"id", "call_recall"},
                                                           {"name", "session_search"},
                                                           {"arguments", args.dump()}}})}};
}

class SessionSearchCli : public ::testing::Test {
 protected:
  void SetUp() override {
    project_ = home_.path() + "/project";
    std::filesystem::create_directories(project_);
  }
  CliInvocation How() const {
    CliInvocation how;
    how.home = home_.path();
    how.cwd = project_;
    how.timeout = std::chrono::seconds(30);
    how.extra_env = {"TALARIA_API_KEY=", "OPENAI_API_KEY="};
    return how;
  }
  // One `talaria run` of `prompt` against `script`; the server's problems must be none.
  void Run(const FakeJson& script, const std::string& prompt) {
    auto server = StartScriptedLlm(script);
    ASSERT_TRUE(server);
    const std::vector<std::string> args{"run",     "--base-url", server->base_url(),
                                        "--model", "fake-model", prompt};
    const CliRun run = RunTalaria(How(), args);
    EXPECT_EQ(run.exit_code, 0) << Describe(args, run);
    EXPECT_EQ(server->ProblemsText(), "")
        << Describe(args, run) << "\nlast request: "
        << (server->requests().empty() ? "" : server->requests().back().Json().dump());
  }
  // The earlier session: a word only it holds.
  void RememberCapybara() {
    Run(FakeJson{{"turns", FakeJson::array({FakeJson{
                               {"text", "Noted: the capybara service listens on port 8443."}}})}},
        "remember that the capybara service listens on port 8443");
  }

  TempHome home_;
  std::string project_;
};

TEST_F(SessionSearchCli, RunFindsAnEarlierSessionByAWordFromIt) {
  RememberCapybara();
  // The next session: the model searches, and its next request must carry a tool result
  // holding the earlier session's text (the server checks, and fails the run otherwise).
  Run(FakeJson{{"turns",
                FakeJson::array(
                    {SearchTurn(FakeJson{{"query", "capybara"}}),
                     FakeJson{{"text", "It listens on 8443."},
                              {"expect", FakeJson{{"last_role", "tool"},
                                                  {"last_tool_call_id", "call_recall"},
                                                  {"last_content_contains", "port 8443"}}}}})}},
      "which port does the capybara service use?");
  // A word no earlier session said finds nothing, and says why: only the current conversation
  // (the call's own arguments) holds it.
  Run(FakeJson{{"turns", FakeJson::array({SearchTurn(FakeJson{{"query", "okapi"}}),
                                          FakeJson{{"text", "Nothing."},
                                                   {"expect", FakeJson{{"last_role", "tool"},
                                                                       {"last_content_contains",
                                                                        "excluded"}}}}})}},
      "did we ever talk about okapis?");
}

// A minimal MCP client over stdio: a line out, the answer to it back.
class McpClient : public McpProcessBase {
 public:
  McpClient(const std::string& home, const std::string& cwd, const std::vector<std::string>& args)
      : McpProcessBase(home, cwd, args, /*stdin_pipe=*/true) {}
  json Call(int id, const std::string& method, json params = json::object()) {
    const std::string line = Request(id, method, std::move(params)).dump() + "\n";
    EXPECT_EQ(::write(child_.input.get(), line.data(), line.size()),
              static_cast<ssize_t>(line.size()));
    return AnswerTo(id);
  }
  void Notify(const std::string& method) {
    const std::string line = json{{"jsonrpc", "2.0"}, {"method", method}}.dump() + "\n";
    EXPECT_EQ(::write(child_.input.get(), line.data(), line.size()),
              static_cast<ssize_t>(line.size()));
  }
  void CloseInput() { child_.input.reset(); }

 private:
  json AnswerTo(int id, std::chrono::milliseconds timeout = 10s) {
    const auto until = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      for (size_t nl; (nl = buffer_.find('\n')) != std::string::npos;) {
        json m = json::parse(buffer_.substr(0, nl), nullptr, false);
        buffer_.erase(0, nl + 1);
        if (m.is_object() && m.contains("id") && m["id"] == id && !m.contains("method")) return m;
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          until - std::chrono::steady_clock::now());
      if (left.count() <= 0) return json();
      pollfd p{child_.output.get(), POLLIN, 0};
      ::poll(&p, 1, static_cast<int>(left.count()));
      char buf[65536];
      const ssize_t n = ::read(child_.output.get(), buf, sizeof buf);
      if (n <= 0) return json();
      buffer_.append(buf, static_cast<size_t>(n));
    }
  }
  std::string buffer_;
};

TEST_F(SessionSearchCli, McpServesSessionSearchReadOnly) {
  RememberCapybara();
  const std::string db = home_.path() + "/.talaria/sessions.db";
  ASSERT_TRUE(std::filesystem::exists(db));
  McpClient mcp(home_.path(), project_, {"--toolsets", "session_search"});
  json init = mcp.Call(1, "initialize",
                       {{"protocolVersion", "2025-11-25"},
                        {"capabilities", json::object()},
                        {"clientInfo", {{"name", "it"}, {"version", "1"}}}});
  ASSERT_TRUE(init.contains("result")) << init.dump() << mcp.Stderr();
  mcp.Notify("notifications/initialized");
  json list = mcp.Call(2, "tools/list");
  ASSERT_EQ(list["result"]["tools"].size(), 1u) << list.dump();
  EXPECT_EQ(list["result"]["tools"][0]["name"], "session_search");
  EXPECT_EQ(list["result"]["tools"][0]["annotations"]["readOnlyHint"], true);

  json found = mcp.Call(3, "tools/call",
                        {{"name", "session_search"}, {"arguments", {{"query", "capybara"}}}});
  ASSERT_TRUE(found.contains("result")) << found.dump() << mcp.Stderr();
  EXPECT_FALSE(found["result"].value("isError", false)) << found.dump();
  const std::string found_text = found["result"]["content"][0]["text"].get<std::string>();
  EXPECT_NE(found_text.find("<untrusted_tool_result"), std::string::npos)
      << "recalled sessions reach the client marked as outside content: " << found_text;
  const json result = Recalled(found);
  EXPECT_EQ(result["mode"], "discover");
  ASSERT_EQ(result["count"], 1) << result.dump();
  const std::string session = result["results"][0]["session_id"];
  EXPECT_NE(result["results"][0]["snippet"].get<std::string>().find(">>>capybara<<<"),
            std::string::npos);
  // Browse and read work too.
  json browse =
      mcp.Call(4, "tools/call", {{"name", "session_search"}, {"arguments", json::object()}});
  const json listed = Recalled(browse);
  EXPECT_EQ(listed["mode"], "browse");
  EXPECT_EQ(listed["count"], 1);
  json read = mcp.Call(5, "tools/call",
                       {{"name", "session_search"}, {"arguments", {{"session_id", session}}}});
  const json transcript = Recalled(read);
  EXPECT_EQ(transcript["mode"], "read");
  EXPECT_NE(transcript.dump().find("port 8443"), std::string::npos);

  // A session written while the server runs is found too (no restart, no write by the server).
  Run(FakeJson{{"turns", FakeJson::array({FakeJson{{"text", "The marmot cache is warm."}}})}},
      "how is the marmot cache?");
  json later =
      mcp.Call(6, "tools/call", {{"name", "session_search"}, {"arguments", {{"query", "marmot"}}}});
  const json again = Recalled(later);
  EXPECT_EQ(again["count"], 1) << again.dump();
  mcp.CloseInput();
  EXPECT_EQ(mcp.Wait(), 0) << mcp.Stderr();
}

}  // namespace
}  // namespace talaria::testing_cli
