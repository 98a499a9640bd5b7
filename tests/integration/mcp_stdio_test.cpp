// `talaria mcp` as an MCP client runs it: a real process speaking newline-delimited JSON-RPC on
// stdin/stdout, with stderr kept apart so stdout can be checked to carry protocol lines only.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

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

// One running `talaria mcp`, driven line by line.
class McpProcess : public testing_cli::McpProcessBase {
 public:
  McpProcess(const std::string& home, const std::string& cwd, const std::vector<std::string>& args,
             const std::vector<std::string>& extra_env = {})
      : McpProcessBase(home, cwd, args, /*stdin_pipe=*/true, extra_env) {}

  void Send(const std::string& line) {
    const std::string data = line + "\n";
    ASSERT_EQ(::write(child_.input.get(), data.data(), data.size()),
              static_cast<ssize_t>(data.size()));
  }
  void Send(const json& message) { Send(message.dump()); }
  void CloseInput() { child_.input.reset(); }

  // The next line talaria printed, parsed; null after `timeout` or at EOF.
  json Next(std::chrono::milliseconds timeout = 5s) {
    const auto until = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      if (size_t nl = buffer_.find('\n'); nl != std::string::npos) {
        std::string line = buffer_.substr(0, nl);
        buffer_.erase(0, nl + 1);
        json parsed = json::parse(line, nullptr, /*allow_exceptions=*/false);
        EXPECT_FALSE(parsed.is_discarded()) << "stdout carried a non-JSON line: " << line;
        return parsed;
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          until - std::chrono::steady_clock::now());
      if (left.count() <= 0 || eof_) return json();
      pollfd p{child_.output.get(), POLLIN, 0};
      ::poll(&p, 1, static_cast<int>(left.count()));
      char buf[65536];
      const ssize_t n = ::read(child_.output.get(), buf, sizeof buf);
      if (n == 0) eof_ = true;
      if (n > 0) buffer_.append(buf, static_cast<size_t>(n));
    }
  }
  // The next message `want` accepts, skipping others (notifications); null after `timeout`.
  template <typename Want>
  json NextWhere(Want want, std::chrono::milliseconds timeout = 5s) {
    const auto until = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          until - std::chrono::steady_clock::now());
      if (left.count() <= 0) return json();
      json m = Next(left);
      if (m.is_null() || want(m)) return m;
    }
  }
  // The answer to request `id`.
  json AnswerTo(int id, std::chrono::milliseconds timeout = 5s) {
    return NextWhere(
        [id](const json& m) { return m.contains("id") && m["id"] == id && !m.contains("method"); },
        timeout);
  }
  // A request of the server's (roots/list, elicitation/create, ...).
  json ServerRequest(const std::string& method, std::chrono::milliseconds timeout = 5s) {
    return NextWhere(
        [&method](const json& m) { return m.value("method", "") == method && m.contains("id"); },
        timeout);
  }

 private:
  std::string buffer_;
  bool eof_ = false;
};

using testing_cli::Request;

class McpStdio : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = home_.path() + "/root";
    std::filesystem::create_directories(root_);
    std::ofstream(root_ + "/a.txt") << "alpha\nbeta\n";
  }
  void Initialize(McpProcess& mcp) {
    mcp.Send(Request(1, "initialize",
                     {{"protocolVersion", "2025-11-25"},
                      {"capabilities", json::object()},
                      {"clientInfo", {{"name", "it"}, {"version", "1"}}}}));
    json init = mcp.Next();
    ASSERT_EQ(init["id"], 1) << init.dump() << "\nstderr: " << mcp.Stderr();
    EXPECT_EQ(init["result"]["protocolVersion"], "2025-11-25");
    EXPECT_EQ(init["result"]["serverInfo"]["name"], "talaria");
    EXPECT_EQ(init["result"]["capabilities"]["tools"]["listChanged"], true);
    mcp.Send(json{{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}});
  }
  // initialize declaring the roots capability, then notifications/initialized.
  void InitializeWithRoots(McpProcess& mcp) {
    mcp.Send(Request(1, "initialize",
                     {{"protocolVersion", "2025-11-25"},
                      {"capabilities", {{"roots", {{"listChanged", true}}}}},
                      {"clientInfo", {{"name", "it"}, {"version", "1"}}}}));
    json init = mcp.AnswerTo(1);
    ASSERT_EQ(init["id"], 1) << init.dump() << "\nstderr: " << mcp.Stderr();
    mcp.Send(json{{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}});
  }
  static json ReadFile(int id, const std::string& path) {
    return Request(id, "tools/call", {{"name", "read_file"}, {"arguments", {{"path", path}}}});
  }
  TempHome home_;
  std::string root_;
};

// One server serves many conversations: the read guardrails (which assume the caller's context
// still holds the earlier result) are off over MCP unless configured.
TEST_F(McpStdio, EveryReadOfAnUnchangedFileReturnsItsContent) {
  McpProcess mcp(home_.path(), home_.path(), {"--root", root_});
  Initialize(mcp);
  for (int id = 10; id < 60; ++id) {
    mcp.Send(ReadFile(id, "a.txt"));
    json read = mcp.AnswerTo(id);
    ASSERT_EQ(read["id"], id) << read.dump() << "\nstderr: " << mcp.Stderr();
    ASSERT_FALSE(read["result"].value("isError", false))
        << "read " << id - 9 << ": " << read.dump();
    ASSERT_THAT(read["result"]["content"][0]["text"].get<std::string>(), HasSubstr("alpha"))
        << "read " << id - 9 << ": " << read.dump();
  }
  mcp.CloseInput();
  EXPECT_EQ(mcp.Wait(), 0) << mcp.Stderr();
}

TEST_F(McpStdio, ReadGuardsComeBackWhenConfigured) {
  home_.WriteConfig("mcp:\n  read_guards: true\n");
  McpProcess mcp(home_.path(), home_.path(), {"--root", root_});
  Initialize(mcp);
  std::vector<json> reads;
  for (int id = 10; id < 14; ++id) {
    mcp.Send(ReadFile(id, "a.txt"));
    reads.push_back(mcp.AnswerTo(id));
  }
  EXPECT_THAT(reads[0].dump(), HasSubstr("alpha"));
  EXPECT_THAT(reads[1].dump(), HasSubstr("File unchanged since last read"));
  EXPECT_THAT(reads[1].dump(), ::testing::Not(HasSubstr("alpha")));
  EXPECT_EQ(reads[3]["result"]["isError"], true) << reads[3].dump();
  EXPECT_THAT(reads[3].dump(), HasSubstr("BLOCKED"));
  mcp.CloseInput();
  EXPECT_EQ(mcp.Wait(), 0) << mcp.Stderr();
}

// A client that declares roots and answers roots/list only after sending its first call: that
// call waits for the roots, so a file outside them is refused, in every fresh session.
TEST_F(McpStdio, CallsBeforeTheClientsRootsAreKnownWaitForThem) {
  std::filesystem::create_directories(root_ + "/sub");
  std::ofstream(root_ + "/sub/in.txt") << "inside\n";
  for (int session = 0; session < 10; ++session) {
    SCOPED_TRACE("session " + std::to_string(session));
    McpProcess mcp(home_.path(), home_.path(), {"--root", root_});
    InitializeWithRoots(mcp);
    mcp.Send(ReadFile(2, root_ + "/a.txt"));  // outside the client's root, inside --root
    json ask = mcp.ServerRequest("roots/list");
    ASSERT_FALSE(ask.is_null()) << mcp.Stderr();
    mcp.Send(json{{"jsonrpc", "2.0"},
                  {"id", ask["id"]},
                  {"result", {{"roots", {{{"uri", "file://" + root_ + "/sub"}}}}}}});
    json outside = mcp.AnswerTo(2);
    ASSERT_EQ(outside["id"], 2) << outside.dump();
    EXPECT_EQ(outside["result"]["isError"], true) << outside.dump();
    EXPECT_THAT(outside.dump(), ::testing::Not(HasSubstr("alpha")));
    mcp.Send(ReadFile(3, root_ + "/sub/in.txt"));
    json inside = mcp.AnswerTo(3);
    EXPECT_FALSE(inside["result"].value("isError", false)) << inside.dump();
    EXPECT_THAT(inside.dump(), HasSubstr("inside"));
    mcp.CloseInput();
    EXPECT_EQ(mcp.Wait(), 0) << mcp.Stderr();
  }
}

// A client that declares roots but never names them is refused with the reason, never served
// from the wider --root; so is one whose roots all lie outside --root.
TEST_F(McpStdio, CallsAreRefusedWhenTheClientsRootsNeverArriveOrMissRoot) {
  home_.WriteConfig("mcp:\n  roots_timeout_ms: 300\n");
  {
    McpProcess mcp(home_.path(), home_.path(), {"--root", root_});
    InitializeWithRoots(mcp);
    mcp.Send(ReadFile(2, "a.txt"));
    json refused = mcp.AnswerTo(2);
    ASSERT_EQ(refused["id"], 2) << refused.dump() << "\nstderr: " << mcp.Stderr();
    EXPECT_EQ(refused["result"]["isError"], true) << refused.dump();
    EXPECT_THAT(refused.dump(), HasSubstr("has not answered roots/list"));
    EXPECT_THAT(refused.dump(), ::testing::Not(HasSubstr("alpha")));
    mcp.Send(Request(3, "tools/call",
                     {{"name", "terminal"}, {"arguments", {{"command", "cat a.txt"}}}}));
    json terminal = mcp.AnswerTo(3);
    EXPECT_EQ(terminal["result"]["isError"], true) << terminal.dump();
    EXPECT_THAT(terminal.dump(), ::testing::Not(HasSubstr("alpha")));
    mcp.CloseInput();
    EXPECT_EQ(mcp.Wait(), 0) << mcp.Stderr();
  }
  const std::string outside = home_.path() + "/elsewhere";
  std::filesystem::create_directories(outside);
  McpProcess mcp(home_.path(), home_.path(), {"--root", root_});
  InitializeWithRoots(mcp);
  json ask = mcp.ServerRequest("roots/list");
  ASSERT_FALSE(ask.is_null()) << mcp.Stderr();
  mcp.Send(json{{"jsonrpc", "2.0"},
                {"id", ask["id"]},
                {"result", {{"roots", {{{"uri", "file://" + outside}}}}}}});
  mcp.Send(ReadFile(2, "a.txt"));
  json refused = mcp.AnswerTo(2);
  EXPECT_EQ(refused["result"]["isError"], true) << refused.dump();
  EXPECT_THAT(refused.dump(), HasSubstr("none of the client's roots"));
  mcp.CloseInput();
  EXPECT_EQ(mcp.Wait(), 0) << mcp.Stderr();
}

TEST_F(McpStdio, ServesASessionFromInitializeToEof) {
  McpProcess mcp(home_.path(), home_.path(), {"--root", root_});
  Initialize(mcp);

  mcp.Send(Request(2, "tools/list"));
  json list = mcp.Next();
  ASSERT_EQ(list["id"], 2) << list.dump();
  std::vector<std::string> names;
  for (const auto& t : list["result"]["tools"]) names.push_back(t["name"]);
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  EXPECT_THAT(names, ::testing::IsSupersetOf(
                         {"read_file", "write_file", "patch", "search_files", "terminal"}));
  EXPECT_THAT(names, ::testing::Not(::testing::Contains("clarify")));
  for (const auto& t : list["result"]["tools"]) {
    if (t["name"] == "read_file") {
      EXPECT_EQ(t["annotations"]["readOnlyHint"], true);
      EXPECT_EQ(t["inputSchema"]["type"], "object");
    }
  }

  mcp.Send(Request(3, "tools/call", {{"name", "read_file"}, {"arguments", {{"path", "a.txt"}}}}));
  json read = mcp.Next();
  ASSERT_EQ(read["id"], 3) << read.dump();
  EXPECT_THAT(read["result"]["content"][0]["text"].get<std::string>(), HasSubstr("alpha"));
  EXPECT_TRUE(read["result"]["structuredContent"].is_object());
  EXPECT_FALSE(read["result"].contains("isError"));

  mcp.Send(
      Request(4, "tools/call", {{"name", "read_file"}, {"arguments", {{"path", "/etc/passwd"}}}}));
  json outside = mcp.Next();
  ASSERT_EQ(outside["id"], 4) << outside.dump();
  EXPECT_EQ(outside["result"]["isError"], true);  // outside --root

  mcp.Send(std::string("{\"jsonrpc\": \"2.0\", \"id\": 5, \"method\": "));  // malformed
  json parse_error = mcp.Next();
  EXPECT_EQ(parse_error["error"]["code"], -32700) << parse_error.dump();
  EXPECT_TRUE(parse_error["id"].is_null());

  mcp.Send(
      std::string("{\"jsonrpc\": \"2.0\", \"id\": 7, \"method\": \"p\xff\"}"));  // invalid UTF-8
  EXPECT_EQ(mcp.Next()["error"]["code"], -32700);
  mcp.Send(std::string(5000, '[') + std::string(5000, ']'));  // absurd nesting
  EXPECT_EQ(mcp.Next()["error"]["code"], -32700);

  mcp.Send(Request(6, "ping"));
  json pong = mcp.Next();
  EXPECT_EQ(pong["id"], 6);
  EXPECT_EQ(pong["result"], json::object());

  mcp.CloseInput();
  EXPECT_EQ(mcp.Wait(), 0) << mcp.Stderr();
  EXPECT_TRUE(mcp.Next(500ms).is_null()) << "nothing after the last answer";
}

// The client's roots narrow the workspace inside --root, and never widen it.
TEST_F(McpStdio, ClientRootsNarrowTheWorkspaceOnlyInsideRoot) {
  std::filesystem::create_directories(root_ + "/sub");
  std::ofstream(root_ + "/sub/in.txt") << "inside\n";
  const std::string outside = home_.path() + "/elsewhere";
  std::filesystem::create_directories(outside);
  std::ofstream(outside + "/secret.txt") << "secret\n";
  std::filesystem::create_symlink(outside, root_ + "/sub/link-out");

  McpProcess mcp(home_.path(), home_.path(), {"--root", root_});
  mcp.Send(Request(1, "initialize",
                   {{"protocolVersion", "2025-11-25"},
                    {"capabilities", {{"roots", {{"listChanged", true}}}}},
                    {"clientInfo", {{"name", "it"}, {"version", "1"}}}}));
  ASSERT_EQ(mcp.Next()["id"], 1);
  mcp.Send(json{{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}});
  json ask = mcp.Next();
  ASSERT_EQ(ask["method"], "roots/list") << ask.dump();
  // One root inside --root (percent-encoded), one outside it, one a link that leads outside.
  mcp.Send(json{{"jsonrpc", "2.0"},
                {"id", ask["id"]},
                {"result",
                 {{"roots",
                   {{{"uri", "file://" + root_ + "/s%75b"}},
                    {{"uri", "file://" + outside}},
                    {{"uri", "file://" + root_ + "/sub/link-out"}}}}}}});
  // Calls wait for the roots: no retry needed.
  const auto read = [&](int id, const std::string& path) {
    mcp.Send(ReadFile(id, path));
    return mcp.AnswerTo(id);
  };
  json in = read(10, root_ + "/sub/in.txt");
  EXPECT_THAT(in.dump(), HasSubstr("inside"));
  EXPECT_EQ(read(100, root_ + "/a.txt")["result"]["isError"], true) << "narrowed to sub/";
  EXPECT_EQ(read(200, outside + "/secret.txt")["result"]["isError"], true) << "never widened";
  // The terminal is narrowed too: its shell starts in the client's root, not in --root.
  mcp.Send(Request(300, "tools/call", {{"name", "terminal"}, {"arguments", {{"command", "pwd"}}}}));
  json pwd = mcp.Next();
  EXPECT_THAT(pwd.dump(), HasSubstr(root_ + "/sub\\n")) << pwd.dump();
  EXPECT_THAT(mcp.Stderr(), HasSubstr("ignoring the client's root"));
  mcp.CloseInput();
  EXPECT_EQ(mcp.Wait(), 0) << mcp.Stderr();
}

TEST_F(McpStdio, CancelKillsTheCallsChildrenWhilePingIsStillServed) {
  const std::string marker = "talaria-mcp-test-" + std::to_string(::getpid());
  McpProcess mcp(home_.path(), root_, {"--root", root_});
  Initialize(mcp);
  mcp.Send(Request(
      2, "tools/call",
      {{"name", "terminal"}, {"arguments", {{"command", "exec -a " + marker + " sleep 30"}}}}));
  bool running = false;
  for (int i = 0; i < 300 && !running; ++i) {
    running = ::system(("pgrep -f '^" + marker + "' >/dev/null").c_str()) == 0;
    if (!running) std::this_thread::sleep_for(10ms);
  }
  ASSERT_TRUE(running) << "the command never started; stderr: " << mcp.Stderr();
  mcp.Send(Request(3, "ping"));
  EXPECT_EQ(mcp.Next()["id"], 3) << "ping waited for the running call";
  mcp.Send(json{
      {"jsonrpc", "2.0"}, {"method", "notifications/cancelled"}, {"params", {{"requestId", 2}}}});
  bool gone = false;
  for (int i = 0; i < 300 && !gone; ++i) {
    gone = ::system(("pgrep -f '^" + marker + "' >/dev/null").c_str()) != 0;
    if (!gone) std::this_thread::sleep_for(10ms);
  }
  EXPECT_TRUE(gone) << "the cancelled command is still running";
  mcp.Send(Request(4, "ping"));
  json next = mcp.Next();
  EXPECT_EQ(next["id"], 4) << "the cancelled call must not be answered: " << next.dump();
  mcp.CloseInput();
  EXPECT_EQ(mcp.Wait(), 0);
}

// Issue 18, finding 13: closing stdin ends the server without waiting for running calls: they
// are cancelled. The call below would finish (and touch its file) if it were waited for.
TEST_F(McpStdio, StdinEofCancelsRunningCallsAndExits) {
  const std::string marker = "talaria-mcp-eof-" + std::to_string(::getpid());
  const std::string finished = root_ + "/finished";
  McpProcess mcp(home_.path(), root_, {"--root", root_});
  Initialize(mcp);
  mcp.Send(
      Request(2, "tools/call",
              {{"name", "terminal"},
               {"arguments",
                {{"command", "bash -c 'exec -a " + marker + " sleep 6' && touch " + finished}}}}));
  bool running = false;
  for (int i = 0; i < 300 && !running; ++i) {
    running = ::system(("pgrep -f '^" + marker + "' >/dev/null").c_str()) == 0;
    if (!running) std::this_thread::sleep_for(10ms);
  }
  ASSERT_TRUE(running) << "the command never started; stderr: " << mcp.Stderr();
  mcp.CloseInput();
  // A generous bound only so a broken build cannot hang the suite.
  EXPECT_EQ(mcp.Wait(60s), 0) << mcp.Stderr();
  EXPECT_FALSE(std::filesystem::exists(finished))
      << "the running call was waited for, not cancelled";
  EXPECT_NE(::system(("pgrep -f '^" + marker + "' >/dev/null").c_str()), 0)
      << "the command outlived talaria";
}

TEST_F(McpStdio, SigtermCancelsRunningCallsAndExits) {
  const std::string marker = "talaria-mcp-term-" + std::to_string(::getpid());
  McpProcess mcp(home_.path(), root_, {"--root", root_});
  Initialize(mcp);
  mcp.Send(Request(
      2, "tools/call",
      {{"name", "terminal"}, {"arguments", {{"command", "exec -a " + marker + " sleep 30"}}}}));
  bool running = false;
  for (int i = 0; i < 300 && !running; ++i) {
    running = ::system(("pgrep -f '^" + marker + "' >/dev/null").c_str()) == 0;
    if (!running) std::this_thread::sleep_for(10ms);
  }
  ASSERT_TRUE(running) << "the command never started; stderr: " << mcp.Stderr();
  mcp.Signal(SIGTERM);
  EXPECT_EQ(mcp.Wait(), 128 + SIGTERM) << mcp.Stderr();
  EXPECT_NE(::system(("pgrep -f '^" + marker + "' >/dev/null").c_str()), 0)
      << "the command outlived talaria";
}

TEST_F(McpStdio, ToolsetsFlagSelectsWhatIsServedAndAnUnknownOneIsAUsageError) {
  const std::string input =
      Request(1, "initialize", {{"protocolVersion", "2024-11-05"}}).dump() + "\n" +
      json{{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}}.dump() + "\n" +
      Request(2, "tools/list").dump() + "\n";
  auto run = testing_cli::RunTalaria({.home = home_.path(),
                                      .cwd = root_,
                                      .stdin_data = input,
                                      .timeout = std::chrono::seconds(10),
                                      .extra_env = {}},
                                     {"mcp", "--toolsets", "file"});
  ASSERT_EQ(run.exit_code, 0) << testing_cli::Describe({"mcp"}, run);
  const auto lines = testing_cli::SplitLines(run.out);
  ASSERT_EQ(lines.size(), 2u) << run.out;
  EXPECT_EQ(json::parse(lines[0])["result"]["protocolVersion"], "2024-11-05");
  std::vector<std::string> names;
  const json list = json::parse(lines[1]);
  for (const auto& t : list["result"]["tools"]) names.push_back(t["name"]);
  EXPECT_THAT(names, ::testing::Contains("read_file"));
  EXPECT_THAT(names, ::testing::Not(::testing::Contains("terminal")));

  // Issue 18, finding 6: even `all` never serves what only an agent loop can run.
  auto all = testing_cli::RunTalaria({.home = home_.path(),
                                      .cwd = root_,
                                      .stdin_data = input,
                                      .timeout = std::chrono::seconds(10),
                                      .extra_env = {}},
                                     {"mcp", "--toolsets", "all"});
  ASSERT_EQ(all.exit_code, 0) << testing_cli::Describe({"mcp", "--toolsets", "all"}, all);
  const auto all_lines = testing_cli::SplitLines(all.out);
  ASSERT_EQ(all_lines.size(), 2u) << all.out;
  std::vector<std::string> all_names;
  const json all_list = json::parse(all_lines[1]);
  for (const auto& t : all_list["result"]["tools"]) all_names.push_back(t["name"]);
  EXPECT_THAT(all_names, ::testing::IsSupersetOf({"read_file", "terminal", "execute_code"}));
  for (const char* loop : {"todo", "memory", "clarify", "delegate_task"}) {
    EXPECT_THAT(all_names, ::testing::Not(::testing::Contains(loop)));
  }
  // session_search runs here (read-only over the sessions database, issue 21).
  EXPECT_THAT(all_names, ::testing::Contains("session_search"));

  auto bad = testing_cli::RunTalaria({.home = home_.path(),
                                      .cwd = root_,
                                      .stdin_data = "",
                                      .timeout = std::chrono::seconds(10),
                                      .extra_env = {}},
                                     {"mcp", "--toolsets", "nope"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.err, HasSubstr("nope"));
  EXPECT_TRUE(bad.out.empty());
}

}  // namespace
}  // namespace talaria

namespace talaria {
namespace {

// clarify over MCP: the question reaches the client's user as elicitation/create, the answer
// goes back to the model as {question, choices_offered, user_response}; a client that cannot
// elicit gets a result telling the model nobody can answer.
TEST_F(McpStdio, ClarifyAsksTheClientsUserThroughElicitation) {
  McpProcess mcp(home_.path(), home_.path(), {"--root", root_});
  mcp.Send(Request(1, "initialize",
                   {{"protocolVersion", "2025-11-25"},
                    {"capabilities", {{"elicitation", json::object()}}},
                    {"clientInfo", {{"name", "it"}, {"version", "1"}}}}));
  ASSERT_EQ(mcp.AnswerTo(1)["id"], 1) << mcp.Stderr();
  mcp.Send(json{{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}});
  mcp.Send(Request(2, "tools/list", json::object()));
  const json list = mcp.AnswerTo(2);
  bool listed = false;
  for (const auto& tool : list["result"]["tools"]) listed = listed || tool["name"] == "clarify";
  EXPECT_TRUE(listed) << list.dump();

  mcp.Send(Request(
      3, "tools/call",
      {{"name", "clarify"},
       {"arguments",
        {{"question", "  Which database?  "}, {"choices", {"PostgreSQL", " ", "SQLite"}}}}}));
  const json ask = mcp.ServerRequest("elicitation/create");
  ASSERT_TRUE(ask.is_object()) << mcp.Stderr();
  EXPECT_EQ(ask["params"]["message"], "Which database?");
  const json& field = ask["params"]["requestedSchema"]["properties"]["answer"];
  EXPECT_EQ(field["enum"], json::array({"PostgreSQL", "SQLite"})) << ask.dump();
  mcp.Send(json{{"jsonrpc", "2.0"},
                {"id", ask["id"]},
                {"result", {{"action", "accept"}, {"content", {{"answer", "SQLite"}}}}}});
  const json answered = mcp.AnswerTo(3);
  ASSERT_FALSE(answered["result"].value("isError", false)) << answered.dump();
  const json body = json::parse(answered["result"]["content"][0]["text"].get<std::string>());
  EXPECT_EQ(body["question"], "Which database?");
  EXPECT_EQ(body["choices_offered"], json::array({"PostgreSQL", "SQLite"}));
  EXPECT_EQ(body["user_response"], "SQLite");

  // Declined: the model is told, and the call still succeeds.
  mcp.Send(
      Request(4, "tools/call", {{"name", "clarify"}, {"arguments", {{"question", "Go on?"}}}}));
  const json ask2 = mcp.ServerRequest("elicitation/create");
  ASSERT_TRUE(ask2.is_object());
  mcp.Send(json{{"jsonrpc", "2.0"}, {"id", ask2["id"]}, {"result", {{"action", "decline"}}}});
  const json declined = mcp.AnswerTo(4);
  EXPECT_THAT(declined["result"]["content"][0]["text"].get<std::string>(), HasSubstr("declined"));
}

TEST_F(McpStdio, ClarifyWithoutElicitationTellsTheModelNobodyCanAnswer) {
  McpProcess mcp(home_.path(), home_.path(), {"--root", root_});
  Initialize(mcp);
  mcp.Send(Request(2, "tools/call", {{"name", "clarify"}, {"arguments", {{"question", "Why?"}}}}));
  const json answered = mcp.AnswerTo(2);
  EXPECT_TRUE(answered["result"].value("isError", false)) << answered.dump();
  EXPECT_THAT(answered["result"]["content"][0]["text"].get<std::string>(),
              HasSubstr("No user is available"));
}

}  // namespace
}  // namespace talaria

namespace talaria {
namespace {

// mixture_of_agents served by `talaria mcp --toolsets moa`, its moa: section pointing at the
// scripted OpenAI-compatible server (one endpoint, each turn taken by the request's model). The
// fake checks what each model is asked: the prompt, the key, max_tokens (32,000 for a reference
// model unless its entry says otherwise, none for the aggregator) and temperatures.
constexpr std::string_view kMoaItKeyVar = "TALARIA_IT_MOA_KEY";

std::string MoaItConfig(const std::string& base_url, const std::string& extra = "") {
  return "moa:\n  base_url: " + base_url + "\n  api_key_env: " + std::string(kMoaItKeyVar) +
         "\n  max_retries: 0\n"
         "  reference_models: [ref-one, {name: ref-two, temperature: 0.6, max_tokens: 500}, "
         "ref-down]\n"
         "  aggregator: {name: agg, temperature: 0.4}\n" +
         extra;
}

json MoaItCall(int id) {
  return Request(id, "tools/call",
                 {{"name", "mixture_of_agents"},
                  {"arguments", {{"user_prompt", "PROBLEM: the knapsack bound"}}}});
}

constexpr std::string_view kMoaItReferences = R"(
    {"label": "ref-one", "match": {"model": "ref-one"},
     "expect": {"last_content_contains": "PROBLEM: the knapsack bound",
                "header_contains": "Authorization: Bearer sk-moa-it",
                "fields": {"max_tokens": 32000, "temperature": null}},
     "text": "answer one", "usage": {"prompt_tokens": 10, "completion_tokens": 5}},
    {"label": "ref-two", "match": {"model": "ref-two"},
     "expect": {"fields": {"max_tokens": 500, "temperature": 0.6}},
     "text": "answer two", "usage": {"prompt_tokens": 10, "completion_tokens": 5}},
    {"label": "ref-down", "match": {"model": "ref-down"},
     "fault": {"kind": "500", "message": "ref-down is overloaded"}})";

TEST_F(McpStdio, MixtureOfAgentsAsksEveryModelAndAnswersTheClient) {
  auto llm = testing_cli::StartScriptedLlm(test_support::FakeJson::parse(
      std::string(R"({"turns": [)") + std::string(kMoaItReferences) + R"(,
    {"label": "agg", "match": {"model": "agg"},
     "expect": {"system_contains": "Responses from models:\n1. answer one\n2. answer two",
                "last_content_contains": "PROBLEM: the knapsack bound",
                "header_contains": "Authorization: Bearer sk-moa-it",
                "fields": {"max_tokens": null, "temperature": 0.4}},
     "text": "the synthesis"}]})"));
  ASSERT_TRUE(llm);
  home_.WriteConfig(MoaItConfig(llm->base_url()));
  McpProcess mcp(home_.path(), home_.path(), {"--toolsets", "moa"},
                 {std::string(kMoaItKeyVar) + "=sk-moa-it"});
  Initialize(mcp);
  mcp.Send(Request(2, "tools/list"));
  json list = mcp.AnswerTo(2);
  ASSERT_EQ(list["result"]["tools"].size(), 1u) << list.dump() << "\nstderr: " << mcp.Stderr();
  EXPECT_EQ(list["result"]["tools"][0]["name"], "mixture_of_agents");

  mcp.Send(MoaItCall(3));
  json call = mcp.AnswerTo(3, 60s);  // a hang guard only
  ASSERT_TRUE(call.contains("result")) << call.dump() << "\nstderr: " << mcp.Stderr();
  EXPECT_FALSE(call["result"].value("isError", false)) << call.dump();
  const json answer = json::parse(call["result"]["content"][0]["text"].get<std::string>());
  EXPECT_EQ(answer["success"], true) << answer.dump();
  EXPECT_EQ(answer["response"], "the synthesis");
  EXPECT_EQ(answer["models_used"]["reference_models"], json({"ref-one", "ref-two", "ref-down"}));
  EXPECT_EQ(answer["models_used"]["aggregator_model"], "agg");
  // The failing reference model is named with the endpoint's own words.
  ASSERT_EQ(answer["failed_models"].size(), 1u) << answer.dump();
  EXPECT_EQ(answer["failed_models"][0]["model"], "ref-down");
  EXPECT_THAT(answer["failed_models"][0]["error"].get<std::string>(),
              HasSubstr("ref-down is overloaded"));

  EXPECT_EQ(llm->ProblemsText(), "");
  EXPECT_EQ(llm->turns_remaining(), 0u) << "every model was asked";
  EXPECT_EQ(llm->requests().size(), 4u) << "each once";
  mcp.CloseInput();
  EXPECT_EQ(mcp.Wait(), 0) << mcp.Stderr();
}

// Too few reference answers: the call fails as a tool error naming the failed model, and the
// aggregator is never asked.
TEST_F(McpStdio, MixtureOfAgentsWithTooFewAnswersIsAToolErrorNamingTheFailure) {
  auto llm = testing_cli::StartScriptedLlm(test_support::FakeJson::parse(
      std::string(R"({"turns": [)") + std::string(kMoaItReferences) + "]}"));
  ASSERT_TRUE(llm);
  home_.WriteConfig(MoaItConfig(llm->base_url(), "  min_successful: 3\n"));
  McpProcess mcp(home_.path(), home_.path(), {"--toolsets", "moa"},
                 {std::string(kMoaItKeyVar) + "=sk-moa-it"});
  Initialize(mcp);
  mcp.Send(MoaItCall(2));
  json call = mcp.AnswerTo(2, 60s);  // a hang guard only
  ASSERT_TRUE(call.contains("result")) << call.dump() << "\nstderr: " << mcp.Stderr();
  EXPECT_EQ(call["result"]["isError"], true) << call.dump();
  const json answer = json::parse(call["result"]["content"][0]["text"].get<std::string>());
  EXPECT_EQ(answer["success"], false);
  const std::string error = answer["error"];
  EXPECT_THAT(error, HasSubstr("2 of 3 reference models answered; at least 3 needed"));
  EXPECT_THAT(error, HasSubstr("ref-down"));
  EXPECT_THAT(error, HasSubstr("ref-down is overloaded"));
  for (const auto& r : llm->requests()) EXPECT_NE(r.Json()["model"], "agg");
  EXPECT_EQ(llm->ProblemsText(), "");
  mcp.CloseInput();
  EXPECT_EQ(mcp.Wait(), 0) << mcp.Stderr();
}

// Without its key (or without a moa: section) the tool is not listed; a call of it, and the
// server's stderr, say why. No model is asked.
TEST_F(McpStdio, MixtureOfAgentsIsServedOnlyWhenConfiguredAndSaysWhyNot) {
  auto llm = testing_cli::StartScriptedLlm(test_support::FakeJson::parse(R"({"turns": []})"));
  ASSERT_TRUE(llm);
  struct Case {
    std::string config;
    std::string reason;
  };
  const std::vector<Case> cases = {
      {MoaItConfig(llm->base_url()),
       "moa.api_key_env names " + std::string(kMoaItKeyVar) + ", which is not set"},
      {"terminal:\n  backend: local\n", "config.yaml has no moa: section"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.reason);
    home_.WriteConfig(c.config);
    McpProcess mcp(home_.path(), home_.path(), {"--toolsets", "moa,file"});
    Initialize(mcp);
    mcp.Send(Request(2, "tools/list"));
    json list = mcp.AnswerTo(2);
    std::vector<std::string> names;
    for (const auto& t : list["result"]["tools"]) names.push_back(t["name"]);
    EXPECT_THAT(names, ::testing::Contains("read_file")) << list.dump();
    EXPECT_THAT(names, ::testing::Not(::testing::Contains("mixture_of_agents")));
    mcp.Send(MoaItCall(3));
    json call = mcp.AnswerTo(3);
    EXPECT_EQ(call["error"]["code"], -32602) << call.dump();
    EXPECT_THAT(call["error"]["message"].get<std::string>(),
                HasSubstr("Tool mixture_of_agents is not available here: " + c.reason));
    mcp.CloseInput();
    EXPECT_EQ(mcp.Wait(), 0) << mcp.Stderr();
    EXPECT_THAT(mcp.Stderr(), HasSubstr("not serving mixture_of_agents: " + c.reason));
  }
  EXPECT_TRUE(llm->requests().empty());
}

}  // namespace
}  // namespace talaria
