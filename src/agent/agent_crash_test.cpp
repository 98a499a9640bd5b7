// Crash safety of the loop for real: a child process (this test binary, re-run with a filter
// and environment variables) runs turns of one session against the scripted server and is
// SIGKILLed at seeded moments — mid-stream, mid-tool, between commits. Every time, the next
// child resumes the session; at the end the parent resumes it once more. The server validates
// every request any of them sent: a resumed session must always send a valid history.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/agent_test_util.h"
#include "support/self_spawn.h"

extern char** environ;

namespace talaria::agent::testing {
namespace {

using Json = nlohmann::ordered_json;

constexpr const char* kUrlEnv = "TALARIA_AGENT_CHILD_URL";
constexpr const char* kSessionEnv = "TALARIA_AGENT_CHILD_SESSION";
constexpr const char* kProjectEnv = "TALARIA_AGENT_CHILD_PROJECT";
constexpr const char* kKillsEnv = "TALARIA_AGENT_KILLS";  // how many kills (default 10)

// The child: resumes the session and runs turns until it is killed.
TEST(AgentCrashChild, RunTurns) {
  const char* url = std::getenv(kUrlEnv);
  const char* session = std::getenv(kSessionEnv);
  const char* project = std::getenv(kProjectEnv);
  if (url == nullptr || session == nullptr || project == nullptr) {
    GTEST_SKIP() << "helper for the crash test";
  }
  const char* home = std::getenv("TALARIA_HOME");
  auto store = store::SessionStore::Open(std::string(home) + "/sessions.db");
  if (!store) std::_Exit(5);
  ModelSettings model;
  model.base_url = url;
  model.model = "fake-model";
  model.max_retries = 0;
  AgentOptions options;
  options.roots = {project};
  options.toolsets = {"terminal", "file"};
  options.config_path = std::string(home) + "/config.yaml";
  options.enable_code_execution = false;
  options.resume_session_id = session;
  auto agent = Agent::Open(options, model, std::move(*store));
  if (!agent) std::_Exit(6);
  for (int i = 0;; ++i) (void)(*agent)->RunTurn("step " + std::to_string(i), nullptr, {});
}

pid_t SpawnChild(const std::string& url, const std::string& session, const std::string& project) {
  return test_support::SpawnSelf(
      {.test = "AgentCrashChild.RunTurns",
       .env = {{kUrlEnv, url}, {kSessionEnv, session}, {kProjectEnv, project}},
       .quiet_stderr = true});
}

// Turns that fit any history: a slow command (most of the time is spent in tools, so kills
// land mid-tool), a read, then an answer.
std::string Script() {
  Json turns = Json::array();
  for (int i = 0; i < 400; ++i) {
    turns.push_back(
        {{"tool_calls",
          {{{"name", "terminal"},
            {"arguments",
             {{"command", "sleep 0.05; echo " + std::to_string(i) + " >> log.txt"}}}}}}});
    turns.push_back(
        {{"tool_calls", {{{"name", "read_file"}, {"arguments", {{"path", "log.txt"}}}}}}});
    turns.push_back({{"text", "step " + std::to_string(i) + " done"}});
  }
  return Json{{"turns", turns}}.dump();
}

using AgentCrash = AgentFixture;

TEST_F(AgentCrash, EveryResumeAfterAKillSendsAValidHistory) {
  Serve(Script());
  Open();
  ASSERT_EQ(Turn("start").exit, TurnExit::kAnswered);
  const std::string id = agent_->session_id();
  agent_.reset();

  const char* kills_text = std::getenv(kKillsEnv);
  const int kills = kills_text != nullptr ? std::max(1, std::atoi(kills_text)) : 10;
  std::mt19937 random(20);
  std::uniform_int_distribution<int> delay_ms(30, 250);
  for (int k = 0; k < kills; ++k) {
    const size_t requests_before = server_->requests().size();
    const pid_t pid = SpawnChild(server_->base_url(), id, project_.path());
    ASSERT_GT(pid, 0);
    // The kill's moment counts from the child's first request, not from its spawn: a child
    // slowed by a loaded machine or a sanitizer would otherwise die before it resumed anything.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (server_->requests().size() == requests_before &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms(random)));
    ASSERT_EQ(::kill(pid, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFSIGNALED(status)) << "the child ended before its kill: " << status;
  }

  AgentOptions options = Options();
  options.resume_session_id = id;
  Open(options);
  TurnResult r = Turn("where are we?");
  EXPECT_NE(r.exit, TurnExit::kModelFailed) << r.error;
  EXPECT_EQ(server_->ProblemsText(), "");
  EXPECT_GT(server_->requests().size(), static_cast<size_t>(kills));
  // Calls cut off by a kill are answered, never pruned: the model sees them.
  int interrupted = 0;
  for (const auto& m : History()) {
    if (m.role == "tool" && m.content.find("interrupted") != std::string::npos) ++interrupted;
  }
  EXPECT_GE(interrupted, 1);
}

}  // namespace
}  // namespace talaria::agent::testing
