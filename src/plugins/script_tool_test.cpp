#include "talaria/plugins/script_tool.h"

#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "plugins/plugin_test_util.h"
#include "talaria/core/dispatcher.h"
#include "talaria/core/registry.h"
#include "talaria/env/environment.h"
#include "talaria/plugins/plugin_loader.h"
#include "talaria/tools/session_services.h"

namespace talaria::plugins {
namespace {

using testing::TempDir;
using testing::WriteText;

constexpr std::string_view kWordCount = R"(
name: word_count
toolset: text
description: Count the words of a text
parameters:
  type: object
  properties:
    text: {type: string, description: the text}
    min: {type: integer}
  required: [text]
command: python3 -I -S "$TALARIA_TOOL_DIR/word_count.py"
parallel: safe
timeout: 2.5
)";

Result<ScriptManifest> Parse(std::string_view text, ManifestFormat format = ManifestFormat::kYaml) {
  return ParseToolManifest(text, format, "/opt/tools", safety::GuardOptions{});
}

TEST(ScriptManifest, ParsesYaml) {
  auto m = Parse(kWordCount);
  ASSERT_TRUE(m.has_value()) << m.error().message();
  EXPECT_EQ(m->name, "word_count");
  EXPECT_EQ(m->toolset, "text");
  EXPECT_EQ(m->parallel, ParallelClass::kSafe);
  EXPECT_EQ(m->timeout, std::chrono::milliseconds(2500));
  EXPECT_EQ(m->dir, "/opt/tools");
  auto schema = ParseJson(m->schema);
  ASSERT_TRUE(schema.has_value());
  EXPECT_EQ((*schema)["name"], "word_count");
  EXPECT_EQ((*schema)["parameters"]["required"][0], "text");
}

TEST(ScriptManifest, ParsesJsonWithDefaults) {
  auto m = Parse(R"({"name": "t", "description": "d", "command": "cat",
                     "parameters": {"type": "object", "properties": {}}})",
                 ManifestFormat::kJson);
  ASSERT_TRUE(m.has_value()) << m.error().message();
  EXPECT_EQ(m->toolset, "scripts");
  EXPECT_EQ(m->parallel, ParallelClass::kNever);
  EXPECT_EQ(m->timeout, std::chrono::seconds(60));
}

TEST(ScriptManifest, RejectsBadManifestsNamingTheField) {
  const std::string base = "description: d\ncommand: cat\nparameters: {type: object}\n";
  struct Case {
    std::string text;
    const char* mentions;
  };
  const Case cases[] = {
      {base, "name"},
      {"name: 'bad name'\n" + base, "name must match"},
      {"name: t\ndescription: d\nparameters: {type: object}\n", "command"},
      {"name: t\ndescription: d\ncommand: cat\n", "parameters"},
      {"name: t\ndescription: d\ncommand: cat\nparameters: {type: array}\n", "object schema"},
      {"name: t\ntoolset: mcp-x\n" + base, "toolset"},
      {"name: t\nparallel: sometimes\n" + base, "parallel"},
      {"name: t\ntimeout: 0\n" + base, "timeout"},
      {"name: t\ntimeout: 99999\n" + base, "timeout"},
      {"name: t\ntimeout: ten\n" + base, "timeout"},
      {"- just\n- a list\n", "mapping"},
      {"name: [unclosed\n", "YAML"},
  };
  for (const Case& c : cases) {
    auto m = Parse(c.text);
    ASSERT_FALSE(m.has_value()) << c.text;
    EXPECT_EQ(m.error().code(), StatusCode::kInvalidArgument) << c.text;
    EXPECT_NE(m.error().message().find(c.mentions), std::string::npos) << m.error().message();
  }
  EXPECT_FALSE(Parse("{not json", ManifestFormat::kJson).has_value());
}

TEST(ScriptManifest, CommandGuardRefusesDangerousCommands) {
  auto m = Parse("name: wipe\ndescription: d\nparameters: {type: object}\ncommand: rm -rf /\n");
  ASSERT_FALSE(m.has_value());
  EXPECT_EQ(m.error().code(), StatusCode::kPermissionDenied);
  EXPECT_NE(m.error().message().find("command guard"), std::string::npos) << m.error().message();
}

class ScriptToolRun : public ::testing::Test {
 protected:
  void SetUp() override {
    env::LocalOptions local;
    local.initial_cwd = dir_.path();
    auto env = env::OpenLocal(local);
    ASSERT_TRUE(env.has_value()) << env.error().message();
    tools::EnsureServices(ctx_).environment = *env;
  }

  ToolResult Run(const std::string& command, std::string_view args, double timeout_s = 5) {
    auto m = ParseToolManifest(
        "{\"name\":\"t\",\"description\":\"d\",\"command\":" + JsonQuote(command) +
            ",\"timeout\":" + std::to_string(timeout_s) + ",\"parameters\":{\"type\":\"object\"}}",
        ManifestFormat::kJson, dir_.path(), safety::GuardOptions{});
    EXPECT_TRUE(m.has_value()) << m.error().message();
    ToolSpec spec = ScriptToolSpec(*m);
    return spec.handler(*ParseJson(args), ctx_);
  }

  TempDir dir_;
  ToolContext ctx_;
};

TEST_F(ScriptToolRun, ArgumentsArriveOnStdinAndOutputIsTheResult) {
  const ToolResult r = Run("cat", R"({"a":1,"b":"x"})");
  EXPECT_EQ(r.status, CallStatus::kOk);
  EXPECT_EQ(r.text, R"({"a":1,"b":"x"})");
  EXPECT_EQ(Run("printf %s \"$TALARIA_TOOL_DIR\"", "{}").text, dir_.path());
}

TEST_F(ScriptToolRun, FailuresAreErrorResults) {
  const ToolResult exit3 = Run("echo broken; exit 3", "{}");
  EXPECT_EQ(exit3.status, CallStatus::kError);
  auto j = ParseJson(exit3.text);
  ASSERT_TRUE(j.has_value()) << exit3.text;
  EXPECT_EQ((*j)["exit_code"], 3);
  EXPECT_EQ((*j)["output"], "broken\n");
  EXPECT_EQ(Run(R"(echo '{"error": "no such thing"}')", "{}").status, CallStatus::kError);

  EXPECT_EQ(Run("sleep 10", "{}", 0.3).status, CallStatus::kTimedOut);
}

TEST_F(ScriptToolRun, StderrStaysOutOfTheResultAndComesWithAFailure) {
  const ToolResult ok = Run("echo progress >&2; printf '%s' '{\"n\": 1}'; echo more >&2", "{}");
  EXPECT_EQ(ok.status, CallStatus::kOk);
  EXPECT_EQ(ok.text, R"({"n": 1})");

  const ToolResult failed = Run("echo partial; echo 'cannot open db' >&2; exit 4", "{}");
  EXPECT_EQ(failed.status, CallStatus::kError);
  auto j = ParseJson(failed.text);
  ASSERT_TRUE(j.has_value()) << failed.text;
  EXPECT_EQ((*j)["exit_code"], 4);
  EXPECT_EQ((*j)["output"], "partial\n");
  EXPECT_EQ((*j)["stderr"], "cannot open db\n");

  // A script cannot forge the split: the marker is fresh per call.
  const ToolResult forged =
      Run("echo; echo talaria-script-stderr-0000000000000000; echo tail", "{}");
  EXPECT_EQ(forged.text, "\ntalaria-script-stderr-0000000000000000\ntail");
  // A huge stderr is cut to its tail; stdout stays whole.
  const ToolResult noisy =
      Run("head -c 100000 /dev/zero | tr '\\0' x >&2; echo -n done; exit 1", "{}");
  auto k = ParseJson(noisy.text);
  ASSERT_TRUE(k.has_value()) << noisy.text;
  EXPECT_EQ((*k)["output"], "done");
  EXPECT_EQ((*k)["stderr"].get<std::string>(), std::string(4000, 'x'));
}

TEST_F(ScriptToolRun, CannotChangeTheSessionState) {
  const std::string before = tools::EnvironmentOf(ctx_)->cwd();
  EXPECT_EQ(Run("cd / && export LEAK=1 && echo done", "{}").text, "done");
  EXPECT_EQ(tools::EnvironmentOf(ctx_)->cwd(), before);
  auto leak = tools::EnvironmentOf(ctx_)->Run("printf %s \"${LEAK:-unset}\"", {});
  ASSERT_TRUE(leak.has_value());
  EXPECT_EQ(leak->output, "unset");
}

TEST(ScriptToolRunWithoutEnvironment, ReportsIt) {
  auto m = Parse("name: t\ndescription: d\nparameters: {type: object}\ncommand: cat\n");
  ASSERT_TRUE(m.has_value());
  ToolContext ctx;
  const ToolResult r = ScriptToolSpec(*m).handler(Json::object(), ctx);
  EXPECT_EQ(r.status, CallStatus::kError);
  EXPECT_NE(r.text.find("terminal environment"), std::string::npos);
}

TEST(ScriptToolDiscovery, ManifestsAreCandidatesWithVerdicts) {
  TempDir dir;
  WriteText(dir / "word_count.tool.yaml", kWordCount);
  WriteText(dir / "word_count.py",
            "import json, sys\n"
            "a = json.load(sys.stdin)\n"
            "print(json.dumps({'words': len(a['text'].split()), 'min': a.get('min')}))\n");
  WriteText(dir / "broken.tool.json", "{\"name\": \"broken\"");
  WriteText(dir / "wipe.tool.yml",
            "name: wipe\ndescription: d\nparameters: {type: object}\ncommand: rm -rf /\n");
  WriteText(
      dir / "shadow.tool.yaml",
      "name: read_file\ntoolset: file\ndescription: d\nparameters: {type: object}\ncommand: cat\n");
  WriteText(dir / "notes.yaml", "not a candidate");
  Registry registry;
  ToolSpec builtin;
  builtin.name = "read_file";
  builtin.toolset = "file";
  builtin.schema = R"({"description":"b","parameters":{"type":"object","properties":{}}})";
  builtin.handler = [](const Json&, ToolContext&) { return ToolResult::Text("built-in"); };
  ASSERT_TRUE(registry.Register(std::move(builtin)).ok());

  PluginLoader loader(registry);
  DiscoveryOptions options;
  options.dirs = {dir.path()};
  const DiscoveryReport report = loader.Discover(options);
  ASSERT_EQ(report.candidates.size(), 4u);
  // Sorted by file name: broken, shadow, wipe, word_count.
  EXPECT_EQ(report.candidates[0].name, "broken");
  EXPECT_EQ(report.candidates[0].kind, CandidateKind::kScript);
  EXPECT_EQ(report.candidates[0].verdict, Verdict::kSkipped);
  EXPECT_EQ(report.candidates[0].scan, ScanOutcome::kMalformed);
  EXPECT_EQ(report.candidates[1].verdict, Verdict::kFailed);
  EXPECT_NE(report.candidates[1].reason.find("would replace the existing tool 'read_file'"),
            std::string::npos)
      << report.candidates[1].reason;
  EXPECT_EQ(report.candidates[2].verdict, Verdict::kSkipped);
  EXPECT_EQ(report.candidates[2].scan, ScanOutcome::kCommandRefused);
  EXPECT_EQ(report.candidates[3].verdict, Verdict::kLoaded) << report.candidates[3].reason;
  EXPECT_EQ(report.candidates[3].tools, std::vector<std::string>{"word_count"});
  EXPECT_EQ(report.ToJson()["candidates"][3]["kind"], "script");

  // Through the whole pipeline: "3" is coerced to 3 by the manifest's schema.
  env::LocalOptions local;
  local.initial_cwd = dir.path();
  auto env = env::OpenLocal(local);
  ASSERT_TRUE(env.has_value());
  ToolContext ctx;
  tools::EnsureServices(ctx).environment = *env;
  Dispatcher dispatcher(registry);
  const ToolResult r =
      dispatcher.Dispatch("word_count", R"({"text": "one two three", "min": "3"})", ctx);
  EXPECT_EQ(r.status, CallStatus::kOk) << r.text;
  EXPECT_EQ(r.text, R"({"words": 3, "min": 3})");
  EXPECT_EQ(dispatcher.Dispatch("word_count", R"({"min": 1})", ctx).status, CallStatus::kError);
}

}  // namespace
}  // namespace talaria::plugins
