// `talaria run` where the model hands three tasks to subagents: they run at once (the scripted
// server holds each child's answer until all three asked), each result comes back to the model,
// and `talaria sessions` shows the children under the parent with their usage rolled up.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_harness.h"
#include "support/fake_llm_server.h"

namespace talaria::testing_cli {
namespace {

using test_support::FakeJson;
using test_support::FakeLlmServer;

FakeJson Usage(int in, int out) {
  return FakeJson{{"prompt_tokens", in}, {"completion_tokens", out}, {"total_tokens", in + out}};
}

TEST(DelegateCli, RunHandsThreeTasksToChildrenThatRunAtOnce) {
  TempHome home;
  const std::string project = home.path() + "/project";
  std::filesystem::create_directories(project);

  FakeJson tasks = FakeJson::array();
  FakeJson turns = FakeJson::array();
  for (const char* word : {"TASK-RED", "TASK-GREEN", "TASK-BLUE"}) {
    tasks.push_back(FakeJson{{"goal", std::string(word) + ": check one thing"}});
  }
  turns.push_back(FakeJson{
      {"tool_calls", FakeJson::array({FakeJson{{"id", "d1"},
                                               {"name", "delegate_task"},
                                               {"arguments", FakeJson{{"tasks", tasks}}.dump()}}})},
      {"usage", Usage(1000, 20)}});
  for (const char* word : {"TASK-RED", "TASK-GREEN", "TASK-BLUE"}) {
    turns.push_back(FakeJson{{"match", FakeJson{{"system_contains", word}}},
                             {"hold", FakeJson{{"until_requests", 4}, {"timeout_ms", 20000}}},
                             {"text", std::string(word) + " is fine"},
                             {"usage", Usage(100, 10)}});
  }
  turns.push_back(FakeJson{{"match", FakeJson{{"last_role", "tool"}}},
                           {"expect", FakeJson{{"last_content_contains", "TASK-BLUE is fine"}}},
                           {"text", "All three checks passed."},
                           {"usage", Usage(1000, 20)}});
  std::string error;
  auto server = FakeLlmServer::FromScript(FakeJson{{"turns", turns}}.dump(), &error);
  ASSERT_TRUE(server && server->Start(&error)) << error;

  CliInvocation how;
  how.home = home.path();
  how.cwd = project;
  how.timeout = std::chrono::seconds(60);
  how.extra_env = {"TALARIA_API_KEY=", "OPENAI_API_KEY="};
  const std::vector<std::string> args{"run",     "--base-url", server->base_url(),
                                      "--model", "fake-model", "check three things"};
  const CliRun run = RunTalaria(how, args);
  EXPECT_EQ(run.exit_code, 0) << Describe(args, run);
  EXPECT_NE(run.out.find("All three checks passed."), std::string::npos) << Describe(args, run);
  EXPECT_EQ(server->ProblemsText(), "");
  EXPECT_EQ(server->requests().size(), 5u);

  const CliRun list = RunTalaria(how, {"sessions", "list", "--json"});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  const FakeJson sessions = FakeJson::parse(list.out, nullptr, false);
  ASSERT_TRUE(sessions.is_array()) << list.out;
  ASSERT_EQ(sessions.size(), 4u) << list.out;
  std::string parent;
  for (const auto& s : sessions) {
    if (s.value("source", "") != "delegate") parent = s["id"];
  }
  ASSERT_FALSE(parent.empty()) << list.out;
  // The table names each child's parent.
  const CliRun table = RunTalaria(how, {"sessions", "list"});
  size_t children_named = 0;
  for (size_t at = table.out.find("\u21B3 " + parent); at != std::string::npos;
       at = table.out.find("\u21B3 " + parent, at + 1)) {
    ++children_named;
  }
  EXPECT_EQ(children_named, 3u) << table.out;

  // The parent's totals hold its children's usage; the overall total counts it once.
  const CliRun usage = RunTalaria(how, {"sessions", "usage", parent, "--json"});
  ASSERT_EQ(usage.exit_code, 0) << usage.err;
  const FakeJson per_session = FakeJson::parse(usage.out, nullptr, false);
  EXPECT_EQ(per_session["total"]["input_tokens"], 2300) << usage.out;
  EXPECT_EQ(per_session["total"]["output_tokens"], 70) << usage.out;
  const CliRun all = RunTalaria(how, {"sessions", "usage", "--json"});
  ASSERT_EQ(all.exit_code, 0) << all.err;
  const FakeJson everything = FakeJson::parse(all.out, nullptr, false);
  EXPECT_EQ(everything["total"]["input_tokens"], 2300) << all.out;
}

}  // namespace
}  // namespace talaria::testing_cli
