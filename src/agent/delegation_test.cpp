// delegate_task against the real store and the scripted server: children are real agent loops
// (their requests reach the server beside the parent's), so the scripts route each child's turns
// by a word of its task (match: system_contains) and the assertions read what the parent got,
// what the server received and what the store kept.
#include <signal.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "agent/agent_test_util.h"
#include "agent/delegation.h"
#include "support/wait_until.h"
#include "talaria/guard/approvals.h"

namespace talaria::agent::testing {
namespace {

using Json = nlohmann::ordered_json;
using namespace std::chrono_literals;

class Delegation : public AgentFixture {
 protected:
  void Config(const std::string& extra) {
    std::ofstream(home_ / "config.yaml") << "terminal:\n  backend: local\n" << extra;
  }
  AgentOptions ParentOptions() const {
    AgentOptions o = Options();
    o.toolsets = {"file", "terminal", "todo", "clarify", "delegation"};
    return o;
  }
  // The content of the parent's tool message answering `call_id`, parsed.
  Json ToolResultOf(const std::string& call_id) const {
    for (const auto& m : History()) {
      if (m.role == "tool" && m.tool_call_id == call_id) {
        auto j = Json::parse(m.content, nullptr, false);
        return j.is_discarded() ? Json(m.content) : j;
      }
    }
    return Json();
  }
  std::vector<store::SessionRow> Children() const {
    std::vector<store::SessionRow> out;
    auto all = store_->ListSessions({.cwd = {}, .limit = 100});
    EXPECT_TRUE(all.has_value());
    if (!all) return out;
    for (const auto& s : *all) {
      if (s.parent_id == agent_->session_id()) out.push_back(s);
    }
    return out;
  }
};

// A child's answer, routed to the child whose task names `word`.
std::string ChildTurn(const std::string& word, const std::string& text,
                      const std::string& more = "") {
  return R"({"match": {"system_contains": ")" + word + R"("}, "text": ")" + text +
         R"(", "usage": {"prompt_tokens": 100, "completion_tokens": 10})" + more + "}";
}

TEST_F(Delegation, ThreeChildrenRunAtOnceEachInItsOwnSession) {
  // Every child's first answer is held until all four requests (the parent's and three
  // children's) have arrived: children served one after another would never get there.
  const std::string hold = R"(, "hold": {"until_requests": 4, "timeout_ms": 20000})";
  const std::string blocked = R"("delegate_task", "clarify", "memory", "execute_code")";
  const std::string all_tools = hold + R"(, "expect": {"tools_include": ["read_file", "terminal"],
      "tools_exclude": [)" + blocked +
                                "]}";
  // The third asked for "file" only: no terminal.
  const std::string file_only = hold + R"(, "expect": {"tools_include": ["read_file"],
      "tools_exclude": ["terminal", )" +
                                blocked + "]}";
  Serve(R"({"turns": [
      {"tool_calls": [{"id": "d1", "name": "delegate_task", "arguments": {"tasks": [
          {"goal": "TASK-ALPHA: count the files"},
          {"goal": "TASK-BETA: read the README", "context": "it is short"},
          {"goal": "TASK-GAMMA: list the tests", "toolsets": ["file"]}]}}],
       "usage": {"prompt_tokens": 1000, "completion_tokens": 20}},
      )" +
        ChildTurn("TASK-ALPHA", "alpha done", all_tools) + "," +
        ChildTurn("TASK-BETA", "beta done", all_tools) + "," +
        ChildTurn("TASK-GAMMA", "gamma done", file_only) + R"(,
      {"match": {"last_role": "tool"}, "text": "All three are done.",
       "usage": {"prompt_tokens": 1000, "completion_tokens": 20}}]})");
  Open(ParentOptions());
  TurnResult r = Turn("do three things");
  EXPECT_EQ(r.exit, TurnExit::kAnswered) << r.error;
  EXPECT_EQ(r.text, "All three are done.");
  EXPECT_EQ(server_->ProblemsText(), "");
  EXPECT_EQ(server_->requests().size(), 5u);

  Json out = ToolResultOf("d1");
  ASSERT_TRUE(out.is_object()) << out.dump();
  ASSERT_EQ(out["results"].size(), 3u) << out.dump();
  EXPECT_TRUE(out.contains("total_duration_seconds"));
  const char* summaries[] = {"alpha done", "beta done", "gamma done"};
  for (size_t i = 0; i < 3; ++i) {
    const Json& e = out["results"][i];
    EXPECT_EQ(e["task_index"], i);
    EXPECT_EQ(e["status"], "completed") << e.dump();
    EXPECT_EQ(e["summary"], summaries[i]);
    EXPECT_EQ(e["exit_reason"], "completed");
    EXPECT_EQ(e["api_calls"], 1);
    EXPECT_EQ(e["model"], "fake-model");
    EXPECT_EQ(e["tokens"]["input"], 100);
    EXPECT_EQ(e["tokens"]["output"], 10);
    EXPECT_TRUE(e["tool_trace"].is_array());
    EXPECT_TRUE(e.contains("duration_seconds"));
  }
  // Each child is a stored session of its own, under the parent.
  std::vector<store::SessionRow> children = Children();
  ASSERT_EQ(children.size(), 3u);
  for (const auto& c : children) {
    EXPECT_EQ(c.source, "delegate");
    EXPECT_EQ(c.end_reason, "completed");
    EXPECT_EQ(c.totals.input_tokens, 100);
  }
  // Their usage rolls up into the parent's: in memory and in the store.
  EXPECT_EQ(agent_->SessionUsage().input_tokens, 2300);
  EXPECT_EQ(agent_->SessionUsage().output_tokens, 70);
  EXPECT_DOUBLE_EQ(agent_->SessionCostUsd(), (2300 * 1.0 + 70 * 2.0) / 1e6);
  auto row = store_->GetSession(agent_->session_id());
  ASSERT_TRUE(row.has_value() && row->has_value());
  EXPECT_EQ((*row)->totals.input_tokens, 2300);
  EXPECT_EQ((*row)->totals.output_tokens, 70);
  // Counted once overall: the children's own rows are not summed again.
  auto sum = store_->SumUsage("");
  ASSERT_TRUE(sum.has_value());
  EXPECT_EQ(sum->input_tokens, 2300);
}

TEST_F(Delegation, MoreTasksThanMayRunAtOnceIsAnErrorAndStartsNothing) {
  Serve(R"({"turns": [
      {"tool_calls": [{"id": "d1", "name": "delegate_task", "arguments": {"tasks": [
          {"goal": "one"}, {"goal": "two"}, {"goal": "three"}, {"goal": "four"}]}}]},
      {"expect": {"last_role": "tool"}, "text": "Too many."}]})");
  Open(ParentOptions());
  TurnResult r = Turn("four things");
  EXPECT_EQ(r.exit, TurnExit::kAnswered) << r.error;
  Json out = ToolResultOf("d1");
  ASSERT_TRUE(out.contains("error")) << out.dump();
  EXPECT_NE(out["error"].get<std::string>().find("at most 3"), std::string::npos) << out.dump();
  EXPECT_TRUE(Children().empty());
  EXPECT_EQ(server_->requests().size(), 2u);
  EXPECT_EQ(server_->ProblemsText(), "");
}

TEST_F(Delegation, ALeafChildCannotDelegateOnAnyPath) {
  // delegate_task not blocked, so the child is offered it: its call reaches the delegator,
  // which refuses at depth 1 of 1. And no grandchild session ever exists.
  Config("delegation:\n  blocked_tools: [clarify]\n");
  Serve(R"({"turns": [
      {"tool_calls": [{"id": "d1", "name": "delegate_task", "arguments": {"goal": "TASK-KID: try to nest"}}]},
      {"match": {"system_contains": "TASK-KID", "last_role": "user"},
       "expect": {"tools_include": ["delegate_task"]},
       "tool_calls": [{"id": "n1", "name": "delegate_task", "arguments": {"goal": "TASK-GRANDKID"}}]},
      {"match": {"system_contains": "TASK-KID", "last_role": "tool"},
       "expect": {"last_content_contains": "cannot delegate"}, "text": "I could not nest."},
      {"match": {"last_role": "tool"}, "text": "ok"}]})");
  Open(ParentOptions());
  TurnResult r = Turn("nest");
  EXPECT_EQ(r.exit, TurnExit::kAnswered) << r.error;
  EXPECT_EQ(server_->ProblemsText(), "");
  Json out = ToolResultOf("d1");
  ASSERT_EQ(out["results"].size(), 1u) << out.dump();
  EXPECT_EQ(out["results"][0]["summary"], "I could not nest.");
  ASSERT_EQ(Children().size(), 1u);
  auto all = store_->ListSessions({.cwd = {}, .limit = 100});
  ASSERT_TRUE(all.has_value());
  EXPECT_EQ(all->size(), 2u) << "no grandchild session";
}

TEST_F(Delegation, AnOrchestratorNestsOnceAndItsWorkersAreLeaves) {
  Config("delegation:\n  max_spawn_depth: 2\n");
  Serve(R"({"turns": [
      {"tool_calls": [{"id": "d1", "name": "delegate_task",
                       "arguments": {"goal": "TASK-BOSS: split the work", "role": "orchestrator"}}]},
      {"match": {"system_contains": "TASK-BOSS", "last_role": "user"},
       "expect": {"tools_include": ["delegate_task"]},
       "tool_calls": [{"id": "b1", "name": "delegate_task",
                       "arguments": {"goal": "TASK-WORKER: the part", "role": "orchestrator"}}]},
      {"match": {"system_contains": "TASK-WORKER", "last_role": "user"},
       "expect": {"tools_exclude": ["delegate_task"]},
       "tool_calls": [{"id": "w1", "name": "delegate_task", "arguments": {"goal": "TASK-DEEPER"}}]},
      {"match": {"system_contains": "TASK-WORKER", "last_role": "tool"},
       "expect": {"last_content_contains": "does not exist"}, "text": "worker done"},
      {"match": {"system_contains": "TASK-BOSS", "last_role": "tool"},
       "expect": {"last_content_contains": "worker done"}, "text": "boss done"},
      {"match": {"last_role": "tool"}, "text": "ok"}]})");
  Open(ParentOptions());
  TurnResult r = Turn("nest twice");
  EXPECT_EQ(r.exit, TurnExit::kAnswered) << r.error;
  EXPECT_EQ(server_->ProblemsText(), "");
  EXPECT_EQ(ToolResultOf("d1")["results"][0]["summary"], "boss done");
  auto all = store_->ListSessions({.cwd = {}, .limit = 100});
  ASSERT_TRUE(all.has_value());
  EXPECT_EQ(all->size(), 3u) << "parent, orchestrator, worker; nothing deeper";
}

TEST_F(Delegation, ATimedOutChildIsStoppedAndReturnsWhatItHad) {
  Config("delegation:\n  child_timeout_seconds: 1\n");
  Serve(R"({"turns": [
      {"tool_calls": [{"id": "d1", "name": "delegate_task", "arguments": {"goal": "TASK-SLOW"}}]},
      {"match": {"system_contains": "TASK-SLOW", "last_role": "user"},
       "text": "Half done: the config is in etc/.",
       "tool_calls": [{"id": "s1", "name": "terminal", "arguments": {"command": "sleep 60"}}]},
      {"match": {"last_role": "tool"}, "text": "The child timed out."}]})");
  Open(ParentOptions());
  TurnResult r = Turn("slow work");
  EXPECT_EQ(r.exit, TurnExit::kAnswered) << r.error;
  Json e = ToolResultOf("d1")["results"][0];
  EXPECT_EQ(e["status"], "timeout") << e.dump();
  EXPECT_EQ(e["exit_reason"], "timeout");
  EXPECT_EQ(e["summary"], "Half done: the config is in etc/.");
  EXPECT_NE(e["error"].get<std::string>().find("child_timeout_seconds"), std::string::npos);
  ASSERT_EQ(e["tool_trace"].size(), 1u);
  EXPECT_EQ(e["tool_trace"][0]["tool"], "terminal");
  ASSERT_EQ(Children().size(), 1u);
  EXPECT_EQ(Children()[0].end_reason, "timeout");
}

TEST_F(Delegation, InterruptingTheParentKillsTheChildsProcess) {
  Serve(R"({"turns": [
      {"tool_calls": [{"id": "d1", "name": "delegate_task", "arguments": {"goal": "TASK-LONG"}}]},
      {"match": {"system_contains": "TASK-LONG", "last_role": "user"},
       "tool_calls": [{"id": "s1", "name": "terminal",
                       "arguments": {"command": "sh -c 'echo $$ > child.pid.tmp && mv child.pid.tmp child.pid && exec sleep 300'"}}]}]})");
  Open(ParentOptions());
  std::stop_source stop;
  TurnResult r;
  std::thread turn([&] { r = Turn("long work", stop.get_token()); });
  ASSERT_TRUE(test_support::WaitUntil([&] { return Exists("child.pid"); }, 20s));
  const pid_t pid = static_cast<pid_t>(std::stol(ReadFile("child.pid")));
  ASSERT_GT(pid, 1);
  EXPECT_EQ(::kill(pid, 0), 0) << "the child's sleep runs";
  stop.request_stop();
  turn.join();
  EXPECT_EQ(r.exit, TurnExit::kInterrupted);
  EXPECT_TRUE(test_support::WaitUntil([&] { return ::kill(pid, 0) != 0 && errno == ESRCH; }, 10s))
      << "pid " << pid << " outlived the interrupt";
  ASSERT_EQ(Children().size(), 1u);
  EXPECT_EQ(Children()[0].end_reason, "interrupted");
}

TEST_F(Delegation, ABackgroundResultArrivesOnceWithWhatTheModelSeesNext) {
  WriteFile("a.txt", "alpha\n");
  Serve(R"({"turns": [
      {"tool_calls": [{"id": "d1", "name": "delegate_task",
                       "arguments": {"goal": "TASK-BG: survey", "background": true}}],
       "usage": {"prompt_tokens": 1000, "completion_tokens": 20}},
      {"match": {"system_contains": "TASK-BG"}, "text": "bg survey finished",
       "usage": {"prompt_tokens": 100, "completion_tokens": 10}},
      {"match": {"last_role": "tool", "last_content_contains": "dispatched"}, "text": "Dispatched.",
       "usage": {"prompt_tokens": 1000, "completion_tokens": 20}},
      {"match": {"last_role": "user"}, "expect": {"last_content_contains": "bg survey finished"},
       "tool_calls": [{"id": "r1", "name": "read_file", "arguments": {"path": "a.txt"}}]},
      {"match": {"last_role": "tool"}, "text": "Got it."}]})");
  Open(ParentOptions());
  TurnResult first = Turn("start it");
  EXPECT_EQ(first.exit, TurnExit::kAnswered) << first.error;
  Json dispatched = ToolResultOf("d1");
  EXPECT_EQ(dispatched["status"], "dispatched") << dispatched.dump();
  EXPECT_EQ(dispatched["mode"], "background");
  // The child's usage is charged together with its notice: once it shows, the notice is queued.
  ASSERT_TRUE(
      test_support::WaitUntil([&] { return agent_->SessionUsage().input_tokens == 2100; }, 20s))
      << agent_->SessionUsage().input_tokens;
  TurnResult second = Turn("read a.txt");
  EXPECT_EQ(second.exit, TurnExit::kAnswered) << second.error;
  EXPECT_EQ(second.text, "Got it.");
  EXPECT_EQ(server_->ProblemsText(), "");
  const std::string read_result = ToolResultOf("r1").is_string()
                                      ? ToolResultOf("r1").get<std::string>()
                                      : ToolResultOf("r1").dump();
  EXPECT_NE(read_result.find("alpha"), std::string::npos);
  EXPECT_EQ(read_result.find("Background subagent"), std::string::npos)
      << "delivered once, with the user's message: " << read_result;
}

TEST_F(Delegation, ABackgroundResultReachesTheNextTurnWithoutAToolCall) {
  Serve(R"({"turns": [
      {"tool_calls": [{"id": "d1", "name": "delegate_task",
                       "arguments": {"goal": "TASK-QUIET: count files", "background": true}}],
       "usage": {"prompt_tokens": 1000, "completion_tokens": 20}},
      {"match": {"system_contains": "TASK-QUIET"}, "text": "there are 7 files",
       "usage": {"prompt_tokens": 100, "completion_tokens": 10}},
      {"match": {"last_role": "tool"}, "text": "Dispatched.",
       "usage": {"prompt_tokens": 1000, "completion_tokens": 20}},
      {"match": {"last_role": "user"},
       "expect": {"last_content_contains": "there are 7 files"}, "text": "Seven."}]})");
  Open(ParentOptions());
  ASSERT_EQ(Turn("start it").exit, TurnExit::kAnswered);
  // The child's usage is charged together with its notice: once it shows, the notice is queued.
  ASSERT_TRUE(
      test_support::WaitUntil([&] { return agent_->SessionUsage().input_tokens == 2100; }, 20s));
  TurnResult second = Turn("how many?");
  EXPECT_EQ(second.exit, TurnExit::kAnswered) << second.error;
  EXPECT_EQ(second.text, "Seven.");
  EXPECT_EQ(server_->ProblemsText(), "") << "the result rode on the user's message";
}

TEST_F(Delegation, ABackgroundResultOutlivesItsSessionsClose) {
  Serve(R"({"turns": [
      {"tool_calls": [{"id": "d1", "name": "delegate_task",
                       "arguments": {"goal": "TASK-LONG: index the repo", "background": true}}]},
      {"match": {"system_contains": "TASK-LONG"}, "text": "never",
       "hold": {"until_requests": 99, "timeout_ms": 5000}},
      {"match": {"last_role": "tool"}, "text": "Dispatched."},
      {"match": {"last_role": "user"},
       "expect": {"last_content_contains": "Background subagent"}, "text": "It was stopped."}]})");
  Open(ParentOptions());
  ASSERT_EQ(Turn("start it").exit, TurnExit::kAnswered);
  const std::string id = agent_->session_id();
  agent_.reset();  // closes while the child still works: it is stopped, its report kept

  AgentOptions again = ParentOptions();
  again.resume_session_id = id;
  Open(again);
  TurnResult next = Turn("what happened to the indexing?");
  EXPECT_EQ(next.exit, TurnExit::kAnswered) << next.error;
  EXPECT_EQ(next.text, "It was stopped.");
  EXPECT_EQ(server_->ProblemsText(), "");
  agent_.reset();
  Open(again);  // delivered once: a third open carries nothing
  EXPECT_TRUE(store_->GetState(id, "delegation_notices").value().value_or(Json()).is_null());
}

TEST_F(Delegation, BackgroundChildrenCountAgainstTheLimit) {
  // Three background children held open; a fourth delegation (sync) is refused.
  Serve(R"({"turns": [
      {"tool_calls": [
          {"id": "b1", "name": "delegate_task", "arguments": {"goal": "TASK-B1", "background": true}},
          {"id": "b2", "name": "delegate_task", "arguments": {"goal": "TASK-B2", "background": true}},
          {"id": "b3", "name": "delegate_task", "arguments": {"goal": "TASK-B3", "background": true}},
          {"id": "s1", "name": "delegate_task", "arguments": {"goal": "TASK-S1"}}]},
      {"match": {"system_contains": "TASK-B"}, "text": "b", "hold": {"until_requests": 99, "timeout_ms": 3000}},
      {"match": {"system_contains": "TASK-B"}, "text": "b", "hold": {"until_requests": 99, "timeout_ms": 3000}},
      {"match": {"system_contains": "TASK-B"}, "text": "b", "hold": {"until_requests": 99, "timeout_ms": 3000}},
      {"match": {"last_role": "tool"}, "text": "ok"}]})");
  Open(ParentOptions());
  TurnResult r = Turn("many");
  EXPECT_EQ(r.exit, TurnExit::kAnswered) << r.error;
  for (const char* id : {"b1", "b2", "b3"}) EXPECT_EQ(ToolResultOf(id)["status"], "dispatched");
  Json refused = ToolResultOf("s1");
  ASSERT_TRUE(refused.contains("error")) << refused.dump();
  EXPECT_NE(refused["error"].get<std::string>().find("still running"), std::string::npos);
  agent_.reset();  // stops and joins the held children
}

TEST_F(Delegation, AChildAsksNoHumanForADangerousCommand) {
  Config("approvals:\n  mode: ask\n");
  Serve(R"({"turns": [
      {"tool_calls": [{"id": "d1", "name": "delegate_task", "arguments": {"goal": "TASK-RISKY"}}]},
      {"match": {"system_contains": "TASK-RISKY", "last_role": "user"},
       "tool_calls": [{"id": "x1", "name": "terminal", "arguments": {"command": "rm -rf stuff"}}]},
      {"match": {"system_contains": "TASK-RISKY", "last_role": "tool"},
       "expect": {"last_content_contains": "BLOCKED"}, "text": "refused"},
      {"match": {"last_role": "tool"}, "text": "ok"}]})");
  WriteFile("stuff/keep.txt", "keep\n");
  // The parent's prompter would approve; the child must not reach it.
  class Approver final : public safety::ApprovalPrompter {
   public:
    safety::ApprovalAnswer Ask(const safety::ApprovalRequest&) override {
      ++asked;
      return safety::ApprovalAnswer::kOnce;
    }
    std::atomic<int> asked{0};
  };
  auto approver = std::make_shared<Approver>();
  AgentOptions options = ParentOptions();
  options.approval_prompter = approver;
  Open(options);
  TurnResult r = Turn("risky");
  EXPECT_EQ(r.exit, TurnExit::kAnswered) << r.error;
  EXPECT_EQ(server_->ProblemsText(), "");
  EXPECT_TRUE(Exists("stuff/keep.txt"));
  EXPECT_EQ(approver->asked.load(), 0);
  EXPECT_EQ(ToolResultOf("d1")["results"][0]["tool_trace"][0]["status"], "error");
}

TEST_F(Delegation, AChildThatWritesAFileTheParentReadSaysSo) {
  WriteFile("notes.txt", "old\n");
  Serve(R"({"turns": [
      {"tool_calls": [{"id": "r1", "name": "read_file", "arguments": {"path": "notes.txt"}}]},
      {"tool_calls": [{"id": "d1", "name": "delegate_task", "arguments": {"goal": "TASK-EDIT"}}]},
      {"match": {"system_contains": "TASK-EDIT", "last_role": "user"},
       "tool_calls": [{"id": "w1", "name": "write_file", "arguments": {"path": "notes.txt", "content": "new\n"}}]},
      {"match": {"system_contains": "TASK-EDIT", "last_role": "tool"}, "text": "rewrote notes"},
      {"match": {"last_role": "tool"}, "text": "ok"}]})");
  Open(ParentOptions());
  TurnResult r = Turn("edit");
  EXPECT_EQ(r.exit, TurnExit::kAnswered) << r.error;
  EXPECT_EQ(server_->ProblemsText(), "");
  EXPECT_EQ(ReadFile("notes.txt"), "new\n");
  Json e = ToolResultOf("d1")["results"][0];
  ASSERT_TRUE(e.contains("note")) << e.dump();
  EXPECT_NE(e["note"].get<std::string>().find("notes.txt"), std::string::npos);
}

TEST(DelegationSettings, ReadsTheSectionAndNamesABadKey) {
  auto parse = [](const std::string& yaml) {
    auto config = ParseConfig(yaml);
    EXPECT_TRUE(config.has_value());
    return DelegationSettingsFromConfig(*config);
  };
  auto defaults = parse("terminal: {backend: local}\n");
  ASSERT_TRUE(defaults.has_value());
  EXPECT_EQ(defaults->max_concurrent_children, 3);
  EXPECT_EQ(defaults->max_spawn_depth, 1);
  EXPECT_EQ(defaults->max_iterations, 50);
  EXPECT_EQ(defaults->child_timeout, std::chrono::milliseconds(600'000));
  EXPECT_EQ(defaults->blocked_tools.size(), 5u);
  auto set = parse(
      "delegation:\n  max_concurrent_children: 2\n  max_spawn_depth: 2\n"
      "  child_timeout_seconds: 1.5\n  blocked_tools: [memory]\n  max_iterations: 7\n");
  ASSERT_TRUE(set.has_value()) << set.error().message();
  EXPECT_EQ(set->max_concurrent_children, 2);
  EXPECT_EQ(set->max_spawn_depth, 2);
  EXPECT_EQ(set->child_timeout, std::chrono::milliseconds(1500));
  EXPECT_EQ(set->blocked_tools, std::vector<std::string>{"memory"});
  EXPECT_EQ(set->max_iterations, 7);
  auto deep = parse("delegation:\n  max_spawn_depth: 3\n");
  ASSERT_FALSE(deep.has_value());
  EXPECT_NE(deep.error().message().find("delegation.max_spawn_depth"), std::string::npos);
  auto typo = parse("delegation:\n  max_children: 3\n");
  ASSERT_FALSE(typo.has_value());
  EXPECT_NE(typo.error().message().find("delegation.max_children"), std::string::npos);
}

}  // namespace
}  // namespace talaria::agent::testing
