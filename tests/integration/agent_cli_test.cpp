// `talaria run` and `talaria sessions` as a user runs them, against the scripted
// OpenAI-compatible server (tests/support/fake_llm_server.h): what the user sees (stdout,
// stderr, exit codes, files changed) and what the server received (every request valid: roles
// in order, every tool call answered exactly once).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent_process.h"
#include "cli_harness.h"
#include "scripted_llm.h"
#include "support/fake_llm_server.h"
#include "support/wait_until.h"

namespace talaria::testing_cli {
namespace {

using test_support::FakeJson;
using test_support::FakeLlmServer;

FakeJson ToolTurn(const std::string& id, const std::string& name, const FakeJson& args) {
  return FakeJson{{"tool_calls", FakeJson::array({FakeJson{
                                     {"id", id}, {"name", name}, {"arguments", args.dump()}}})}};
}

FakeJson TextTurn(const std::string& text) { return FakeJson{{"text", text}}; }

class AgentCli : public ::testing::Test {
 protected:
  void SetUp() override {
    project_ = home_.path() + "/project";
    std::filesystem::create_directories(project_);
  }

  CliInvocation How(std::chrono::seconds timeout = std::chrono::seconds(30)) const {
    CliInvocation how;
    how.home = home_.path();
    how.cwd = project_;
    how.timeout = timeout;
    // No key: the fake needs none, and the machine's own must not leak into a test.
    how.extra_env = {"TALARIA_API_KEY=", "OPENAI_API_KEY="};
    return how;
  }

  std::vector<std::string> RunArgs(const FakeLlmServer& server, std::vector<std::string> rest) {
    std::vector<std::string> args{"run", "--base-url", server.base_url(), "--model", "fake-model"};
    args.insert(args.end(), rest.begin(), rest.end());
    return args;
  }

  TempHome home_;
  std::string project_;
};

TEST_F(AgentCli, RunPrintsTheAnswerAndExitsZero) {
  auto server =
      StartScriptedLlm(FakeJson{{"turns", FakeJson::array({TextTurn("Hello from the model.")})}});
  ASSERT_TRUE(server);
  const auto args = RunArgs(*server, {"say hello"});
  const CliRun run = RunTalaria(How(), args);
  EXPECT_EQ(run.exit_code, 0) << Describe(args, run);
  EXPECT_NE(run.out.find("Hello from the model."), std::string::npos) << Describe(args, run);
  ASSERT_EQ(server->requests().size(), 1u);
  const FakeJson request = server->requests()[0].Json();
  const FakeJson& messages = request["messages"];
  ASSERT_GE(messages.size(), 2u);
  EXPECT_EQ(messages.front()["role"], "system");
  EXPECT_EQ(messages.back()["role"], "user");
  EXPECT_EQ(messages.back()["content"], "say hello");
  EXPECT_TRUE(request.contains("tools") && !request["tools"].empty());
  EXPECT_EQ(server->ProblemsText(), "");
}

TEST_F(AgentCli, RunReadsPatchesAndTestsAProject) {
  std::ofstream(project_ + "/calc.sh") << "add() { echo $(($1 - $2)); }\n";
  std::ofstream(project_ + "/test.sh")
      << ". ./calc.sh\n[ \"$(add 2 3)\" = 5 ] && echo PASS || { echo FAIL; exit 1; }\n";
  auto server = StartScriptedLlm(FakeJson{
      {"turns",
       FakeJson::array({ToolTurn("call_read", "read_file", FakeJson{{"path", "calc.sh"}}),
                        ToolTurn("call_patch", "patch",
                                 FakeJson{{"path", "calc.sh"},
                                          {"old_string", "$1 - $2"},
                                          {"new_string", "$1 + $2"}}),
                        ToolTurn("call_test", "terminal", FakeJson{{"command", "sh test.sh"}}),
                        FakeJson{{"text", "Fixed: add() subtracted; the test passes."},
                                 {"expect", FakeJson{{"last_role", "tool"},
                                                     {"last_tool_call_id", "call_test"},
                                                     {"last_content_contains", "PASS"}}}}})}});
  ASSERT_TRUE(server);
  const auto args = RunArgs(*server, {"fix add() so test.sh passes"});
  const CliRun run = RunTalaria(How(std::chrono::seconds(60)), args);
  EXPECT_EQ(run.exit_code, 0) << Describe(args, run);
  EXPECT_NE(run.out.find("the test passes"), std::string::npos) << Describe(args, run);
  // One line per tool call on stderr, with its name and status.
  for (const char* tool : {"read_file", "patch", "terminal"}) {
    EXPECT_NE(run.err.find(tool), std::string::npos) << Describe(args, run);
  }
  std::ifstream patched(project_ + "/calc.sh");
  std::string text((std::istreambuf_iterator<char>(patched)), {});
  EXPECT_NE(text.find("$1 + $2"), std::string::npos) << text;
  EXPECT_EQ(server->requests().size(), 4u);
  EXPECT_EQ(server->ProblemsText(), "");
}

TEST_F(AgentCli, RunJsonPrintsOneEventPerLine) {
  std::ofstream(project_ + "/notes.txt") << "alpha\n";
  auto server = StartScriptedLlm(FakeJson{
      {"turns", FakeJson::array({ToolTurn("call_1", "read_file", FakeJson{{"path", "notes.txt"}}),
                                 TextTurn("It says alpha.")})}});
  ASSERT_TRUE(server);
  const auto args = RunArgs(*server, {"--json", "what do the notes say?"});
  const CliRun run = RunTalaria(How(), args);
  EXPECT_EQ(run.exit_code, 0) << Describe(args, run);
  std::vector<std::string> types;
  std::string text;
  for (const std::string& line : SplitLines(run.out)) {
    const FakeJson event = FakeJson::parse(line, nullptr, false);
    ASSERT_FALSE(event.is_discarded()) << "not JSON: " << line;
    types.push_back(event.value("type", ""));
    if (types.back() == "text") text += event.value("delta", "");
    if (types.back() == "tool_call_finished") {
      EXPECT_EQ(event["name"], "read_file");
      EXPECT_EQ(event["status"], "ok");
      EXPECT_TRUE(event["duration_ms"].is_number_integer());
    }
    if (types.back() == "turn_completed") {
      EXPECT_EQ(event["exit"], "answered");
      EXPECT_TRUE(event["usage"].is_object());
    }
  }
  ASSERT_GE(types.size(), 5u) << run.out;
  EXPECT_EQ(types.front(), "session_started");
  EXPECT_EQ(types.back(), "session_ended");
  auto position = [&](const std::string& type) {
    return std::find(types.begin(), types.end(), type) - types.begin();
  };
  EXPECT_LT(position("turn_started"), position("tool_call_started"));
  EXPECT_LT(position("tool_call_started"), position("tool_call_finished"));
  EXPECT_LT(position("tool_call_finished"), position("turn_completed"));
  EXPECT_EQ(text, "It says alpha.");
  EXPECT_EQ(server->ProblemsText(), "");
}

TEST_F(AgentCli, RunAgainstAnUnreachableEndpointSaysSoOnce) {
  // A port nothing listens on: bind one, then close it.
  int port = 0;
  {
    auto probe = StartScriptedLlm(FakeJson{{"turns", FakeJson::array()}});
    ASSERT_TRUE(probe);
    port = probe->port();
  }
  const std::string url = "http://127.0.0.1:" + std::to_string(port) + "/v1";
  const CliInvocation how = How(std::chrono::seconds(90));
  const std::vector<std::string> args{"run", "--base-url", url, "--model", "m", "hello"};
  const CliRun run = RunTalaria(how, args);
  EXPECT_EQ(run.exit_code, 1) << Describe(args, run);
  EXPECT_NE(run.err.find("127.0.0.1:" + std::to_string(port)), std::string::npos)
      << Describe(args, run);
  EXPECT_TRUE(run.out.empty()) << Describe(args, run);
}

// The done-when of issue 20: a base URL and (here, no) key is all `talaria run` needs; the
// model is left to a server that serves one.
TEST_F(AgentCli, RunNeedsOnlyTheBaseUrl) {
  // A local server that serves one model (llama.cpp, vLLM): a request without one is fine.
  auto server = StartScriptedLlm(
      FakeJson{{"lenient", FakeJson::array({"missing_model"})},
               {"turns", FakeJson::array({TextTurn("served by the default model")})}});
  ASSERT_TRUE(server);
  CliInvocation how = How();
  how.extra_env.push_back("TALARIA_MODEL=");
  const std::vector<std::string> args{"run", "--base-url", server->base_url(), "hello"};
  const CliRun run = RunTalaria(how, args);
  EXPECT_EQ(run.exit_code, 0) << Describe(args, run);
  EXPECT_NE(run.out.find("served by the default model"), std::string::npos);
  ASSERT_EQ(server->requests().size(), 1u);
  const FakeJson request = server->requests()[0].Json();
  EXPECT_FALSE(request.contains("model") && !request["model"].get<std::string>().empty())
      << request.dump();
  EXPECT_EQ(server->ProblemsText(), "");
}

TEST_F(AgentCli, RunWithABadFlagIsAUsageError) {
  const CliRun run = RunTalaria(How(), {"run", "--max-iterations", "0", "hello"});
  EXPECT_EQ(run.exit_code, 2) << run.err;
  const CliRun both = RunTalaria(How(), {"run", "--resume", "x", "--continue", "hello"});
  EXPECT_EQ(both.exit_code, 2) << both.err;
  EXPECT_NE(both.err.find("--continue"), std::string::npos) << both.err;
  const CliRun unknown = RunTalaria(How(), {"run", "--resume", "19990101_000000_abcdef",
                                            "--base-url", "http://127.0.0.1:9/v1", "hello"});
  EXPECT_EQ(unknown.exit_code, 2) << unknown.err;
}

// The iteration budget from config.yaml's agent section: spent, the last request goes without
// tools for a summary, and run exits 1 saying so.
TEST_F(AgentCli, TheConfiguredIterationBudgetEndsARunawayTurn) {
  std::ofstream(project_ + "/a.txt") << "a\n";
  home_.WriteConfig("agent:\n  max_iterations: 2\n");
  auto server = StartScriptedLlm(
      FakeJson{{"turns", FakeJson::array({ToolTurn("c1", "read_file", FakeJson{{"path", "a.txt"}}),
                                          ToolTurn("c2", "read_file", FakeJson{{"path", "a.txt"}}),
                                          FakeJson{{"text", "Summary: I read a.txt twice."},
                                                   {"expect", FakeJson{{"no_tools", true}}}}})}});
  ASSERT_TRUE(server);
  const auto args = RunArgs(*server, {"read forever"});
  const CliRun run = RunTalaria(How(), args);
  EXPECT_EQ(run.exit_code, 1) << Describe(args, run);
  EXPECT_NE(run.out.find("Summary: I read a.txt twice."), std::string::npos) << Describe(args, run);
  EXPECT_NE(run.err.find("iteration budget"), std::string::npos) << Describe(args, run);
  EXPECT_EQ(server->requests().size(), 3u);
  EXPECT_EQ(server->ProblemsText(), "");

  home_.WriteConfig("agent:\n  max_iterations: none\n");
  const CliRun bad = RunTalaria(How(), RunArgs(*server, {"hello"}));
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("agent.max_iterations"), std::string::npos) << bad.err;
}

TEST_F(AgentCli, ContinueResumesTheLatestSessionOfThisDirectory) {
  auto server = StartScriptedLlm(FakeJson{
      {"turns", FakeJson::array(
                    {TextTurn("first answer"),
                     FakeJson{{"text", "second answer"},
                              {"expect", FakeJson{{"any_content_contains", "first answer"}}}}})}});
  ASSERT_TRUE(server);
  const auto first = RunArgs(*server, {"first question"});
  const CliRun run1 = RunTalaria(How(), first);
  ASSERT_EQ(run1.exit_code, 0) << Describe(first, run1);
  const auto second = RunArgs(*server, {"--continue", "second question"});
  const CliRun run2 = RunTalaria(How(), second);
  EXPECT_EQ(run2.exit_code, 0) << Describe(second, run2);
  EXPECT_NE(run2.out.find("second answer"), std::string::npos);
  ASSERT_EQ(server->requests().size(), 2u);
  // The second request carries the whole first exchange, then the new question.
  const FakeJson messages = server->requests()[1].Json()["messages"];
  std::vector<std::string> roles;
  for (const auto& m : messages) roles.push_back(m["role"]);
  EXPECT_EQ(roles, (std::vector<std::string>{"system", "user", "assistant", "user"}));
  EXPECT_EQ(server->ProblemsText(), "");
}

TEST_F(AgentCli, SessionsListShowUsageAndDelete) {
  auto server = StartScriptedLlm(
      FakeJson{{"turns", FakeJson::array({FakeJson{{"text", "counted"},
                                                   {"usage", FakeJson{{"prompt_tokens", 120},
                                                                      {"completion_tokens", 30},
                                                                      {"total_tokens", 150}}}}})}});
  ASSERT_TRUE(server);
  const auto args = RunArgs(*server, {"count tokens"});
  ASSERT_EQ(RunTalaria(How(), args).exit_code, 0);

  const CliRun list = RunTalaria(How(), {"sessions", "list", "--json"});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  const FakeJson sessions = FakeJson::parse(list.out, nullptr, false);
  ASSERT_TRUE(sessions.is_array() && sessions.size() == 1) << list.out;
  const std::string id = sessions[0]["id"];
  EXPECT_EQ(sessions[0]["model"], "fake-model");
  EXPECT_EQ(sessions[0]["usage"]["input_tokens"], 120);
  EXPECT_EQ(sessions[0]["usage"]["output_tokens"], 30);

  const CliRun show = RunTalaria(How(), {"sessions", "show", id, "--json"});
  ASSERT_EQ(show.exit_code, 0) << show.err;
  const FakeJson shown = FakeJson::parse(show.out, nullptr, false);
  std::vector<std::string> roles;
  for (const auto& m : shown["messages"]) roles.push_back(m["role"]);
  EXPECT_NE(std::find(roles.begin(), roles.end(), "user"), roles.end()) << show.out;
  EXPECT_EQ(roles.back(), "assistant") << show.out;

  const CliRun usage = RunTalaria(How(), {"sessions", "usage", id, "--json"});
  ASSERT_EQ(usage.exit_code, 0) << usage.err;
  const FakeJson per_request = FakeJson::parse(usage.out, nullptr, false);
  ASSERT_EQ(per_request["requests"].size(), 1u) << usage.out;
  EXPECT_EQ(per_request["total"]["input_tokens"], 120);

  const CliRun table = RunTalaria(How(), {"sessions", "list"});
  EXPECT_NE(table.out.find(id), std::string::npos) << table.out;

  EXPECT_EQ(RunTalaria(How(), {"sessions", "delete", id}).exit_code, 0);
  const CliRun gone = RunTalaria(How(), {"sessions", "show", id});
  EXPECT_EQ(gone.exit_code, 2) << gone.out << gone.err;
  EXPECT_EQ(RunTalaria(How(), {"sessions", "delete", id}).exit_code, 2);
}

TEST_F(AgentCli, CtrlCStopsTheTurnAndTheSessionGoesOn) {
  auto server = StartScriptedLlm(FakeJson{
      {"turns",
       FakeJson::array(
           {FakeJson{{"text", "this answer takes a long time to arrive"},
                     {"fault", FakeJson{{"kind", "stall"}, {"after_events", 1}, {"ms", 60000}}}},
            TextTurn("resumed fine")})}});
  ASSERT_TRUE(server);
  TalariaProcess talaria(How(), RunArgs(*server, {"a slow question"}));
  ASSERT_TRUE(test_support::WaitUntil([&] { return server->requests().size() == 1; },
                                      std::chrono::seconds(20)));
  talaria.Signal(SIGINT);
  const std::optional<int> code = talaria.Wait(std::chrono::seconds(15));
  ASSERT_TRUE(code.has_value()) << "talaria ignored Ctrl-C";
  EXPECT_EQ(*code, 130) << talaria.err();

  const auto args = RunArgs(*server, {"--continue", "go on"});
  const CliRun run = RunTalaria(How(), args);
  EXPECT_EQ(run.exit_code, 0) << Describe(args, run);
  EXPECT_NE(run.out.find("resumed fine"), std::string::npos);
  EXPECT_EQ(server->ProblemsText(), "");
}

}  // namespace
}  // namespace talaria::testing_cli
