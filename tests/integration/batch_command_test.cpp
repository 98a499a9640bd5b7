// `talaria batch` as a user runs it: JSON lines or an assistant message in, one tool message
// per call out in call order, --plan, bad input, and SIGTERM cancelling a running batch with
// every child process gone before talaria exits.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>

#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli_harness.h"
#include "talaria/base/spawn.h"

namespace talaria {
namespace {

using ::testing::HasSubstr;
using testing_cli::CliRun;
using testing_cli::Describe;
using testing_cli::SplitLines;
using testing_cli::TempHome;

class BatchCli : public ::testing::Test {
 protected:
  void SetUp() override {
    work_ = home_.path() + "/work";
    std::filesystem::create_directories(work_);
    std::ofstream(work_ + "/a.txt") << "alpha\n";
  }
  CliRun Batch(const std::vector<std::string>& args, const std::string& input) {
    return testing_cli::RunTalaria({.home = home_.path(),
                                    .cwd = work_,
                                    .stdin_data = input,
                                    .timeout = std::chrono::seconds(30),
                                    .extra_env = {}},
                                   args);
  }
  TempHome home_;
  std::string work_;
};

TEST_F(BatchCli, JsonLinesGiveOneToolMessagePerCallInOrder) {
  const std::string input =
      R"({"name": "read_file", "arguments": {"path": "a.txt"}, "id": "c1"})"
      "\n"
      R"({"name": "terminal", "arguments": "{\"command\": \"echo from-shell\"}"})"
      "\n"
      "\n"
      R"({"name": "no_such_tool", "arguments": {}})"
      "\n"
      R"({"name": "search_files", "arguments": {"pattern": "alpha"}})"
      "\n";
  CliRun run = Batch({"batch", "--quiet", "-"}, input);
  EXPECT_EQ(run.exit_code, 1) << Describe({"batch"}, run);  // one call failed
  const auto lines = SplitLines(run.out);
  ASSERT_EQ(lines.size(), 4u) << run.out;
  auto msg = [&](size_t i) { return nlohmann::json::parse(lines[i]); };
  EXPECT_EQ(msg(0)["tool_call_id"], "c1");
  EXPECT_EQ(msg(0)["role"], "tool");
  EXPECT_THAT(msg(0)["content"].get<std::string>(), HasSubstr("alpha"));
  EXPECT_EQ(msg(1)["tool_call_id"], "call_1");
  EXPECT_THAT(msg(1)["content"].get<std::string>(), HasSubstr("from-shell"));
  EXPECT_EQ(msg(2)["status"], "error");
  EXPECT_THAT(msg(2)["content"].get<std::string>(), HasSubstr("Unknown tool"));
  EXPECT_EQ(msg(3)["name"], "search_files");
  EXPECT_EQ(msg(3)["status"], "ok");
}

TEST_F(BatchCli, ReadsAnAssistantMessageWithToolCalls) {
  const std::string input = R"({
    "role": "assistant",
    "tool_calls": [
      {"id": "t1", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\": \"a.txt\"}"}},
      {"id": "t2", "type": "function", "function": {"name": "write_file", "arguments": "{\"path\": \"b.txt\", \"content\": \"beta\\n\"}"}}
    ]
  })";
  CliRun run = Batch({"batch", "--quiet"}, input);
  ASSERT_EQ(run.exit_code, 0) << Describe({"batch"}, run);
  const auto lines = SplitLines(run.out);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(nlohmann::json::parse(lines[0])["tool_call_id"], "t1");
  EXPECT_EQ(nlohmann::json::parse(lines[1])["tool_call_id"], "t2");
  std::ifstream written(work_ + "/b.txt");
  std::string content((std::istreambuf_iterator<char>(written)), std::istreambuf_iterator<char>());
  EXPECT_EQ(content, "beta\n");
}

TEST_F(BatchCli, PlanPrintsSegmentsAndRunsNothing) {
  const std::string input = R"({"name": "read_file", "arguments": {"path": "a.txt"}})"
                            "\n"
                            R"({"name": "search_files", "arguments": {"pattern": "x"}})"
                            "\n"
                            R"({"name": "terminal", "arguments": {"command": "touch ran.txt"}})"
                            "\n";
  CliRun run = Batch({"batch", "--plan", "-"}, input);
  ASSERT_EQ(run.exit_code, 0) << Describe({"batch", "--plan"}, run);
  EXPECT_THAT(run.out, HasSubstr("parallel   #0 read_file, #1 search_files"));
  EXPECT_THAT(run.out, HasSubstr("#2 terminal (never parallel)"));
  EXPECT_FALSE(std::filesystem::exists(work_ + "/ran.txt"));
  CliRun json = Batch({"batch", "--plan", "--json"}, input);
  ASSERT_EQ(json.exit_code, 0) << Describe({"batch", "--plan", "--json"}, json);
  auto plan = nlohmann::json::parse(json.out);
  ASSERT_EQ(plan.size(), 2u);
  EXPECT_EQ(plan[0]["parallel"], true);
  EXPECT_EQ(plan[1]["calls"], nlohmann::json::array({2}));
}

TEST_F(BatchCli, BadInputIsAUsageErrorNamingTheLine) {
  CliRun run = Batch({"batch", "-"}, "{\"name\": \"read_file\"}\nnot json\n");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_THAT(run.err, HasSubstr("line 2"));
  CliRun missing = Batch({"batch", "/nonexistent/calls.jsonl"}, "");
  EXPECT_EQ(missing.exit_code, 2);
}

// Reads a started child's merged output until it closes (the descriptor is non-blocking).
std::string ReadAll(const StartedProcess& child) {
  std::string out;
  char buf[4096];
  for (int spins = 0; spins < 1000; ++spins) {
    pollfd p{child.output.get(), POLLIN, 0};
    ::poll(&p, 1, 100);
    const ssize_t n = ::read(child.output.get(), buf, sizeof buf);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) break;
    if (n > 0) out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

TEST_F(BatchCli, OnATerminalAProgressLineIsDrawnAndErased) {
  std::ofstream(work_ + "/calls.jsonl")
      << R"({"name": "terminal", "arguments": {"command": "sleep 0.3"}})"
         "\n"
      << R"({"name": "read_file", "arguments": {"path": "a.txt"}})"
         "\n";
  SpawnOptions spawn;
  spawn.argv = {TALARIA_CLI_PATH, "batch", "calls.jsonl"};
  spawn.cwd = work_;
  spawn.env = {"TALARIA_HOME=" + home_.path() + "/.talaria", "HOME=" + home_.path(),
               "PATH=/usr/bin:/bin", "TERM=dumb"};
  auto child = StartProcess(spawn, {.stdin_pipe = false, .pty = true});
  ASSERT_TRUE(child) << child.error().message();
  const std::string out = ReadAll(*child);
  siginfo_t info{};
  ::waitid(P_PID, static_cast<id_t>(child->pid), &info, WEXITED);
  EXPECT_EQ(info.si_status, 0) << out;
  EXPECT_THAT(out, HasSubstr("[0/2] running: terminal")) << out;
  EXPECT_THAT(out, HasSubstr("\r\x1b[K")) << "the line is redrawn in place and erased at the end";
  EXPECT_THAT(out, HasSubstr("\"tool_call_id\":\"call_1\""));
}

// Runs `talaria batch` on sleeping commands, sends SIGTERM once they run, and checks that
// talaria reports them cancelled and leaves no child behind.
TEST_F(BatchCli, SigtermCancelsTheBatchAndKillsEveryChild) {
  const std::string marker = "talaria-batch-test-" + std::to_string(::getpid());
  std::ofstream(work_ + "/calls.jsonl")
      << R"({"name": "terminal", "arguments": {"command": "exec -a )" << marker
      << R"( sleep 30"}})"
         "\n"
      << R"({"name": "terminal", "arguments": {"command": "sleep 31"}})"
         "\n";
  SpawnOptions spawn;
  spawn.argv = {TALARIA_CLI_PATH, "batch", "--quiet", "calls.jsonl"};
  spawn.cwd = work_;
  spawn.env = {"TALARIA_HOME=" + home_.path() + "/.talaria", "HOME=" + home_.path(),
               "PATH=/usr/bin:/bin"};
  spawn.merge_stderr = true;
  auto child = StartProcess(spawn, {});
  ASSERT_TRUE(child) << child.error().message();
  // Wait until the first command runs (its renamed process shows up).
  bool running = false;
  for (int i = 0; i < 500 && !running; ++i) {
    running = ::system(("pgrep -f '^" + marker + "' >/dev/null").c_str()) == 0;
    if (!running) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(running) << "the first command never started";
  ::kill(child->pid, SIGTERM);
  const std::string out = ReadAll(*child);
  siginfo_t info{};
  ::waitid(P_PID, static_cast<id_t>(child->pid), &info, WEXITED);
  EXPECT_EQ(info.si_code, CLD_EXITED);
  EXPECT_EQ(info.si_status, 128 + SIGTERM) << out;
  EXPECT_NE(::system(("pgrep -f '^" + marker + "' >/dev/null").c_str()), 0)
      << "the command outlived talaria";
  const auto lines = SplitLines(out);
  ASSERT_EQ(lines.size(), 2u) << out;
  EXPECT_EQ(nlohmann::json::parse(lines[0])["status"], "cancelled");
  EXPECT_EQ(nlohmann::json::parse(lines[1])["status"], "cancelled");
}

}  // namespace
}  // namespace talaria
