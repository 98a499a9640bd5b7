// kill -9 at any moment of an agent session — mid-stream, mid-tool, between messages — and the
// session reopens with a history the provider accepts: a scripted long session is killed at
// many seeded random points and resumed with `talaria run --continue` each time; the scripted
// server validates every request it receives (every tool call answered exactly once, roles in
// order), the interrupted calls show up as interrupted in the history, and the store passes
// PRAGMA integrity_check.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent_process.h"
#include "cli_harness.h"
#include "support/fake_llm_server.h"
#include "support/wait_until.h"

namespace talaria::testing_cli {
namespace {

using test_support::FakeJson;
using test_support::FakeLlmServer;

constexpr int kKills = 100;
constexpr int kTurnsPerTask = 50;
constexpr uint32_t kSeed = 0x5EED0020;

// One task's turns: tool calls of several kinds (a write, a read, a command that takes a
// moment), every fifth answered in text so runs also end normally, and the last one the answer.
FakeJson TaskTurns(int task) {
  FakeJson turns = FakeJson::array();
  for (int k = 0; k < kTurnsPerTask; ++k) {
    const std::string id = "call_" + std::to_string(task) + "_" + std::to_string(k);
    FakeJson call;
    switch (k % 3) {
      case 0:
        call = {{"id", id},
                {"name", "write_file"},
                {"arguments", FakeJson{{"path", "notes/" + std::to_string(k) + ".txt"},
                                       {"content", "step " + std::to_string(k) + "\n"}}
                                  .dump()}};
        break;
      case 1:
        call = {
            {"id", id},
            {"name", "read_file"},
            {"arguments", FakeJson{{"path", "notes/" + std::to_string(k - 1) + ".txt"}}.dump()}};
        break;
      default:
        call = {{"id", id},
                {"name", "terminal"},
                {"arguments",
                 FakeJson{{"command", "sleep 0.05; echo done " + std::to_string(k)}}.dump()}};
    }
    FakeJson turn{{"tool_calls", FakeJson::array({call})},
                  {"stream", FakeJson{{"chunking", "fixed"}, {"size", 16}, {"gap_ms", 2}}}};
    if (k % 5 == 4)
      turn = FakeJson{{"text", "progress report " + std::to_string(k)},
                      {"stream", FakeJson{{"chunking", "fixed"}, {"size", 4}, {"gap_ms", 3}}}};
    turns.push_back(turn);
  }
  return turns;
}

std::string IntegrityCheck(const std::string& db_path) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    sqlite3_close(db);
    return "cannot open " + db_path;
  }
  std::string result;
  sqlite3_exec(
      db, "PRAGMA integrity_check",
      [](void* out, int, char** values, char**) {
        *static_cast<std::string*>(out) += values[0] ? values[0] : "";
        return 0;
      },
      &result, nullptr);
  sqlite3_close(db);
  return result;
}

TEST(AgentCliCrash, KilledAtRandomPointsTheSessionAlwaysResumesValid) {
  TempHome home;
  const std::string project = home.path() + "/project";
  std::filesystem::create_directories(project + "/notes");
  FakeJson turns = FakeJson::array();
  // Enough turns for every run: each run uses at least one request.
  for (int task = 0; task < 8; ++task) {
    for (auto& t : TaskTurns(task)) turns.push_back(t);
  }
  std::string error;
  auto server = FakeLlmServer::FromScript(
      FakeJson{{"turns", turns}, {"on_exhausted", FakeJson{{"text", "all done"}}}}.dump(), &error);
  ASSERT_TRUE(server) << error;
  ASSERT_TRUE(server->Start(&error)) << error;

  CliInvocation how;
  how.home = home.path();
  how.cwd = project;
  how.extra_env = {"TALARIA_API_KEY=", "OPENAI_API_KEY="};
  auto args = [&](bool resume) {
    std::vector<std::string> a{"run", "--base-url", server->base_url(), "--model", "fake-model"};
    if (resume) a.push_back("--continue");
    a.push_back(resume ? "continue where you left off" : "work through the notes");
    return a;
  };

  std::mt19937 rng(kSeed);
  std::uniform_int_distribution<int> delay_ms(0, 400);
  int kills = 0;
  int normal_ends = 0;
  bool first = true;
  while (kills < kKills) {
    const size_t before = server->requests().size();
    TalariaProcess talaria(how, args(!first));
    first = false;
    // Killed at a random moment after it reached the server (so every kill lands inside the
    // session's work, not before it started).
    ASSERT_TRUE(test_support::WaitUntil([&] { return server->requests().size() > before; },
                                        std::chrono::seconds(20)))
        << "run " << kills << " never sent a request\n"
        << talaria.err();
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms(rng)));
    if (talaria.Wait(std::chrono::milliseconds(0)).has_value()) {
      ++normal_ends;  // it answered before the kill came
      continue;
    }
    talaria.KillHard();
    ASSERT_TRUE(talaria.Wait(std::chrono::seconds(10)).has_value());
    ++kills;
    ASSERT_EQ(IntegrityCheck(home.talaria_home() + "/sessions.db"), "ok") << "after kill " << kills;
  }
  // A last run, left alone, ends normally.
  const CliRun last = RunTalaria(how, args(true));
  EXPECT_EQ(last.exit_code, 0) << last.err;

  EXPECT_EQ(server->ProblemsText(), "");
  // Some kill landed while a tool ran: a later request shows that call as interrupted.
  bool saw_interrupted = false;
  for (const auto& request : server->requests()) {
    const FakeJson body = request.Json();  // the loop below must not walk a temporary
    for (const auto& m : body["messages"]) {
      if (m.value("role", "") == "tool" &&
          m.value("content", "").find("interrupted") != std::string::npos) {
        saw_interrupted = true;
      }
    }
  }
  EXPECT_TRUE(saw_interrupted);
  RecordProperty("normal_ends", normal_ends);
  RecordProperty("kills", kills);
  RecordProperty("requests", static_cast<int>(server->requests().size()));
}

}  // namespace
}  // namespace talaria::testing_cli
