#include "talaria/core/command_hooks.h"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include "support/wait_until.h"

namespace talaria {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

class CommandHooksTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static std::atomic<int> counter{0};
    dir_ = fs::temp_directory_path() /
           ("talaria-hooks-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    fs::create_directories(dir_);
    options_.cwd = dir_.string();
    options_.warn = [this](std::string_view m) {
      std::lock_guard lock(mu_);
      warnings_.emplace_back(m);
    };
    ctx_.session_id = "sess-1";
    ctx_.call_id = "call-7";
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  // Writes an executable script and returns its path.
  std::string Script(const std::string& name, const std::string& body) {
    const fs::path path = dir_ / name;
    std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
    ::chmod(path.c_str(), 0755);
    return path.string();
  }

  static Json Config(std::string_view event, std::string_view matcher, const std::string& command,
                     double timeout = 0) {
    Json hook = {{"type", "command"}, {"command", command}};
    if (timeout > 0) hook["timeout"] = timeout;
    return Json{{std::string(event), Json::array({Json{{"matcher", std::string(matcher)},
                                                       {"hooks", Json::array({hook})}}})}};
  }

  void Install(const Json& config) {
    Status s = InstallCommandHooks(config, hooks_, options_);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }

  PreHookDecision Pre(std::string_view tool, const Json& args) {
    return hooks_.RunPre(tool, args, ctx_, PreHookMode::kDecide);
  }

  std::optional<std::string> Post(std::string_view tool, const Json& args, std::string text) {
    ToolResult result;
    result.text = std::move(text);
    return hooks_.RunTransform(PostToolEvent{tool, args, result, 1.0, ctx_});
  }

  std::string ReadFile(const std::string& name) {
    std::ifstream in(dir_ / name);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  bool Warned(std::string_view needle) {
    std::lock_guard lock(mu_);
    for (const auto& w : warnings_) {
      if (w.find(needle) != std::string::npos) return true;
    }
    return false;
  }

  fs::path dir_;
  CommandHookOptions options_;
  HookSet hooks_;
  ToolContext ctx_;
  std::mutex mu_;
  std::vector<std::string> warnings_;  // Guarded by mu_.
};

const Json kArgs = {{"path", "a.txt"}, {"content", "hi"}};

TEST_F(CommandHooksTest, ExitTwoBlocksWithStderr) {
  Install(
      Config("PreToolUse", "writer", Script("block.sh", "echo '  no writes today ' >&2; exit 2")));
  auto d = Pre("writer", kArgs);
  EXPECT_EQ(d.kind, PreHookDecision::Kind::kBlock);
  EXPECT_EQ(d.message, "Blocked by PreToolUse hook hooks.PreToolUse[0].hooks[0]: no writes today");
}

// A trusted project's hook whose script changed since it was trusted is not run; a PreToolUse
// hook then blocks (the check the user trusted cannot be made), a PostToolUse one is skipped.
TEST_F(CommandHooksTest, AHookWhoseCheckFailsIsNotRunAndAPreHookBlocks) {
  options_.before_run = [] {
    return FailedPreconditionError("check.sh changed since it was trusted");
  };
  Install(Config("PreToolUse", "", Script("pre.sh", "touch pre-ran")));
  auto d = Pre("writer", kArgs);
  EXPECT_EQ(d.kind, PreHookDecision::Kind::kBlock);
  EXPECT_NE(d.message.find("check.sh changed since it was trusted"), std::string::npos)
      << d.message;
  EXPECT_EQ(d.message.rfind("Blocked by PreToolUse hook hooks.PreToolUse[0].hooks[0]: ", 0), 0u)
      << d.message;
  EXPECT_FALSE(fs::exists(dir_ / "pre-ran"));
  Install(Config("PostToolUse", "", Script("post.sh", "touch post-ran")));
  EXPECT_FALSE(Post("writer", kArgs, "{}").has_value());
  EXPECT_FALSE(fs::exists(dir_ / "post-ran"));
  options_.before_run = [] { return Status::Ok(); };
  HookSet fresh;
  ASSERT_TRUE(InstallCommandHooks(Config("PreToolUse", "", Script("pre2.sh", "touch pre-ran")),
                                  fresh, options_)
                  .ok());
  EXPECT_EQ(fresh.RunPre("writer", kArgs, ctx_, PreHookMode::kDecide).kind,
            PreHookDecision::Kind::kContinue);
  EXPECT_TRUE(fs::exists(dir_ / "pre-ran"));
}

TEST_F(CommandHooksTest, ExitTwoWithoutStderrHasDefaultMessage) {
  Install(Config("PreToolUse", "", Script("block.sh", "exit 2")));
  auto d = Pre("writer", kArgs);
  EXPECT_EQ(d.kind, PreHookDecision::Kind::kBlock);
  EXPECT_NE(d.message.find("Blocked by PreToolUse hook"), std::string::npos);
}

TEST_F(CommandHooksTest, JsonDenyBlocksWithReason) {
  Install(Config("PreToolUse", "*", Script("deny.sh", R"(cat >/dev/null
echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"path is protected"}}')")));
  auto d = Pre("patcher", kArgs);
  EXPECT_EQ(d.kind, PreHookDecision::Kind::kBlock);
  EXPECT_EQ(d.message,
            "Blocked by PreToolUse hook hooks.PreToolUse[0].hooks[0]: path is protected");
}

TEST_F(CommandHooksTest, JsonAskFailsClosed) {
  Install(Config(
      "PreToolUse", "",
      Script(
          "ask.sh",
          R"(echo '{"hookSpecificOutput":{"permissionDecision":"ask","permissionDecisionReason":"risky"}}')")));
  auto d = Pre("shell", kArgs);
  EXPECT_EQ(d.kind, PreHookDecision::Kind::kBlock);
  EXPECT_EQ(d.message.rfind("Blocked by PreToolUse hook hooks.PreToolUse[0].hooks[0]: ", 0), 0u)
      << d.message;
  EXPECT_NE(d.message.find("approval"), std::string::npos);
  EXPECT_NE(d.message.find("risky"), std::string::npos);
}

TEST_F(CommandHooksTest, ContinueFalseBlocksWithStopReason) {
  Install(Config("PreToolUse", "",
                 Script("stop.sh", R"(echo '{"continue":false,"stopReason":"halt"}')")));
  auto d = Pre("shell", kArgs);
  EXPECT_EQ(d.kind, PreHookDecision::Kind::kBlock);
  EXPECT_EQ(d.message, "Blocked by PreToolUse hook hooks.PreToolUse[0].hooks[0]: halt");
}

TEST_F(CommandHooksTest, AllowAndEmptyOutputContinue) {
  Install(Config(
      "PreToolUse", "",
      Script("allow.sh", R"(echo '{"hookSpecificOutput":{"permissionDecision":"allow"}}')")));
  Install(Config("PreToolUse", "", Script("quiet.sh", "exit 0")));
  EXPECT_EQ(Pre("shell", kArgs).kind, PreHookDecision::Kind::kContinue);
  EXPECT_TRUE(warnings_.empty());
}

TEST_F(CommandHooksTest, UpdatedInputModifiesArguments) {
  Install(Config(
      "PreToolUse", "writer",
      Script(
          "modify.sh",
          R"(echo '{"hookSpecificOutput":{"permissionDecision":"allow","updatedInput":{"path":"b.txt","content":"rewritten"}}}')")));
  auto d = Pre("writer", kArgs);
  ASSERT_EQ(d.kind, PreHookDecision::Kind::kModify);
  ASSERT_TRUE(d.new_args);
  EXPECT_EQ((*d.new_args)["path"], "b.txt");
  EXPECT_EQ((*d.new_args)["content"], "rewritten");
}

TEST_F(CommandHooksTest, MatcherIsAFullRegexMatchOnToolName) {
  Install(Config("PreToolUse", "writer|patcher", Script("block.sh", "echo blocked >&2; exit 2")));
  EXPECT_EQ(Pre("writer", kArgs).kind, PreHookDecision::Kind::kBlock);
  EXPECT_EQ(Pre("patcher", kArgs).kind, PreHookDecision::Kind::kBlock);
  EXPECT_EQ(Pre("reader", kArgs).kind, PreHookDecision::Kind::kContinue);
  EXPECT_EQ(Pre("writer_extra", kArgs).kind, PreHookDecision::Kind::kContinue);
  EXPECT_EQ(Pre("my_patcher", kArgs).kind, PreHookDecision::Kind::kContinue);
}

TEST_F(CommandHooksTest, TimeoutKillsHookAndCallContinues) {
  Install(Config("PreToolUse", "", Script("slow.sh", "sleep 30"), 1));
  const auto start = Clock::now();
  auto d = Pre("shell", kArgs);
  const auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
  EXPECT_EQ(d.kind, PreHookDecision::Kind::kContinue);
  EXPECT_GE(elapsed.count(), 900);
  // Killed at its timeout, not waited out for 30 s: only a kill says "timed out".
  EXPECT_TRUE(Warned("timed out"));
}

TEST_F(CommandHooksTest, GarbageStdoutIsIgnored) {
  Install(Config("PreToolUse", "", Script("garbage.sh", "echo '{not json at all'; echo more")));
  EXPECT_EQ(Pre("shell", kArgs).kind, PreHookDecision::Kind::kContinue);
  EXPECT_TRUE(Warned("not a JSON object"));
}

TEST_F(CommandHooksTest, CrashingHookIsIgnored) {
  Install(Config("PreToolUse", "", Script("crash.sh", "kill -SEGV $$")));
  EXPECT_EQ(Pre("shell", kArgs).kind, PreHookDecision::Kind::kContinue);
  EXPECT_TRUE(Warned("exit code 139"));
}

TEST_F(CommandHooksTest, OtherExitCodesAreIgnored) {
  Install(Config("PreToolUse", "", Script("fail.sh", "echo oops >&2; exit 1")));
  EXPECT_EQ(Pre("shell", kArgs).kind, PreHookDecision::Kind::kContinue);
  EXPECT_TRUE(Warned("oops"));
}

TEST_F(CommandHooksTest, MissingScriptIsIgnored) {
  Install(Config("PreToolUse", "", (dir_ / "does-not-exist.sh").string()));
  EXPECT_EQ(Pre("shell", kArgs).kind, PreHookDecision::Kind::kContinue);
  EXPECT_TRUE(Warned("exit code 127"));
}

// fail_closed: true turns "the hook gave no verdict" into a block naming the hook (issue 18,
// finding 10); without it the same hooks let the call through (above).
TEST_F(CommandHooksTest, FailClosedHookBlocksWhenItCannotRunTimesOutOrFails) {
  struct Case {
    std::string name;
    std::string command;
    double timeout;
    std::string expect;
  };
  const std::vector<Case> cases = {
      {"missing program", (dir_ / "does-not-exist.sh").string(), 0, "could not run its program"},
      {"timeout", Script("slow.sh", "sleep 30"), 0.2, "timed out"},
      {"exit 1", Script("fail.sh", "echo oops >&2; exit 1"), 0, "exit code 1"},
      {"garbage", Script("garbage.sh", "echo '{not json'"), 0, "no JSON object"},
  };
  for (const Case& c : cases) {
    Json config = Config("PreToolUse", "", c.command, c.timeout);
    config["PreToolUse"][0]["hooks"][0]["fail_closed"] = true;
    HookSet hooks;
    ASSERT_TRUE(InstallCommandHooks(config, hooks, options_).ok()) << c.name;
    const PreHookDecision d = hooks.RunPre("shell", kArgs, ctx_, PreHookMode::kDecide);
    EXPECT_EQ(d.kind, PreHookDecision::Kind::kBlock) << c.name;
    EXPECT_EQ(d.message.rfind("Blocked by PreToolUse hook hooks.PreToolUse[0].hooks[0]: ", 0), 0u)
        << d.message;
    EXPECT_NE(d.message.find(c.expect), std::string::npos) << c.name << ": " << d.message;
    EXPECT_NE(d.message.find("fail_closed"), std::string::npos) << d.message;
  }
  // A fail_closed hook that answers still decides as usual.
  Json config = Config("PreToolUse", "", Script("ok.sh", "exit 0"));
  config["PreToolUse"][0]["hooks"][0]["fail_closed"] = true;
  HookSet hooks;
  ASSERT_TRUE(InstallCommandHooks(config, hooks, options_).ok());
  EXPECT_EQ(hooks.RunPre("shell", kArgs, ctx_, PreHookMode::kDecide).kind,
            PreHookDecision::Kind::kContinue);
}

TEST_F(CommandHooksTest, FailClosedMustBeABoolean) {
  Json config = Config("PreToolUse", "", "/bin/true");
  config["PreToolUse"][0]["hooks"][0]["fail_closed"] = "yes";
  HookSet hooks;
  const Status s = InstallCommandHooks(config, hooks, options_);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("hooks.PreToolUse[0].hooks[0]: \"fail_closed\""), std::string::npos)
      << s.message();
}

TEST_F(CommandHooksTest, PreHookReceivesEventJsonOnStdin) {
  Install(Config("PreToolUse", "",
                 Script("copy.sh", "cat > \"$TALARIA_PROJECT_DIR/event.json\"; pwd -P > cwd.txt")));
  EXPECT_EQ(Pre("writer", kArgs).kind, PreHookDecision::Kind::kContinue);
  auto event = ParseJson(ReadFile("event.json"));
  ASSERT_TRUE(event.has_value()) << ReadFile("event.json");
  EXPECT_EQ((*event)["session_id"], "sess-1");
  EXPECT_EQ((*event)["transcript_path"], "");
  EXPECT_EQ((*event)["cwd"], dir_.string());
  EXPECT_EQ((*event)["permission_mode"], "default");
  EXPECT_EQ((*event)["hook_event_name"], "PreToolUse");
  EXPECT_EQ((*event)["tool_name"], "writer");
  EXPECT_EQ((*event)["tool_input"], kArgs);
  EXPECT_EQ((*event)["tool_use_id"], "call-7");
  EXPECT_FALSE(event->contains("tool_response"));
  EXPECT_EQ(ReadFile("cwd.txt"), fs::canonical(dir_).string() + "\n");
}

TEST_F(CommandHooksTest, PostHookReceivesToolResponse) {
  Install(Config("PostToolUse", "", Script("copy.sh", "cat > event.json")));
  EXPECT_FALSE(Post("reader", kArgs, R"({"content":"abc"})").has_value());
  auto event = ParseJson(ReadFile("event.json"));
  ASSERT_TRUE(event.has_value());
  EXPECT_EQ((*event)["hook_event_name"], "PostToolUse");
  EXPECT_EQ((*event)["tool_response"], Json({{"content", "abc"}}));

  EXPECT_FALSE(Post("reader", kArgs, "plain text").has_value());
  event = ParseJson(ReadFile("event.json"));
  ASSERT_TRUE(event.has_value());
  EXPECT_EQ((*event)["tool_response"], "plain text");
}

TEST_F(CommandHooksTest, PostHookFeedbackIsAddedToObjectResults) {
  // One config, two groups: all PostToolUse commands share one transform, so feedback merges.
  Json config =
      Config("PostToolUse", "writer",
             Script("lint.sh", R"(echo '{"decision":"block","reason":"lint failed: line 3"}')"));
  config["PostToolUse"].push_back(Config(
      "PostToolUse", "",
      Script(
          "ctx.sh",
          R"(echo '{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"remember to run tests"}}')"))
                                      ["PostToolUse"][0]);
  Install(config);

  auto text = Post("writer", kArgs, R"({"bytes_written":2})");
  ASSERT_TRUE(text.has_value());
  auto obj = ParseJson(*text);
  ASSERT_TRUE(obj.has_value());
  EXPECT_EQ((*obj)["bytes_written"], 2);
  EXPECT_EQ((*obj)["hook_feedback"], "lint failed: line 3\nremember to run tests");

  // Only the unfiltered hook matches the reader.
  text = Post("reader", kArgs, R"({"content":"x"})");
  ASSERT_TRUE(text.has_value());
  EXPECT_EQ((*ParseJson(*text))["hook_feedback"], "remember to run tests");

  // A non-object result cannot carry feedback.
  EXPECT_FALSE(Post("writer", kArgs, "done").has_value());
}

TEST_F(CommandHooksTest, PostHookExitTwoIsFeedback) {
  Install(
      Config("PostToolUse", "", Script("complain.sh", "echo 'formatting changed' >&2; exit 2")));
  auto text = Post("patcher", kArgs, R"({"ok":true})");
  ASSERT_TRUE(text.has_value());
  EXPECT_EQ((*ParseJson(*text))["hook_feedback"], "formatting changed");
}

TEST_F(CommandHooksTest, PostHookFailuresAreIgnored) {
  Install(Config("PostToolUse", "", Script("crash.sh", "kill -SEGV $$")));
  Install(Config("PostToolUse", "", Script("garbage.sh", "echo nonsense")));
  EXPECT_FALSE(Post("patcher", kArgs, R"({"ok":true})").has_value());
}

TEST_F(CommandHooksTest, PostHooksSkipFailedCalls) {
  Install(Config("PostToolUse", "", Script("touch.sh", "touch ran")));
  ToolResult result;
  result.text = R"({"error":"boom"})";
  result.status = CallStatus::kError;
  EXPECT_FALSE(hooks_.RunTransform(PostToolEvent{"patcher", kArgs, result, 1.0, ctx_}).has_value());
  EXPECT_FALSE(fs::exists(dir_ / "ran"));
}

// The call is cancelled once the hook runs: the hook is killed, so what it would do after its
// sleep never happens (a hook waited out would touch `ran` before Pre returns).
TEST_F(CommandHooksTest, CancelledCallStopsHook) {
  Install(Config("PreToolUse", "", Script("slow.sh", "touch started; sleep 5; touch ran"), 60));
  std::stop_source stop;
  ctx_.cancel = stop.get_token();
  std::jthread canceller([&stop, this] {
    test_support::WaitUntil([this] { return fs::exists(dir_ / "started"); },
                            std::chrono::seconds(30));
    stop.request_stop();
  });
  EXPECT_EQ(Pre("shell", kArgs).kind, PreHookDecision::Kind::kContinue);
  EXPECT_TRUE(fs::exists(dir_ / "started"));
  EXPECT_FALSE(fs::exists(dir_ / "ran"));
}

TEST_F(CommandHooksTest, InvalidConfigNamesTheEntry) {
  struct Case {
    Json config;
    std::string where;
  };
  const std::vector<Case> cases = {
      {Json::array(), "hooks"},
      {Json{{"PreToolUse", Json::object()}}, "hooks.PreToolUse"},
      {Json::parse(
           R"({"PreToolUse":[{"matcher":"(unclosed","hooks":[{"type":"command","command":"true"}]}]})"),
       "hooks.PreToolUse[0].matcher"},
      {Json::parse(
           R"({"PreToolUse":[{"hooks":[{"type":"command","command":"true"},{"type":"command"}]}]})"),
       "hooks.PreToolUse[0].hooks[1]"},
      {Json::parse(R"({"PostToolUse":[{"hooks":[{"type":"prompt","prompt":"x"}]}]})"),
       "hooks.PostToolUse[0].hooks[0]"},
      {Json::parse(
           R"({"PostToolUse":[{},{"hooks":[{"type":"command","command":"true","timeout":-1}]}]})"),
       "hooks.PostToolUse[0].hooks"},
      {Json::parse(
           R"({"PostToolUse":[{"hooks":[{"type":"command","command":"true","timeout":"5"}]}]})"),
       "hooks.PostToolUse[0].hooks[0]"},
  };
  for (const auto& c : cases) {
    HookSet hooks;
    Status s = InstallCommandHooks(c.config, hooks, options_);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << DumpJson(c.config);
    EXPECT_NE(s.message().find(c.where), std::string::npos) << s.message();
    EXPECT_FALSE(hooks.has_pre());
    EXPECT_FALSE(hooks.has_transform());
  }
}

TEST_F(CommandHooksTest, UnknownEventsAreIgnoredWithAWarning) {
  Json config = Json::parse(
      R"({"Stop":[{"hooks":[{"type":"command","command":"true"}]}],"NoSuchEvent":[],
          "PreToolUse":[{"matcher":"x","hooks":[{"type":"command","command":"true","timeout":2}]}]})");
  Install(config);
  EXPECT_TRUE(Warned("hooks.Stop"));
  EXPECT_TRUE(Warned("hooks.NoSuchEvent"));
  EXPECT_TRUE(hooks_.has_pre());
  EXPECT_FALSE(hooks_.has_transform());

  HookSet empty;
  EXPECT_TRUE(InstallCommandHooks(Json(), empty, options_).ok());
  EXPECT_FALSE(empty.has_pre());
}

}  // namespace
}  // namespace talaria
