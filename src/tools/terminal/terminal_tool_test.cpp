// terminal and process through the dispatcher, on a real Session: real bash children, shell
// state across calls, timeouts, cancellation, bounded and cleaned output, background processes.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "support/bwrap_support.h"
#include "support/env_helpers.h"
#include "support/wait_until.h"
#include "talaria/audit/audit_log.h"
#include "talaria/core/config.h"
#include "talaria/core/dispatcher.h"
#include "talaria/core/registry.h"
#include "talaria/env/environment.h"
#include "talaria/tools/command_policy.h"
#include "talaria/tools/process_notices.h"
#include "talaria/tools/session.h"
#include "talaria/tools/session_services.h"

namespace talaria::tools {
namespace {

using namespace std::chrono_literals;

class TerminalTool : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl =
        (std::filesystem::temp_directory_path() / "talaria-terminal-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    root_ = std::filesystem::canonical(tmpl).string();
    SessionOptions options;
    options.roots = {root_};
    options.audit = false;
    auto session = Session::Open(options);
    ASSERT_TRUE(session) << session.error().ToString();
    session_ = *session;
    ctx_ = session_->NewContext("call");
  }
  void TearDown() override {
    session_.reset();
    std::error_code ec;
    std::filesystem::remove_all(root_, ec);
  }
  Json Call(std::string_view tool, const Json& args) {
    last_ = dispatcher_.Dispatch(tool, args.dump(), ctx_);
    return Json::parse(last_.text);
  }
  Json Run(const std::string& command) { return Call("terminal", {{"command", command}}); }

  std::string root_;
  std::shared_ptr<Session> session_;
  ToolContext ctx_;
  Dispatcher dispatcher_;
  ToolResult last_;
};

TEST_F(TerminalTool, AreRegisteredInTheTerminalToolset) {
  for (const char* name : {"terminal", "process"}) {
    auto entry = Registry::Global().GetEntry(name);
    ASSERT_NE(entry, nullptr) << name;
    EXPECT_EQ(entry->toolset(), "terminal");
    EXPECT_EQ(entry->parallel(), ParallelClass::kNever);
  }
  const Json params =
      Json::parse(Registry::Global().GetEntry("terminal")->schema_text())["parameters"];
  EXPECT_EQ(params["required"], Json::array({"command"}));
  std::vector<std::string> names;
  for (const auto& [name, _] : params["properties"].items()) names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{"command", "background", "timeout", "workdir", "pty",
                                             "notify_on_complete", "watch_patterns"}));
}

TEST_F(TerminalTool, RunsACommandAndReportsItsExitCode) {
  Json r = Run("echo hi; echo there >&2");
  EXPECT_EQ(r, (Json{{"output", "hi\nthere\n"}, {"exit_code", 0}, {"error", nullptr}}));
  EXPECT_TRUE(last_.ok());
  r = Run("grep nothing /dev/null");
  EXPECT_EQ(r["exit_code"], 1);
  EXPECT_EQ(r["exit_code_meaning"], "No matches found (not an error)");
  EXPECT_TRUE(last_.ok()) << "a failing command is a successful tool call";
}

TEST_F(TerminalTool, ShellStateCarriesOverAndFileToolsFollowTheCwd) {
  std::filesystem::create_directories(root_ + "/pkg");
  std::ofstream(root_ + "/pkg/notes.txt") << "inside pkg\n";
  Run("cd pkg && export STAGE=two");
  EXPECT_EQ(Run("pwd; echo $STAGE")["output"], root_ + "/pkg\ntwo\n");
  Json read = Call("read_file", {{"path", "notes.txt"}});
  EXPECT_EQ(read["content"], "1|inside pkg") << read.dump();
}

TEST_F(TerminalTool, TimeoutKeepsPartialOutputAndExits124) {
  Json r = Call("terminal", {{"command", "echo started; sleep 20"}, {"timeout", 1}});
  EXPECT_EQ(r["exit_code"], 124);
  EXPECT_EQ(r["error"], "Command timed out after 1 seconds");
  EXPECT_EQ(r["output"].get<std::string>().rfind("started\n", 0), 0u);
  EXPECT_FALSE(last_.ok());
}

TEST_F(TerminalTool, CancellationKillsTheCommand) {
  std::stop_source stop;
  ctx_.cancel = stop.get_token();
  // Cancels once the command runs; only the cancel ends it before its 30 s.
  std::thread canceller([&] {
    test_support::WaitUntil([] { return test_support::ProcessRunning("^sleep 30[.]4321"); }, 10s,
                            10ms);
    stop.request_stop();
  });
  Json r = Run("sleep 30.4321");
  canceller.join();
  EXPECT_EQ(r["exit_code"], 130);
  EXPECT_EQ(last_.status, CallStatus::kCancelled);
}

TEST_F(TerminalTool, RefusesLongForegroundTimeoutsAndOddWorkdirs) {
  Json r = Call("terminal", {{"command", "true"}, {"timeout", 601}});
  EXPECT_NE(r["error"].get<std::string>().find("background=true"), std::string::npos);
  r = Call("terminal", {{"command", "true"}, {"workdir", "/tmp; rm -rf ~"}});
  EXPECT_EQ(r["status"], "blocked");
  EXPECT_EQ(last_.status, CallStatus::kBlocked);
  r = Call("terminal", {{"command", "  "}});
  EXPECT_EQ(r["error"], "command is empty");
}

TEST_F(TerminalTool, OutputIsBoundedStrippedAndRedacted) {
  Json r = Run(
      "printf '\\033[31mred\\033[0m\\n'; echo OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwxyz");
  EXPECT_EQ(r["output"], "red\nOPENAI_API_KEY=[REDACTED]\n");
  r = Run("echo BEGIN; head -c 3000000 /dev/zero | tr '\\0' a; echo; echo END");
  const std::string out = r["output"];
  EXPECT_LT(out.size(), 50'200u);
  EXPECT_EQ(out.rfind("BEGIN\n", 0), 0u);
  EXPECT_NE(out.find("[OUTPUT TRUNCATED - "), std::string::npos);
  EXPECT_EQ(out.substr(out.size() - 4), "END\n");
}

TEST_F(TerminalTool, PtyGivesTheCommandATerminal) {
  Json r =
      Call("terminal", {{"command", "[ -t 1 ] && echo on-a-tty || echo no-tty"}, {"pty", true}});
  EXPECT_NE(r["output"].get<std::string>().find("on-a-tty"), std::string::npos) << r.dump();
  r = Run("[ -t 1 ] && echo on-a-tty || echo no-tty");
  EXPECT_EQ(r["output"], "no-tty\n");
}

TEST_F(TerminalTool, BackgroundProcessesAreManagedWithTheProcessTool) {
  Json started =
      Call("terminal", {{"command", "echo ready; while read -r l; do echo \"echo:$l\"; done"},
                        {"background", true}});
  ASSERT_EQ(started["output"], "Background process started") << started.dump();
  const std::string id = started["session_id"];
  EXPECT_EQ(id.rfind("proc_", 0), 0u);
  const std::string prefix = id.substr(5, 4);

  Json list = Call("process", {{"action", "list"}});
  ASSERT_EQ(list["processes"].size(), 1u);
  EXPECT_EQ(list["processes"][0]["status"], "running");

  EXPECT_EQ(
      Call("process", {{"action", "submit"}, {"session_id", prefix}, {"data", "ping"}})["status"],
      "ok");
  Json poll;
  for (int i = 0; i < 200; ++i) {
    poll = Call("process_manage",
                {{"action", "poll"}, {"session_id", id}});  // the newer name works too
    if (poll["output_preview"].get<std::string>().find("echo:ping") != std::string::npos) break;
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_EQ(poll["output_preview"], "ready\necho:ping\n");
  EXPECT_EQ(poll["status"], "running");

  Json log =
      Call("process", {{"action", "log"}, {"session_id", prefix}, {"offset", 1}, {"limit", 5}});
  EXPECT_EQ(log["output"], "echo:ping\n");
  EXPECT_EQ(log["total_lines"], 2);

  Json waited = Call("process", {{"action", "wait"}, {"session_id", prefix}, {"timeout", 1}});
  EXPECT_EQ(waited["status"], "timeout");
  EXPECT_EQ(Call("process", {{"action", "close"}, {"session_id", prefix}})["status"],
            "stdin_closed");
  waited = Call("process", {{"action", "wait"}, {"session_id", prefix}, {"timeout", 10}});
  EXPECT_EQ(waited["status"], "exited");
  EXPECT_EQ(waited["exit_code"], 0);
}

// A result text without the notices appended to it ("\n\n[...]" blocks), parsed.
Json ResultJson(const std::string& text) { return Json::parse(text.substr(0, text.find("\n\n["))); }

TEST_F(TerminalTool, CompletionNoticesRideOnTheNextToolResult) {
  AttachProcessNotices(dispatcher_);
  // A notice may already ride on the very next result (even the start's own, if the process is
  // that quick), so every text from the start on is collected.
  std::string seen =
      dispatcher_
          .Dispatch(
              "terminal",
              R"({"command": "echo built ok; exit 2", "background": true, "notify_on_complete": true})",
              ctx_)
          .text;
  Json started = ResultJson(seen);
  ASSERT_TRUE(started.contains("session_id")) << seen;
  const std::string id = started["session_id"];
  EXPECT_TRUE(started.contains("note"));
  seen += dispatcher_
              .Dispatch("process",
                        R"({"action": "wait", "timeout": 10, "session_id": ")" + id + R"("})", ctx_)
              .text;
  // The notice is queued once the output closes, just after the exit.
  for (int i = 0; i < 200 && seen.find("IMPORTANT") == std::string::npos; ++i) {
    std::this_thread::sleep_for(10ms);
    seen += dispatcher_.Dispatch("terminal", R"({"command": "true"})", ctx_).text;
  }
  const std::string expected = "[IMPORTANT: Background process " + id + " failed (exit code 2).";
  EXPECT_NE(seen.find(expected), std::string::npos) << seen;
  EXPECT_NE(seen.find("built ok"), std::string::npos) << seen;
  EXPECT_EQ(seen.find("IMPORTANT"), seen.rfind("IMPORTANT"))
      << "a notice is delivered once: " << seen;
  EXPECT_EQ(dispatcher_.Dispatch("terminal", R"({"command": "true"})", ctx_).text.find("IMPORTANT"),
            std::string::npos);
}

TEST_F(TerminalTool, WatchPatternMatchesRideOnTheNextToolResult) {
  AttachProcessNotices(dispatcher_);
  std::string seen =
      dispatcher_
          .Dispatch(
              "terminal",
              R"({"command": "echo 'listening on 127.0.0.1:9'; sleep 30", "background": true, "watch_patterns": ["listening"]})",
              ctx_)
          .text;
  Json started = ResultJson(seen);
  ASSERT_TRUE(started.contains("session_id")) << seen;
  for (int i = 0; i < 500 && seen.find("watch patterns") == std::string::npos; ++i) {
    std::this_thread::sleep_for(10ms);
    seen += dispatcher_.Dispatch("terminal", R"({"command": "true"})", ctx_).text;
  }
  EXPECT_NE(seen.find("listening on 127.0.0.1:9"), std::string::npos) << seen;
  Call("process", {{"action", "kill"}, {"session_id", started["session_id"]}});
}

TEST_F(TerminalTool, KillEndsABackgroundProcessAndBadIdsAreReported) {
  Json started = Call("terminal", {{"command", "sleep 60"}, {"background", true}});
  const std::string id = started["session_id"];
  Json killed = Call("process", {{"action", "kill"}, {"session_id", id}});
  EXPECT_EQ(killed["status"], "killed");
  EXPECT_EQ(Call("process", {{"action", "poll"}, {"session_id", id}})["status"], "exited");
  Json missing = Call("process", {{"action", "poll"}, {"session_id", "ffffffff"}});
  EXPECT_EQ(missing["status"], "not_found");
  Json no_id = Call("process", {{"action", "poll"}});
  EXPECT_NE(no_id["error"].get<std::string>().find("session_id is required"), std::string::npos);
  Json bad = Call("process", {{"action", "explode"}, {"session_id", id}});
  EXPECT_TRUE(bad.contains("error"));
  EXPECT_FALSE(last_.ok());
}

// Where the kernel refuses bubblewrap's namespaces, the default backend is the local one (with a
// warning), not a failure: a stand-in bwrap failing as the kernel makes it fail shows it.
TEST_F(TerminalTool, TheDefaultBackendFallsBackToLocalWhereNamespacesAreRefused) {
  SessionOptions options;
  options.roots = {root_};
  options.audit = false;
  options.terminal.backend = "auto";
  options.terminal.bwrap = test_support::WriteRefusingBwrap(root_);
  auto session = Session::Open(options);
  ASSERT_TRUE(session) << session.error().ToString();
  ToolContext ctx = (*session)->NewContext("call");
  EXPECT_EQ(EnvironmentOf(ctx)->kind(), "local");
  const ToolResult r = dispatcher_.Dispatch("terminal", Json{{"command", "echo fine"}}.dump(), ctx);
  EXPECT_TRUE(r.ok()) << r.text;
  EXPECT_NE(r.text.find("fine"), std::string::npos) << r.text;
  // An explicit bwrap backend is a promise of a sandbox: refused with the reason instead.
  options.terminal.backend = "bwrap";
  auto strict = Session::Open(options);
  ASSERT_FALSE(strict);
  EXPECT_NE(strict.error().message().find("namespace"), std::string::npos)
      << strict.error().ToString();
}

// The policy stage with the real guard: the command never runs when refused.
class GuardedTerminal : public TerminalTool {
 protected:
  void Install(std::string_view yaml) {
    auto config = ParseConfig(yaml);
    ASSERT_TRUE(config) << config.error().ToString();
    ASSERT_TRUE(InstallCommandPolicy(dispatcher_, *config, nullptr).ok());
  }
  bool Marker() const { return std::filesystem::exists(root_ + "/ran"); }
};

TEST_F(GuardedTerminal, HardlineCommandsNeverRunEvenInYolo) {
  Install("approvals: {mode: yolo}\n");
  Json r = Run("touch ran; rm -rf /");
  EXPECT_EQ(last_.status, CallStatus::kBlocked);
  EXPECT_NE(r["error"].get<std::string>().find("can never run"), std::string::npos) << r.dump();
  EXPECT_FALSE(Marker());
}

TEST_F(GuardedTerminal, DangerousCommandsAreRefusedByDefaultAndAllowedByYoloOrAllowlist) {
  Install("");
  Json r = Run("touch ran && git push --force origin main");
  EXPECT_EQ(last_.status, CallStatus::kBlocked);
  EXPECT_NE(r["error"].get<std::string>().find("git_force_push"), std::string::npos) << r.dump();
  EXPECT_FALSE(Marker());
  // Quoted prose is data, not a command.
  r = Run("echo 'rm -rf /' > /dev/null && touch ran");
  EXPECT_TRUE(last_.ok()) << r.dump();
  EXPECT_TRUE(Marker());

  std::filesystem::remove(root_ + "/ran");
  Install("approvals: {mode: allowlist, allowlist: [recursive_delete]}\n");
  r = Run("mkdir -p build/x && rm -rf build && touch ran");
  EXPECT_TRUE(last_.ok()) << r.dump();
  EXPECT_TRUE(Marker());
  EXPECT_FALSE(std::filesystem::exists(root_ + "/build"));
}

TEST_F(GuardedTerminal, EveryDecisionIsAudited) {
  const std::string audit = root_ + "/audit.jsonl";
  auto log = safety::AuditLog::Open(audit);
  ASSERT_TRUE(log);
  EnsureServices(ctx_).audit_log = std::shared_ptr<const safety::AuditLog>(std::move(*log));
  Install("approvals: {mode: yolo}\n");
  Run("rm -rf scratch");
  Run("rm -rf /");
  Run("echo innocent");  // allowed commands leave a trace too: a bypass is not invisible
  std::ifstream in(audit);
  std::vector<Json> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(Json::parse(line));
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0]["event"], "approval");
  EXPECT_EQ(lines[0]["command"], "rm -rf scratch");
  EXPECT_EQ(lines[0]["outcome"], "allowed");
  EXPECT_EQ(lines[0]["how"], "yolo");
  EXPECT_EQ(lines[1]["outcome"], "refused");
  EXPECT_EQ(lines[1]["how"], "hardline");
  EXPECT_EQ(lines[2]["event"], "command");
  EXPECT_EQ(lines[2]["command"], "echo innocent");
  EXPECT_EQ(lines[2]["verdict"], "allow");
  auto verified = safety::VerifyAuditLog(audit);
  ASSERT_TRUE(verified) << verified.error().ToString();
  EXPECT_TRUE(verified->intact) << verified->problem;
}

TEST_F(GuardedTerminal, InputToABackgroundShellIsJudgedLikeACommand) {
  Install("");
  Json started = Call("terminal", {{"command", "bash"}, {"background", true}});
  ASSERT_TRUE(last_.ok()) << started.dump();
  const std::string id = started["session_id"];
  Json r =
      Call("process", {{"action", "submit"}, {"session_id", id}, {"data", "touch ran; rm -rf /"}});
  EXPECT_EQ(last_.status, CallStatus::kBlocked) << r.dump();
  EXPECT_TRUE(Call("process", {{"action", "submit"}, {"session_id", id}, {"data", "echo fine"}})
                  .contains("bytes_written"));
  Call("process", {{"action", "kill"}, {"session_id", id}});
  EXPECT_FALSE(Marker());
}

// An interactive shell expands history after reading the line: `echo hi` then `!!:s/echo hi/rm
// -rf victim/` ran a delete the guard never saw. Such input is refused before it is written.
TEST_F(GuardedTerminal, HistoryExpansionIsNotWrittenToABackgroundShell) {
  Install("");
  std::filesystem::create_directories(root_ + "/victim");
  Json started = Call("terminal", {{"command", "bash -i"}, {"background", true}, {"pty", true}});
  ASSERT_TRUE(last_.ok()) << started.dump();
  const std::string id = started["session_id"];
  EXPECT_TRUE(Call("process", {{"action", "submit"}, {"session_id", id}, {"data", "echo hi"}})
                  .contains("bytes_written"));
  for (const std::string attack :
       {"!!:s/echo hi/rm -rf victim/", "^echo hi^rm -rf victim", "!echo:s/hi/x/"}) {
    Json r = Call("process", {{"action", "submit"}, {"session_id", id}, {"data", attack}});
    EXPECT_FALSE(last_.ok()) << attack << ": " << r.dump();
    EXPECT_NE(r.dump().find("history expansion"), std::string::npos) << r.dump();
  }
  // Ordinary text with `!` stays writable.
  Json fine = Call("process", {{"action", "submit"},
                               {"session_id", id},
                               {"data", "[ ! -d none ] && echo 'ok!' && test 1 != 2 && exit"}});
  EXPECT_TRUE(last_.ok()) << fine.dump();
  Call("process", {{"action", "wait"}, {"session_id", id}, {"timeout", 30}});
  EXPECT_TRUE(std::filesystem::exists(root_ + "/victim"));
}

// A shell reads lines, not writes: `r` and then `m -rf DIR` deleted DIR when each write was
// judged alone. The line earlier writes left unfinished is judged with the next one.
TEST_F(GuardedTerminal, AShellLineSplitAcrossWritesIsJudgedWhole) {
  Install("");
  std::filesystem::create_directories(root_ + "/victim/inner");
  for (bool pty : {false, true}) {
    Json started = Call("terminal", {{"command", "bash"}, {"background", true}, {"pty", pty}});
    ASSERT_TRUE(last_.ok()) << started.dump();
    const std::string id = started["session_id"];
    Json first = Call("process", {{"action", "write"}, {"session_id", id}, {"data", "r"}});
    EXPECT_TRUE(last_.ok()) << first.dump();
    Json second =
        Call("process", {{"action", "submit"}, {"session_id", id}, {"data", "m -rf victim"}});
    EXPECT_EQ(last_.status, CallStatus::kBlocked) << second.dump();
    // Finished lines are forgotten: the next line is judged on its own.
    Json fine = Call("process", {{"action", "write"},
                                 {"session_id", id},
                                 {"data", "\necho ok > done-" + std::to_string(pty) + "\nexit\n"}});
    EXPECT_TRUE(last_.ok()) << fine.dump();
    Call("process", {{"action", "wait"}, {"session_id", id}, {"timeout", 30}});
    EXPECT_TRUE(std::filesystem::exists(root_ + "/victim/inner")) << "pty=" << pty;
    EXPECT_TRUE(std::filesystem::exists(root_ + "/done-" + std::to_string(pty))) << "pty=" << pty;
  }
}

}  // namespace
}  // namespace talaria::tools
