// The loop against the real session store (SQLite in a temp dir) and the scripted
// OpenAI-compatible server over real HTTP: what the caller sees (TurnResult, events) and what
// the server received (every request validated like a strict provider).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/agent_test_util.h"

namespace talaria::agent::testing {
namespace {

using Json = nlohmann::ordered_json;

// The tool messages of a request body, in order.
std::vector<Json> ToolMessages(const Json& body) {
  std::vector<Json> out;
  for (const Json& m : body["messages"]) {
    if (m.value("role", "") == "tool") out.push_back(m);
  }
  return out;
}

std::string Roles(const Json& body) {
  std::string out;
  for (const Json& m : body["messages"]) out += m.value("role", "?").substr(0, 1);
  return out;
}

std::string Roles(const std::vector<store::StoredMessage>& history) {
  std::string out;
  for (const auto& m : history) out += m.role.substr(0, 1);
  return out;
}

using AgentLoop = AgentFixture;

TEST_F(AgentLoop, AnswersWithoutToolsAndPersistsTheTurn) {
  Serve(R"({"turns": [{"expect": {"last_role": "user", "last_content_contains": "hello",
                                   "system_contains": "You are talaria",
                                   "tools_include": ["read_file", "todo", "clarify"],
                                   "tools_exclude": ["memory", "delegate_task"]},
                        "text": "Hi there.",
                        "usage": {"prompt_tokens": 1000, "completion_tokens": 10}}]})");
  Open();
  TurnResult r = Turn("hello");
  EXPECT_EQ(r.exit, TurnExit::kAnswered) << r.error;
  EXPECT_EQ(r.text, "Hi there.");
  EXPECT_EQ(events_.text(), "Hi there.");
  EXPECT_EQ(r.api_calls, 1);
  EXPECT_EQ(r.usage.input_tokens, 1000);
  EXPECT_DOUBLE_EQ(r.cost_usd, (1000 * 1.0 + 10 * 2.0) / 1e6);
  EXPECT_EQ(server_->ProblemsText(), "");
  EXPECT_EQ(Roles(History()), "sua");
  auto row = store_->GetSession(agent_->session_id());
  ASSERT_TRUE(row.has_value() && row->has_value());
  EXPECT_EQ((*row)->totals.input_tokens, 1000);
  EXPECT_EQ((*row)->title, "hello");
  EXPECT_EQ(agent_->SessionUsage().output_tokens, 10);
}

TEST_F(AgentLoop, TheDefaultToolsetsOfferOnlyWhatTheLoopCanRun) {
  Serve(R"({"turns": [{"text": "ok"}]})");
  AgentOptions options = Options();
  options.toolsets.clear();
  Open(options);
  auto names = agent_->ToolNames();
  auto has = [&names](std::string_view n) {
    return std::find(names.begin(), names.end(), n) != names.end();
  };
  EXPECT_TRUE(has("read_file") && has("patch") && has("terminal") && has("todo") && has("clarify"));
  EXPECT_TRUE(has("memory"));
  EXPECT_TRUE(has("session_search"));
  // The next issue's loop tools are not offered until the loop runs them.
  EXPECT_TRUE(has("delegate_task"));
}

TEST_F(AgentLoop, AModelFailureEndsTheTurnWithOneLineAndTheSessionLivesOn) {
  Serve(R"({"turns": [{"fault": {"kind": "401", "message": "bad key"}}, {"text": "back"}]})");
  Open();
  TurnResult r = Turn("hi");
  EXPECT_EQ(r.exit, TurnExit::kModelFailed);
  EXPECT_FALSE(r.error.empty());
  EXPECT_EQ(r.error.find('\n'), std::string::npos) << r.error;
  TurnResult next = Turn("again");
  EXPECT_EQ(next.exit, TurnExit::kAnswered) << next.error;
  EXPECT_EQ(server_->ProblemsText(), "");
}

TEST_F(AgentLoop, RunsCallsAndAnswersEachInCallOrder) {
  WriteFile("a.txt", "alpha\n");
  WriteFile("b.txt", "beta\n");
  Serve(R"({"turns": [
      {"text": "Reading.", "tool_calls": [
          {"id": "c1", "name": "read_file", "arguments": {"path": "a.txt"}},
          {"id": "c2", "name": "read_file", "arguments": {"path": "b.txt"}},
          {"id": "c3", "name": "search_files", "arguments": {"pattern": "beta"}}]},
      {"expect": {"last_role": "tool", "last_tool_call_id": "c3"}, "text": "Both read."}]})");
  Open();
  TurnResult r = Turn("read both");
  EXPECT_EQ(r.exit, TurnExit::kAnswered) << r.error;
  EXPECT_EQ(r.text, "Both read.");
  EXPECT_EQ(r.api_calls, 2);
  EXPECT_EQ(server_->ProblemsText(), "");
  auto requests = Requests();
  ASSERT_EQ(requests.size(), 2u);
  auto tools = ToolMessages(requests[1]);
  ASSERT_EQ(tools.size(), 3u);
  EXPECT_EQ(tools[0]["tool_call_id"], "c1");
  EXPECT_NE(tools[0]["content"].get<std::string>().find("alpha"), std::string::npos);
  EXPECT_EQ(tools[1]["tool_call_id"], "c2");
  EXPECT_NE(tools[1]["content"].get<std::string>().find("beta"), std::string::npos);
  EXPECT_EQ(tools[2]["tool_call_id"], "c3");
  EXPECT_EQ(Roles(History()), "suattta");
  auto calls = events_.calls();
  ASSERT_EQ(calls.size(), 3u);
  for (const auto& c : calls) EXPECT_EQ(c.status, ToolCallStatus::kOk) << c.name;
}

TEST_F(AgentLoop, ParallelCallsSurviveAnyChunkingOfTheStream) {
  WriteFile("a.txt", "alpha\n");
  WriteFile("b.txt", "beta\n");
  Serve(R"({"stream": {"chunking": "random", "size": 5, "seed": 11, "args_piece": 3,
                       "interleave": true, "repeat_name": true},
            "turns": [
      {"tool_calls": [{"id": "c1", "name": "read_file", "arguments": {"path": "a.txt"}},
                      {"id": "c2", "name": "read_file", "arguments": {"path": "b.txt"}}]},
      {"expect": {"last_tool_call_id": "c2", "last_content_contains": "beta"},
       "text": "Both read, in small pieces."}]})");
  Open();
  TurnResult r = Turn("read both");
  EXPECT_EQ(r.exit, TurnExit::kAnswered) << r.error;
  EXPECT_EQ(r.text, "Both read, in small pieces.");
  EXPECT_EQ(server_->ProblemsText(), "");
}

TEST_F(AgentLoop, RunsToolCallsAModelWritesInTheHermesTextFormat) {
  WriteFile("a.txt", "alpha\n");
  // In this format the calls are text, so the results follow an assistant message without
  // native tool_calls (role "tool", as the Hermes chat templates read them).
  Serve(R"({"lenient": ["tool_without_call"], "turns": [
      {"text": "<tool_call>{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.txt\"}}</tool_call>"},
      {"expect": {"any_content_contains": "alpha"}, "text": "It says alpha."}]})");
  ModelSettings model = Model();
  model.tool_call_format = ToolCallFormat::kHermesText;
  Open(Options(), model);
  TurnResult r = Turn("read a");
  EXPECT_EQ(r.exit, TurnExit::kAnswered) << r.error;
  EXPECT_EQ(r.text, "It says alpha.");
  EXPECT_EQ(server_->ProblemsText(), "");
}

TEST_F(AgentLoop, RepairsNamesAndArgumentsBeforeRunning) {
  WriteFile("a.txt", "alpha\n");
  Serve(R"({"turns": [
      {"tool_calls": [{"id": "c1", "name": "ReadFile", "arguments": "{'path': 'a.txt',}"}]},
      {"expect": {"last_tool_call_id": "c1", "last_content_contains": "alpha"}, "text": "ok"}]})");
  Open();
  TurnResult r = Turn("read");
  EXPECT_EQ(r.exit, TurnExit::kAnswered) << r.error;
  EXPECT_EQ(server_->ProblemsText(), "");
  // The history holds the call as it ran: valid for any provider.
  auto body = Requests()[1];
  const Json& call = body["messages"][2]["tool_calls"][0];
  EXPECT_EQ(call["function"]["name"], "read_file");
  EXPECT_EQ(call["function"]["arguments"], R"({"path":"a.txt"})");
}

TEST_F(AgentLoop, NeverRunsCallsWhoseArgumentsStayInvalidAndStopsAfterTwoCorrections) {
  const std::string bad = R"({"path": "out.py", "content": "print(1)\n)";  // cut off
  std::string script = R"({"turns": [)";
  for (int i = 0; i < 3; ++i) {
    if (i > 0) script += ",";
    script += R"({"tool_calls": [{"id": "w)" + std::to_string(i) +
              R"(", "name": "write_file", "arguments": )" + Json(bad).dump() + "}]}";
  }
  script += "]}";
  Serve(script);
  Open();
  TurnResult r = Turn("write it");
  EXPECT_EQ(r.exit, TurnExit::kHalted);
  EXPECT_NE(r.error.find("invalid tool calls"), std::string::npos) << r.error;
  EXPECT_FALSE(Exists("out.py")) << "never run with {} or a guess";
  EXPECT_EQ(server_->requests().size(), 3u);
  EXPECT_EQ(server_->ProblemsText(), "");
  auto tools = ToolMessages(Requests()[1]);
  ASSERT_EQ(tools.size(), 1u);
  EXPECT_NE(tools[0]["content"].get<std::string>().find("not run"), std::string::npos);
  EXPECT_EQ(Roles(History()), "suatatat");
}

TEST_F(AgentLoop, SchemaViolationsComeBackFromTheDispatcherWithoutRunning) {
  Serve(R"({"turns": [
      {"tool_calls": [{"id": "c1", "name": "write_file", "arguments": {"path": "x.txt"}}]},
      {"expect": {"last_content_contains": "Invalid arguments for write_file"}, "text": "sorry"}]})");
  Open();
  TurnResult r = Turn("go");
  EXPECT_EQ(r.exit, TurnExit::kAnswered) << r.error;
  EXPECT_FALSE(Exists("x.txt"));
  EXPECT_EQ(server_->ProblemsText(), "");
}

TEST_F(AgentLoop, UnknownToolsGetTheListOfRealOnes) {
  Serve(R"({"turns": [
      {"tool_calls": [{"id": "c1", "name": "browser_open", "arguments": {}},
                      {"id": "c2", "name": "<tool_call>{\"name\": 1", "arguments": "{"}]},
      {"expect": {"last_content_contains": "Available tools:"}, "text": "ok"}]})");
  Open();
  TurnResult r = Turn("go");
  EXPECT_EQ(r.exit, TurnExit::kAnswered) << r.error;
  EXPECT_EQ(server_->ProblemsText(), "");
  auto calls = events_.calls();
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].status, ToolCallStatus::kError);
  // The history keeps names a strict provider accepts.
  ASSERT_EQ(server_->requests().size(), 2u);
  const Json stored = Requests()[1]["messages"][2]["tool_calls"][1]["function"];
  EXPECT_EQ(stored["name"], "_tool_call___name___1");
  EXPECT_EQ(stored["arguments"], "{}");
}

TEST_F(AgentLoop, ExactDuplicateCallsRunOnceButEveryIdIsAnswered) {
  Serve(R"({"turns": [
      {"tool_calls": [
          {"id": "d1", "name": "terminal", "arguments": {"command": "echo x >> log.txt"}},
          {"id": "d2", "name": "terminal", "arguments": {"command": "echo x >> log.txt"}}]},
      {"text": "ok"}]})");
  Open();
  TurnResult r = Turn("go");
  EXPECT_EQ(r.exit, TurnExit::kAnswered) << r.error;
  EXPECT_EQ(ReadFile("log.txt"), "x\n");
  auto tools = ToolMessages(Requests()[1]);
  ASSERT_EQ(tools.size(), 2u);
  EXPECT_EQ(tools[0]["tool_call_id"], "d1");
  EXPECT_EQ(tools[1]["tool_call_id"], "d2");
  EXPECT_EQ(tools[0]["content"], tools[1]["content"]);
  EXPECT_EQ(server_->ProblemsText(), "");
}

TEST_F(AgentLoop, ATruncatedCallIsNeverRunAndTheModelIsTold) {
  Serve(R"({"turns": [
      {"tool_calls": [{"id": "t1", "name": "write_file",
                       "arguments": {"path": "big.txt", "content": "0123456789abcdef"}}],
       "fault": {"kind": "truncate_tool_call", "at": 40}},
      {"expect": {"last_content_contains": "cut off"}, "text": "I will split it."}]})");
  Open();
  TurnResult r = Turn("write");
  EXPECT_EQ(r.exit, TurnExit::kAnswered) << r.error;
  EXPECT_FALSE(Exists("big.txt"));
  EXPECT_EQ(server_->ProblemsText(), "");
}

TEST_F(AgentLoop, ProviderCallIdsAreMadeUniqueAcrossTheSession) {
  // Some servers number calls per response: call_1 every time.
  Serve(R"({"turns": [
      {"tool_calls": [{"id": "call_1", "name": "read_file", "arguments": {"path": "a"}}]},
      {"tool_calls": [{"id": "call_1", "name": "read_file", "arguments": {"path": "b"}}]},
      {"text": "done"}]})");
  Open();
  TurnResult r = Turn("go");
  EXPECT_EQ(r.exit, TurnExit::kAnswered) << r.error;
  EXPECT_EQ(server_->ProblemsText(), "");
}

TEST_F(AgentLoop, TodoIsKeptPerSessionAndSurvivesResume) {
  Serve(R"({"turns": [
      {"tool_calls": [{"id": "c1", "name": "todo", "arguments":
          {"todos": [{"id": "1", "content": "read", "status": "in_progress"},
                     {"id": "2", "content": "fix", "status": "pending"}]}}]},
      {"expect": {"last_content_contains": "\"in_progress\":1"}, "text": "planned"},
      {"tool_calls": [{"id": "c2", "name": "todo", "arguments": {}}]},
      {"expect": {"last_content_contains": "fix"}, "text": "still there"}]})");
  Open();
  EXPECT_EQ(Turn("plan").exit, TurnExit::kAnswered);
  auto state = store_->GetState(agent_->session_id(), "todo");
  ASSERT_TRUE(state.has_value() && state->has_value());
  EXPECT_EQ((**state)["todos"].size(), 2u);
  const std::string id = agent_->session_id();
  agent_.reset();
  AgentOptions options = Options();
  options.resume_session_id = id;
  Open(options);
  EXPECT_EQ(agent_->session_id(), id);
  EXPECT_EQ(Turn("what is left?").exit, TurnExit::kAnswered);
  EXPECT_EQ(server_->ProblemsText(), "");
}

TEST_F(AgentLoop, ClarifyAsksTheUserOrSaysNobodyCanAnswer) {
  Serve(R"({"turns": [
      {"tool_calls": [{"id": "q1", "name": "clarify",
                       "arguments": {"question": "Which db?", "choices": ["pg", "sqlite"]}}]},
      {"expect": {"last_content_contains": "\"user_response\":\"sqlite\""}, "text": "sqlite it is"},
      {"tool_calls": [{"id": "q2", "name": "clarify", "arguments": {"question": "Sure?"}}]},
      {"expect": {"last_content_contains": "No user is available"}, "text": "assuming yes"}]})");
  Open();
  events_.set_clarify_answer("sqlite");
  EXPECT_EQ(Turn("set up storage").exit, TurnExit::kAnswered);
  ASSERT_EQ(events_.questions().size(), 1u);
  EXPECT_EQ(events_.questions()[0], "Which db?");
  EXPECT_EQ(events_.last_choices(), (std::vector<std::string>{"pg", "sqlite"}));
  events_.set_clarify_answer(std::nullopt);
  EXPECT_EQ(Turn("again").exit, TurnExit::kAnswered);
  EXPECT_EQ(server_->ProblemsText(), "");
}

TEST_F(AgentLoop, ClarifyAsksEveryQuestionOfABatch) {
  Serve(R"({"turns": [
      {"tool_calls": [{"id": "q1", "name": "clarify", "arguments": {"question": "Setup",
          "questions": [{"id": "db", "question": "Which db?", "choices": ["pg", "sqlite"]},
                        {"question": "Which extras?", "choices": ["auth", "cache", "queue"],
                         "multi_select": true}]}}]},
      {"expect": {"last_content_contains": "\"user_response\":[\"auth\",\"queue\"]"},
       "text": "ok"}]})");
  Open();
  events_.set_clarify_answer("auth\nqueue");
  EXPECT_EQ(Turn("set up").exit, TurnExit::kAnswered);
  EXPECT_EQ(events_.questions(), (std::vector<std::string>{"Which db?", "Which extras?"}));
  EXPECT_EQ(server_->ProblemsText(), "");
}

TEST_F(AgentLoop, TheBudgetEndsWithOneRequestWithoutTools) {
  Serve(R"({"turns": [
      {"tool_calls": [{"id": "c1", "name": "read_file", "arguments": {"path": "a"}}]},
      {"tool_calls": [{"id": "c2", "name": "read_file", "arguments": {"path": "b"}}]},
      {"expect": {"no_tools": true, "last_role": "user",
                  "last_content_contains": "iteration budget"},
       "text": "Summary: nothing found."}]})");
  AgentOptions options = Options();
  options.max_iterations = 2;
  Open(options);
  TurnResult r = Turn("look");
  EXPECT_EQ(r.exit, TurnExit::kBudgetExhausted);
  EXPECT_EQ(r.text, "Summary: nothing found.");
  EXPECT_EQ(r.api_calls, 3);
  EXPECT_EQ(server_->ProblemsText(), "");
  EXPECT_EQ(server_->turns_remaining(), 0u);
}

TEST_F(AgentLoop, ARoundThatOnlyRanExecuteCodeIsRefunded) {
  Serve(R"js({"turns": [
      {"tool_calls": [{"id": "x1", "name": "execute_code",
                       "arguments": {"code": "print(6 * 7)"}}]},
      {"expect": {"last_tool_call_id": "x1", "tools_include": ["execute_code"]},
       "text": "It printed."}]})js");
  AgentOptions options = Options();
  options.toolsets = {"file", "code_execution"};
  options.enable_code_execution = true;
  options.max_iterations = 1;
  Open(options);
  auto names = agent_->ToolNames();
  ASSERT_NE(std::find(names.begin(), names.end(), "execute_code"), names.end());
  TurnResult r = Turn("compute");
  EXPECT_EQ(r.exit, TurnExit::kAnswered) << r.error
                                         << " (without the refund the budget of 1 "
                                            "would have ended the turn)";
  EXPECT_EQ(r.api_calls, 2);
  EXPECT_EQ(server_->ProblemsText(), "");
}

TEST_F(AgentLoop, RefundedRoundsStillEndAtTwiceTheBudget) {
  Serve(R"js({"turns": [
      {"tool_calls": [{"id": "x1", "name": "execute_code", "arguments": {"code": "print(1)"}}]},
      {"tool_calls": [{"id": "x2", "name": "execute_code", "arguments": {"code": "print(2)"}}]},
      {"expect": {"no_tools": true}, "text": "Stopped."}]})js");
  AgentOptions options = Options();
  options.toolsets = {"code_execution"};
  options.enable_code_execution = true;
  options.max_iterations = 1;
  Open(options);
  TurnResult r = Turn("loop");
  EXPECT_EQ(r.exit, TurnExit::kBudgetExhausted);
  EXPECT_EQ(r.api_calls, 3);
  EXPECT_EQ(server_->ProblemsText(), "");
}

TEST_F(AgentLoop, TheLoopGuardHaltsARunawayTurn) {
  std::string script = R"({"turns": [)";
  for (int i = 0; i < 12; ++i) {
    if (i > 0) script += ",";
    script += R"({"tool_calls": [{"name": "read_file", "arguments": {"path": "missing.txt"}}]})";
  }
  script += "]}";
  Serve(script);
  Open();
  TurnResult r = Turn("read it");
  EXPECT_EQ(r.exit, TurnExit::kHalted);
  EXPECT_NE(r.error.find("read_file"), std::string::npos) << r.error;
  EXPECT_EQ(r.api_calls, 8);
  EXPECT_EQ(server_->ProblemsText(), "");
  // The model was warned, then blocked, before the halt.
  auto requests = Requests();
  auto tools = ToolMessages(requests.back());
  ASSERT_GE(tools.size(), 5u);
  EXPECT_NE(tools[1]["content"].get<std::string>().find("loop_guard"), std::string::npos);
  EXPECT_NE(tools[4]["content"].get<std::string>().find("Blocked by the loop guard"),
            std::string::npos);
  // The session lives on.
  test_support::FakeTurn ok;
  ok.text = "ok";
  server_->AddTurn(ok);
  EXPECT_EQ(Turn("stop").exit, TurnExit::kAnswered);
}

TEST_F(AgentLoop, AnInterruptDuringAStreamEndsTheTurnAndTheSessionLivesOn) {
  Serve(R"({"turns": [{"text": "slow answer", "fault": {"kind": "stall", "ms": 20000,
                                                         "after_events": 1}},
                      {"expect": {"last_content_contains": "again"}, "text": "fine"}]})");
  Open();
  std::stop_source stop;
  std::jthread canceller([&] {
    for (int i = 0; i < 1000 && server_->requests().empty(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    stop.request_stop();
  });
  TurnResult r = Turn("hi", stop.get_token());
  EXPECT_EQ(r.exit, TurnExit::kInterrupted);
  canceller.join();
  TurnResult next = Turn("again");
  EXPECT_EQ(next.exit, TurnExit::kAnswered) << next.error;
  EXPECT_EQ(server_->ProblemsText(), "");
}

TEST_F(AgentLoop, AnInterruptDuringToolsCancelsThemAndAnswersEveryCall) {
  Serve(R"({"turns": [
      {"tool_calls": [{"id": "s1", "name": "terminal", "arguments": {"command": "sleep 30"}},
                      {"id": "s2", "name": "terminal", "arguments": {"command": "echo never > n.txt"}}]},
      {"expect": {"last_role": "user", "last_content_contains": "go on"}, "text": "resumed"}]})");
  Open();
  std::stop_source stop;
  std::jthread canceller([&] {
    for (int i = 0; i < 1000 && events_.started() == 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    stop.request_stop();
  });
  const auto began = std::chrono::steady_clock::now();
  TurnResult r = Turn("run", stop.get_token());
  canceller.join();
  EXPECT_EQ(r.exit, TurnExit::kInterrupted);
  EXPECT_LT(std::chrono::steady_clock::now() - began, std::chrono::seconds(25));
  EXPECT_FALSE(Exists("n.txt"));
  auto history = History();
  EXPECT_EQ(Roles(history), "suatt");
  EXPECT_EQ(Turn("go on").exit, TurnExit::kAnswered);
  EXPECT_EQ(server_->ProblemsText(), "");
}

TEST_F(AgentLoop, ResumeAnswersCallsACrashInterruptedAndSendsAValidRequest) {
  Serve(R"({"turns": [
      {"expect": {"any_content_contains": "interrupted"}, "text": "I will check."}]})");
  // What a process killed mid-tool leaves: the assistant's call committed, no result.
  store::NewSession session;
  session.cwd = project_.path();
  session.model = "fake-model";
  auto created = store_->CreateSession(session);
  ASSERT_TRUE(created.has_value());
  std::vector<store::StoredMessage> rows(3);
  rows[0].role = "system";
  rows[0].content = "You are talaria (an older prompt).";
  rows[1].role = "user";
  rows[1].content = "write the file";
  rows[2].role = "assistant";
  rows[2].tool_calls = Json::parse(
      R"([{"id": "w1", "type": "function", "function": {"name": "write_file",
           "arguments": "{\"path\": \"f.txt\", \"content\": \"x\"}"}}])");
  for (auto& row : rows) ASSERT_TRUE(store_->AppendMessage(created->id, row).ok());
  AgentOptions options = Options();
  options.resume_session_id = created->id;
  Open(options);
  TurnResult r = Turn("did it work?");
  EXPECT_EQ(r.exit, TurnExit::kAnswered) << r.error;
  EXPECT_EQ(server_->ProblemsText(), "");
  auto body = Requests()[0];
  EXPECT_EQ(Roles(body), "suatu");
  EXPECT_EQ(body["messages"][0]["content"], "You are talaria (an older prompt).")
      << "the stored prompt is kept: the prefix stays cache-stable";
  auto unknown = AgentOptions(Options());
  unknown.resume_session_id = "19990101_000000_abcdef";
  auto missing = Agent::Open(unknown, Model(), store_);
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code(), StatusCode::kNotFound);
}

TEST_F(AgentLoop, ReadsPatchesAndTestsASmallProjectThroughRealTools) {
  WriteFile("calc.py", "def add(a, b):\n    return a - b\n");
  WriteFile("test_calc.py",
            "import calc\nassert calc.add(2, 3) == 5, calc.add(2, 3)\nprint('TESTS OK')\n");
  Serve(R"({"turns": [
      {"text": "Let me look.", "tool_calls": [
          {"id": "r1", "name": "read_file", "arguments": {"path": "calc.py"}},
          {"id": "r2", "name": "terminal", "arguments": {"command": "python3 test_calc.py"}}]},
      {"expect": {"last_content_contains": "AssertionError"},
       "tool_calls": [{"id": "p1", "name": "patch", "arguments":
          {"mode": "replace", "path": "calc.py", "old_string": "return a - b",
           "new_string": "return a + b"}}]},
      {"tool_calls": [{"id": "t1", "name": "terminal",
                       "arguments": {"command": "python3 test_calc.py"}}]},
      {"expect": {"last_content_contains": "TESTS OK"}, "text": "Fixed: add now adds."}]})");
  Open();
  TurnResult r = Turn("fix the failing test");
  EXPECT_EQ(r.exit, TurnExit::kAnswered) << r.error;
  EXPECT_EQ(r.text, "Fixed: add now adds.");
  EXPECT_EQ(ReadFile("calc.py"), "def add(a, b):\n    return a + b\n");
  EXPECT_EQ(server_->ProblemsText(), "");
  EXPECT_EQ(server_->turns_remaining(), 0u);
  EXPECT_EQ(Roles(History()), "suattatata");
}

}  // namespace
}  // namespace talaria::agent::testing
