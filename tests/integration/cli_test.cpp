// The `talaria` binary as a user runs it: a real process, with TALARIA_HOME (and HOME) pointing
// at a fresh directory, so no state of the machine leaks in.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_harness.h"
#include "support/bwrap_support.h"
#include "talaria/base/json.h"
#include "talaria/base/subprocess.h"
#include "talaria/core/registry.h"
#include "talaria/core/toolsets.h"

namespace talaria {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

using testing_cli::CliRun;
using testing_cli::Describe;
using testing_cli::SplitLines;
using testing_cli::TempHome;

// Runs `talaria args...` with TALARIA_HOME and HOME set to `home`, in `cwd` (default: ours).
CliRun Talaria(const TempHome& home, const std::vector<std::string>& args,
               const std::string& cwd = "") {
  return testing_cli::RunTalaria({.home = home.path(),
                                  .cwd = cwd,
                                  .stdin_data = {},
                                  .timeout = std::chrono::seconds(10),
                                  .extra_env = {}},
                                 args);
}

std::vector<std::string> Words(const std::string& line) {
  std::vector<std::string> words;
  std::istringstream in(line);
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

// Table rows (after the header) keyed by the word at `key_column`.
std::map<std::string, std::vector<std::string>> RowsBy(const std::string& table,
                                                       size_t key_column) {
  std::map<std::string, std::vector<std::string>> rows;
  const auto lines = SplitLines(table);
  for (size_t i = 1; i < lines.size(); ++i) {
    auto words = Words(lines[i]);
    if (words.size() > key_column) rows[words[key_column]] = words;
  }
  return rows;
}

struct AgentLoopTool {
  std::string name;
  std::string toolset;
};
const std::vector<AgentLoopTool> kAgentLoopTools = {
    {"clarify", "clarify"}, {"delegate_task", "delegation"},
    {"memory", "memory"},   {"session_search", "session_search"},
    {"todo", "todo"},
};

// --- talaria tools --------------------------------------------------------------------------

// With no agent loop attached (issue 18, finding 6) its tools are listed as unavailable, with
// the reason.
TEST(Cli, ToolsListsTheAgentLoopToolsWithEmojiToolsetAndStatus) {
  TempHome home;
  CliRun run = Talaria(home, {"tools"});
  ASSERT_EQ(run.exit_code, 0) << Describe({"tools"}, run);
  const auto lines = SplitLines(run.out);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(Words(lines[0]), (std::vector<std::string>{"tool", "toolset", "status"})) << lines[0];
  const auto rows = RowsBy(run.out, 1);
  for (const auto& tool : kAgentLoopTools) {
    auto it = rows.find(tool.name);
    ASSERT_NE(it, rows.end()) << tool.name << " missing from\n" << run.out;
    const auto& row = it->second;
    ASSERT_EQ(row.size(), 8u) << run.out;
    EXPECT_EQ(row[0], Registry::Global().EmojiOf(tool.name)) << tool.name;
    EXPECT_GE(static_cast<unsigned char>(row[0][0]), 0x80u) << tool.name << ": an emoji, not text";
    EXPECT_EQ(row[2], tool.toolset) << tool.name;
    EXPECT_EQ(std::vector<std::string>(row.begin() + 3, row.end()),
              (std::vector<std::string>{"unavailable:", "needs", "the", "agent", "loop"}))
        << tool.name;
  }
  EXPECT_EQ(rows.at("clarify")[0], "\xE2\x9D\x93");  // ❓
}

TEST(Cli, ToolsJsonPrintsOpenAiFunctionDefinitionsSortedByName) {
  TempHome home;
  CliRun run = Talaria(home, {"tools", "--json"});
  ASSERT_EQ(run.exit_code, 0) << Describe({"tools", "--json"}, run);
  auto parsed = ParseJson(run.out);
  ASSERT_TRUE(parsed.has_value()) << run.out.substr(0, 300);
  ASSERT_TRUE(parsed->is_array());
  std::vector<std::string> names;
  for (const Json& def : *parsed) {
    ASSERT_TRUE(def.is_object());
    EXPECT_EQ(def.value("type", ""), "function");
    ASSERT_TRUE(def.contains("function")) << def.dump().substr(0, 200);
    const Json& fn = def["function"];
    ASSERT_TRUE(fn.contains("name") && fn["name"].is_string());
    EXPECT_TRUE(fn.contains("description") && fn["description"].is_string()) << fn["name"];
    ASSERT_TRUE(fn.contains("parameters")) << fn["name"];
    EXPECT_EQ(fn["parameters"].value("type", ""), "object") << fn["name"];
    names.push_back(fn["name"].get<std::string>());
  }
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  // The list a user hands a model: what a session serves (execute_code too), nothing that can
  // only fail (the agent loop's tools, with no loop attached).
  EXPECT_THAT(names, ::testing::Contains("execute_code"));
  EXPECT_THAT(names, ::testing::Contains("read_file"));
  for (const auto& tool : kAgentLoopTools) {
    EXPECT_EQ(std::find(names.begin(), names.end(), tool.name), names.end()) << tool.name;
  }
}

// Issue 18, finding 5: execute_code is listed like every tool a session serves, and `tools`
// and `toolsets` agree on the code_execution toolset.
TEST(Cli, ToolsListsExecuteCodeAndAgreesWithToolsets) {
  TempHome home;
  CliRun all = Talaria(home, {"tools"});
  ASSERT_EQ(all.exit_code, 0) << Describe({"tools"}, all);
  const auto rows = RowsBy(all.out, 1);
  ASSERT_TRUE(rows.contains("execute_code")) << all.out;
  EXPECT_EQ(rows.at("execute_code")[2], "code_execution");
  EXPECT_EQ(rows.at("execute_code")[3], "available") << all.out;

  const std::vector<std::string> args = {"tools", "--toolsets", "code_execution"};
  CliRun only = Talaria(home, args);
  ASSERT_EQ(only.exit_code, 0) << Describe(args, only);
  const auto only_rows = RowsBy(only.out, 1);
  EXPECT_EQ(only_rows.size(), 1u) << Describe(args, only);
  EXPECT_TRUE(only_rows.contains("execute_code")) << Describe(args, only);

  CliRun sets = Talaria(home, {"toolsets"});
  ASSERT_EQ(sets.exit_code, 0) << Describe({"toolsets"}, sets);
  EXPECT_EQ(RowsBy(sets.out, 0).at("code_execution")[2], "1") << sets.out;
}

TEST(Cli, ToolsFilteredByToolsetsListsOnlyTheirTools) {
  TempHome home;
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"tools", "--toolsets", "todo,clarify"},
        std::vector<std::string>{"tools", "--toolsets", "todo", "--toolsets", "clarify"}}) {
    CliRun run = Talaria(home, args);
    ASSERT_EQ(run.exit_code, 0) << Describe(args, run);
    const auto rows = RowsBy(run.out, 1);
    std::vector<std::string> names;
    for (const auto& [name, row] : rows) names.push_back(name);
    EXPECT_EQ(names, (std::vector<std::string>{"clarify", "todo"})) << Describe(args, run);
  }
}

TEST(Cli, ToolsWithAnUnknownToolsetExitsTwoListingTheValidOnes) {
  TempHome home;
  CliRun run = Talaria(home, {"tools", "--toolsets", "nope"});
  EXPECT_EQ(run.exit_code, 2) << Describe({"tools", "--toolsets", "nope"}, run);
  EXPECT_THAT(run.err, HasSubstr("nope"));
  EXPECT_THAT(run.err, HasSubstr("valid toolsets"));
  for (const char* valid : {"talaria-cli", "talaria-mcp", "debugging", "safe", "todo"}) {
    EXPECT_THAT(run.err, HasSubstr(valid));
  }
  EXPECT_EQ(run.out, "");
}

// --- talaria toolsets -----------------------------------------------------------------------

TEST(Cli, ToolsetsListsBundlesAndScenarioSetsWithTheirSizes) {
  TempHome home;
  CliRun run = Talaria(home, {"toolsets"});
  ASSERT_EQ(run.exit_code, 0) << Describe({"toolsets"}, run);
  const auto lines = SplitLines(run.out);
  ASSERT_FALSE(lines.empty());
  EXPECT_THAT(lines[0], HasSubstr("toolset"));
  EXPECT_THAT(lines[0], HasSubstr("includes"));
  EXPECT_THAT(lines[0], HasSubstr("tools"));
  const auto rows = RowsBy(run.out, 0);
  struct Want {
    std::string name;
    std::string includes;
    std::string count;
  };
  // Counted as served (issue 18, finding 14): tools that are built in and can run here; no
  // vision or image tools are built in, web_search needs a search backend configured, and the
  // agent loop's tools need a loop (but session_search, which `talaria mcp` answers from the
  // sessions database).
  const std::vector<Want> wants = {
      {"talaria-cli", "-", "9"},  // terminal, process, file (4), execute_code, web_extract,
                                  // session_search
      {"session_search", "-", "1"},
      {"talaria-mcp", "-", "8"},
      {"debugging", "web,file", "7"},         // terminal, process + web_extract + file (4)
      {"safe", "web,vision,image_gen", "1"},  // web_extract
      {"todo", "-", "0"},
  };
  for (const Want& want : wants) {
    auto it = rows.find(want.name);
    ASSERT_NE(it, rows.end()) << want.name << " missing from\n" << run.out;
    ASSERT_GE(it->second.size(), 3u);
    EXPECT_EQ(it->second[1], want.includes) << want.name;
    EXPECT_EQ(it->second[2], want.count) << want.name;
  }
}

// Issue 18, finding 14: each count is what `talaria mcp --toolsets NAME` serves, and no
// description names a tool family that is not built in.
TEST(Cli, ToolsetCountsAreWhatTheServerServesAndDescriptionsNameOnlyRegisteredTools) {
  TempHome home;
  CliRun run = Talaria(home, {"toolsets"});
  ASSERT_EQ(run.exit_code, 0) << Describe({"toolsets"}, run);
  const auto rows = RowsBy(run.out, 0);
  for (const std::string name : {"talaria-mcp", "talaria-cli", "debugging", "file", "web"}) {
    const std::string input =
        Json{{"jsonrpc", "2.0"},
             {"id", 1},
             {"method", "initialize"},
             {"params", {{"protocolVersion", "2024-11-05"}}}}
            .dump() +
        "\n" + Json{{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}}.dump() + "\n" +
        Json{{"jsonrpc", "2.0"}, {"id", 2}, {"method", "tools/list"}}.dump() + "\n";
    CliRun mcp = testing_cli::RunTalaria({.home = home.path(),
                                          .cwd = home.path(),
                                          .stdin_data = input,
                                          .timeout = std::chrono::seconds(10),
                                          .extra_env = {}},
                                         {"mcp", "--toolsets", name});
    ASSERT_EQ(mcp.exit_code, 0) << Describe({"mcp", "--toolsets", name}, mcp);
    const auto lines = SplitLines(mcp.out);
    ASSERT_EQ(lines.size(), 2u) << mcp.out;
    const Json list = Json::parse(lines[1]);
    ASSERT_TRUE(rows.contains(name)) << run.out;
    EXPECT_EQ(rows.at(name)[2], std::to_string(list["result"]["tools"].size())) << name << "\n"
                                                                                << run.out;
  }
  // vision_analyze is built in; without a vision model configured it says what to set.
  EXPECT_THAT(rows.at("vision"), ::testing::Contains("unavailable:")) << run.out;
  EXPECT_EQ(rows.at("web")[2], "1") << run.out;  // web_extract; web_search needs a backend
  EXPECT_THAT(rows.at("todo"), ::testing::Contains("unavailable:")) << run.out;
}

TEST(Cli, UserToolsetsFromConfigShowUpInToolsetsAndSelectTools) {
  TempHome home;
  home.WriteConfig(
      "toolsets:\n"
      "  review:\n"
      "    description: Code review helpers\n"
      "    tools: [read_file, clarify]\n"
      "    includes: [web]\n");
  CliRun run = Talaria(home, {"toolsets"});
  ASSERT_EQ(run.exit_code, 0) << Describe({"toolsets"}, run);
  const auto rows = RowsBy(run.out, 0);
  auto it = rows.find("review");
  ASSERT_NE(it, rows.end()) << run.out;
  EXPECT_EQ(it->second[1], "web");
  EXPECT_EQ(it->second[2], "2");  // read_file, web_extract (clarify needs the agent loop,
                                  // web_search a search backend)
  EXPECT_THAT(run.out, HasSubstr("Code review helpers"));

  CliRun tools = Talaria(home, {"tools", "--toolsets", "review"});
  ASSERT_EQ(tools.exit_code, 0) << Describe({"tools", "--toolsets", "review"}, tools);
  const auto tool_rows = RowsBy(tools.out, 1);
  EXPECT_TRUE(tool_rows.contains("clarify")) << tools.out;
  EXPECT_FALSE(tool_rows.contains("todo")) << tools.out;
}

TEST(Cli, ReadsTheConfigNamedByTheConfigOption) {
  TempHome home;
  const std::string other = home.path() + "/other.yaml";
  std::ofstream(other) << "toolsets:\n  elsewhere:\n    tools: [todo]\n";
  CliRun run = Talaria(home, {"--config", other, "toolsets"});
  ASSERT_EQ(run.exit_code, 0) << Describe({"--config", other, "toolsets"}, run);
  EXPECT_TRUE(RowsBy(run.out, 0).contains("elsewhere")) << run.out;
}

// Issue 18, finding 9: --config is accepted after the subcommand too, a file it names must
// exist, and a misspelt top-level section is reported with the closest valid one.
TEST(Cli, ConfigOptionWorksAfterTheSubcommand) {
  TempHome home;
  const std::string other = home.path() + "/other.yaml";
  std::ofstream(other) << "toolsets:\n  elsewhere:\n    tools: [todo]\n";
  for (const auto& args :
       {std::vector<std::string>{"toolsets", "--config", other},
        std::vector<std::string>{"tools", "--toolsets", "elsewhere", "--config", other}}) {
    CliRun run = Talaria(home, args);
    ASSERT_EQ(run.exit_code, 0) << Describe(args, run);
    EXPECT_THAT(run.out, HasSubstr(args[0] == "toolsets" ? "elsewhere" : "todo"))
        << Describe(args, run);
  }
}

TEST(Cli, ConfigOptionNamingAMissingFileExitsTwoNamingIt) {
  TempHome home;
  const std::string missing = home.path() + "/no-such-config.yaml";
  for (const auto& args : {std::vector<std::string>{"--config", missing, "toolsets"},
                           std::vector<std::string>{"tools", "--config", missing}}) {
    CliRun run = Talaria(home, args);
    EXPECT_EQ(run.exit_code, 2) << Describe(args, run);
    EXPECT_THAT(run.err, HasSubstr(missing)) << Describe(args, run);
    EXPECT_EQ(run.out, "") << Describe(args, run);
  }
  // The default file may be absent: that is the defaults.
  CliRun run = Talaria(home, {"toolsets"});
  EXPECT_EQ(run.exit_code, 0) << Describe({"toolsets"}, run);
}

TEST(Cli, UnknownTopLevelConfigKeyWarnsWithTheClosestValidOne) {
  TempHome home;
  home.WriteConfig("aproovals: {mode: yolo}\nzzzqqq: 1\ntoolsets: {}\n");
  CliRun run = Talaria(home, {"toolsets"});
  EXPECT_EQ(run.exit_code, 0) << Describe({"toolsets"}, run);
  EXPECT_THAT(run.err, HasSubstr("unknown top-level key 'aproovals'")) << run.err;
  EXPECT_THAT(run.err, HasSubstr("did you mean 'approvals'?")) << run.err;
  EXPECT_THAT(run.err, HasSubstr("unknown top-level key 'zzzqqq' is ignored\n")) << run.err;
  EXPECT_THAT(run.err, Not(HasSubstr("'toolsets' is ignored"))) << run.err;
}

TEST(Cli, BrokenConfigExitsTwoWithAMessageNamingTheFile) {
  struct Case {
    const char* name;
    const char* yaml;
    const char* detail;  // also in the message
  };
  const std::vector<Case> cases = {
      {"not YAML", "toolsets: [unclosed\n", "YAML"},
      {"wrong shape", "toolsets: 5\n", "toolsets"},
      {"bad tool list", "toolsets:\n  review:\n    tools: 7\n", "toolsets.review.tools"},
      {"bad budget", "tool_budget:\n  result_size_chars: lots\n", "tool_budget.result_size_chars"},
      {"bad hook matcher",
       "hooks:\n  PreToolUse:\n    - matcher: \"(unclosed\"\n      hooks: [{type: command, "
       "command: \"true\"}]\n",
       "matcher"},
  };
  for (const Case& c : cases) {
    TempHome home;
    home.WriteConfig(c.yaml);
    for (const char* sub : {"toolsets", "tools"}) {
      CliRun run = Talaria(home, {sub});
      EXPECT_EQ(run.exit_code, 2) << c.name << "\n" << Describe({sub}, run);
      EXPECT_THAT(run.err, HasSubstr(home.config_path())) << c.name;
      EXPECT_THAT(run.err, HasSubstr(c.detail)) << c.name;
    }
  }
}

// Regression: YAML scalars are typed through ParseJson, which let nlohmann's out_of_range (406)
// escape for "1e999", so such a config aborted the CLI instead of loading or being refused.
TEST(Cli, ConfigWithANumberBeyondDoubleRangeLoadsOrIsRefusedNeverCrashes) {
  {
    TempHome home;
    home.WriteConfig("toolsets:\n  big:\n    description: 1e999\n    tools: [todo]\n");
    CliRun run = Talaria(home, {"toolsets"});
    EXPECT_EQ(run.exit_code, 0) << Describe({"toolsets"}, run);
    EXPECT_TRUE(RowsBy(run.out, 0).contains("big")) << Describe({"toolsets"}, run);
  }
  {
    TempHome home;
    home.WriteConfig("tool_budget:\n  result_size_chars: 1e999\n");
    CliRun run = Talaria(home, {"toolsets"});
    EXPECT_EQ(run.exit_code, 2) << Describe({"toolsets"}, run);
    EXPECT_THAT(run.err, HasSubstr(home.config_path())) << Describe({"toolsets"}, run);
    EXPECT_THAT(run.err, HasSubstr("tool_budget.result_size_chars")) << Describe({"toolsets"}, run);
  }
}

// --- talaria call ---------------------------------------------------------------------------

TEST(Cli, CallOfAnAgentLoopToolExitsOneWithTheAgentLoopError) {
  TempHome home;
  struct Case {
    std::vector<std::string> args;
    std::string error;
  };
  const std::vector<Case> cases = {
      {{"call", "todo"}, "todo must be handled by the agent loop"},
      {{"call", "todo_list"}, "todo must be handled by the agent loop"},  // legacy alias
      {{"call", "memory", "action=add", "target=memory", "content=x"},
       "memory must be handled by the agent loop"},
      {{"call", "clarify", "question=hi"}, "clarify must be handled by the agent loop"},
  };
  for (const Case& c : cases) {
    CliRun run = Talaria(home, c.args);
    EXPECT_EQ(run.exit_code, 1) << Describe(c.args, run);
    auto body = ParseJson(run.out);
    ASSERT_TRUE(body.has_value()) << Describe(c.args, run);
    EXPECT_EQ(body->value("error", ""), c.error) << Describe(c.args, run);
  }
}

TEST(Cli, CallOfAnUnknownToolExitsOne) {
  TempHome home;
  CliRun run = Talaria(home, {"call", "nosuch"});
  EXPECT_EQ(run.exit_code, 1) << Describe({"call", "nosuch"}, run);
  auto body = ParseJson(run.out);
  ASSERT_TRUE(body.has_value()) << run.out;
  EXPECT_EQ(*body, Json::object({{"error", "Unknown tool: nosuch"}}));
}

TEST(Cli, CallLetsCoercionTypeKeyValueStrings) {
  TempHome home;
  // "TRUE" coerces to a boolean, so validation passes and routing answers.
  CliRun typed = Talaria(home, {"call", "clarify", "multi_select=TRUE", "question=hi"});
  EXPECT_EQ(typed.exit_code, 1);
  EXPECT_THAT(typed.out, HasSubstr("clarify must be handled by the agent loop")) << typed.out;
  // "maybe" does not, and the validation error names the argument.
  CliRun untyped = Talaria(home, {"call", "clarify", "multi_select=maybe"});
  EXPECT_EQ(untyped.exit_code, 1);
  auto body = ParseJson(untyped.out);
  ASSERT_TRUE(body.has_value()) << untyped.out;
  EXPECT_THAT(body->value("error", ""), HasSubstr("multi_select")) << untyped.out;
  EXPECT_THAT(untyped.out, Not(HasSubstr("agent loop")));
  // key=value pairs override --args.
  CliRun both = Talaria(
      home, {"call", "clarify", "--args", R"({"multi_select": "maybe"})", "multi_select=false"});
  EXPECT_EQ(both.exit_code, 1);
  EXPECT_THAT(both.out, HasSubstr("clarify must be handled by the agent loop")) << both.out;
}

TEST(Cli, CallWithMalformedArgumentsIsAUsageError) {
  TempHome home;
  const std::vector<std::vector<std::string>> cases = {
      {"call", "x", "badassignment"},
      {"call", "x", "=value"},
      {"call", "x", "--args", "[1, 2]"},
      {"call", "x", "--args", "{oops"},
      {"call"},
  };
  for (const auto& args : cases) {
    CliRun run = Talaria(home, args);
    EXPECT_EQ(run.exit_code, 2) << Describe(args, run);
    EXPECT_EQ(run.out, "") << Describe(args, run) << ": nothing was dispatched";
  }
}

// Regression: a number beyond the range of a double made ParseJson throw (nlohmann
// out_of_range 406 is not a parse_error), and `talaria call` died with SIGABRT.
TEST(Cli, CallWithANumberBeyondDoubleRangeIsAUsageErrorNotACrash) {
  TempHome home;
  const std::vector<std::string> args = {"call", "todo", "--args", R"({"n": 1e999})"};
  CliRun run = Talaria(home, args);
  EXPECT_EQ(run.exit_code, 2) << Describe(args, run);
  EXPECT_THAT(run.err, HasSubstr("--args")) << Describe(args, run);
}

// No tool built into the CLI today reaches the pre hooks: every registered tool is an agent-loop
// tool, and (as in the original) agent-loop routing answers before any PreToolUse hook runs.
TEST(Cli, AgentLoopRoutingAnswersBeforeAPreToolUseHookRuns) {
  TempHome home;
  const std::string marker = home.path() + "/hook-ran";
  home.WriteConfig(
      "hooks:\n"
      "  PreToolUse:\n"
      "    - matcher: \".*\"\n"
      "      hooks:\n"
      "        - type: command\n"
      "          command: \"touch " +
      marker +
      "; echo 'no clarifying today' >&2; exit 2\"\n"
      "          timeout: 5\n");
  const std::vector<std::string> args = {"call", "clarify", "question=hi"};
  CliRun run = Talaria(home, args);
  EXPECT_EQ(run.exit_code, 1) << Describe(args, run);
  EXPECT_THAT(run.out, HasSubstr("clarify must be handled by the agent loop"))
      << Describe(args, run);
  EXPECT_THAT(run.out, Not(HasSubstr("no clarifying today")));
  EXPECT_FALSE(fs::exists(marker)) << "the hook ran for a call the agent loop owns";
}

// read_file is not an agent-loop tool, so its calls reach the PreToolUse hooks of config.yaml:
// the hook sees the event on stdin (after coercion) and its exit 2 blocks with its stderr.
TEST(Cli, PreToolUseCommandHookBlocksACallWithItsMessage) {
  TempHome home;
  const std::string event_file = home.path() + "/event.json";
  home.WriteConfig(
      "hooks:\n"
      "  PreToolUse:\n"
      "    - matcher: \"read_file|write_file\"\n"
      "      hooks:\n"
      "        - type: command\n"
      "          command: \"cat > " +
      event_file +
      "; echo 'no reading today' >&2; exit 2\"\n"
      "          timeout: 5\n");
  const std::vector<std::string> args = {"call", "read_file", "path=notes.txt", "limit=5"};
  CliRun run = Talaria(home, args);
  EXPECT_EQ(run.exit_code, 1) << Describe(args, run);
  auto body = ParseJson(run.out);
  ASSERT_TRUE(body.has_value()) << Describe(args, run);
  EXPECT_EQ(body->value("error", ""),
            "Blocked by PreToolUse hook hooks.PreToolUse[0].hooks[0]: no reading today")
      << Describe(args, run);

  std::ifstream in(event_file);
  std::stringstream event_text;
  event_text << in.rdbuf();
  auto event = ParseJson(event_text.str());
  ASSERT_TRUE(event.has_value() && event->is_object()) << "hook stdin: " << event_text.str();
  EXPECT_EQ(event->value("hook_event_name", ""), "PreToolUse");
  EXPECT_EQ(event->value("tool_name", ""), "read_file");
  ASSERT_TRUE(event->contains("tool_input"));
  EXPECT_EQ((*event)["tool_input"], Json::object({{"path", "notes.txt"}, {"limit", 5}}))
      << "the hook sees the coerced arguments";
}

// A hook whose program is missing lets the call through, unless it is fail_closed (issue 18,
// finding 10).
TEST(Cli, FailClosedPreToolUseHookWhoseProgramIsMissingBlocksTheCall) {
  TempHome home;
  std::ofstream(home.path() + "/notes.txt") << "hello\n";
  const std::string missing = home.path() + "/no-such-check.sh";
  const std::string hook = "        - {type: command, command: \"" + missing + "\"";
  const std::vector<std::string> args = {"call", "read_file", "path=notes.txt"};

  home.WriteConfig("hooks:\n  PreToolUse:\n    - hooks:\n" + hook + "}\n");
  CliRun open = Talaria(home, args, home.path());
  EXPECT_EQ(open.exit_code, 0) << Describe(args, open);

  home.WriteConfig("hooks:\n  PreToolUse:\n    - hooks:\n" + hook + ", fail_closed: true}\n");
  CliRun closed = Talaria(home, args, home.path());
  EXPECT_EQ(closed.exit_code, 1) << Describe(args, closed);
  auto body = ParseJson(closed.out);
  ASSERT_TRUE(body.has_value()) << Describe(args, closed);
  EXPECT_THAT(body->value("error", ""),
              HasSubstr("Blocked by PreToolUse hook hooks.PreToolUse[0].hooks[0]: "))
      << Describe(args, closed);
  EXPECT_THAT(body->value("error", ""), HasSubstr("could not run")) << Describe(args, closed);
}

// The file tools with the CLI's default root, the current directory.
TEST(Cli, CallReadFileReadsAWindowOfAFileInTheCurrentDirectory) {
  TempHome home;
  const std::string dir = home.path() + "/project";
  fs::create_directories(dir);
  std::ofstream(dir + "/README.md") << "# title\nline two\nline three\nline four\nline five\n";
  const std::vector<std::string> args = {"call", "read_file", "path=README.md", "offset=2",
                                         "limit=3"};
  CliRun run = Talaria(home, args, dir);
  ASSERT_EQ(run.exit_code, 0) << Describe(args, run);
  auto body = ParseJson(run.out);
  ASSERT_TRUE(body.has_value()) << run.out;
  EXPECT_EQ(body->value("content", ""), "2|line two\n3|line three\n4|line four");
  EXPECT_EQ(body->value("total_lines", 0), 5);

  // Outside the default root: an error result, exit 1.
  CliRun outside = Talaria(home, {"call", "read_file", "path=../config.yaml"}, dir);
  EXPECT_EQ(outside.exit_code, 1) << outside.out;
  EXPECT_THAT(outside.out, HasSubstr("\"error\""));
}

TEST(Cli, CallWriteFileWritesUnderAnExplicitRootOnly) {
  TempHome home;
  const std::string root = home.path() + "/ws";
  fs::create_directories(root);
  const std::vector<std::string> args = {
      "call", "write_file", "--root", root, "path=" + root + "/new/a.json", "content={\"a\": 1}"};
  CliRun run = Talaria(home, args, home.path());
  ASSERT_EQ(run.exit_code, 0) << Describe(args, run);
  std::ifstream in(root + "/new/a.json");
  std::string written((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(written, "{\"a\": 1}");
  CliRun refused = Talaria(
      home, {"call", "write_file", "--root", root, "path=" + home.path() + "/x.txt", "content=x"},
      home.path());
  EXPECT_EQ(refused.exit_code, 1) << refused.out;
  EXPECT_FALSE(fs::exists(home.path() + "/x.txt"));
}

TEST(Cli, CallTerminalRunsACommandAndTheGuardRefusesADangerousOne) {
  TempHome home;
  CliRun run = Talaria(home, {"call", "terminal", "command=echo hi"}, home.path());
  ASSERT_EQ(run.exit_code, 0) << Describe({"call", "terminal", "command=echo hi"}, run);
  EXPECT_EQ(ParseJson(run.out).value_or(Json()),
            Json({{"output", "hi\n"}, {"exit_code", 0}, {"error", nullptr}}));
  // No terminal answers the approval prompt here, and the default mode is deny.
  CliRun refused = Talaria(home, {"call", "terminal", "command=git push --force"}, home.path());
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_THAT(refused.out, HasSubstr("git_force_push"));
}

TEST(Cli, TerminalBackendFromConfigSandboxesCommands) {
  TALARIA_SKIP_WITHOUT_BWRAP();
  TempHome home;
  home.WriteConfig("terminal:\n  backend: bwrap\n");
  const std::string ws = home.path() + "/ws";
  fs::create_directories(ws);
  CliRun run = Talaria(
      home, {"call", "terminal", "--root", ws, "command=touch /etc/talaria-cli-escape; touch ok"},
      ws);
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_THAT(run.out, HasSubstr("Read-only file system"));
  EXPECT_FALSE(fs::exists("/etc/talaria-cli-escape"));
  EXPECT_TRUE(fs::exists(ws + "/ok"));
}

// --- help and usage -------------------------------------------------------------------------

TEST(Cli, HelpWorksForTheProgramAndEverySubcommand) {
  TempHome home;
  struct Case {
    std::vector<std::string> args;
    std::string mentions;
  };
  const std::vector<Case> cases = {
      {{"--help"}, "tools"},           {{"-h"}, "toolsets"},
      {{"tools", "--help"}, "--json"}, {{"toolsets", "--help"}, "toolsets"},
      {{"call", "--help"}, "--args"},
  };
  for (const Case& c : cases) {
    CliRun run = Talaria(home, c.args);
    EXPECT_EQ(run.exit_code, 0) << Describe(c.args, run);
    EXPECT_THAT(run.out, HasSubstr("Usage")) << Describe(c.args, run);
    EXPECT_THAT(run.out, HasSubstr(c.mentions)) << Describe(c.args, run);
  }
}

// Issue 18, finding 13: a configured server that cannot be reached is warned about once per
// command, although it is retried while the command waits for a slower one.
TEST(Cli, AnUnreachableMcpServerIsWarnedAboutOnce) {
  TempHome home;
  home.WriteConfig(
      "mcp_servers:\n"
      "  unreachable: {url: \"http://127.0.0.1:1/mcp\"}\n"
      "  silent: {command: sleep, args: [\"30\"], connect_timeout: 2}\n");
  CliRun run = Talaria(home, {"toolsets"});
  EXPECT_EQ(run.exit_code, 0) << Describe({"toolsets"}, run);
  size_t warnings = 0;
  for (const std::string& line : SplitLines(run.err)) {
    if (line.find("server 'unreachable'") != std::string::npos) ++warnings;
  }
  EXPECT_EQ(warnings, 1u) << run.err;
  // Whole, not httplib's bare "Connection".
  EXPECT_THAT(run.err, HasSubstr("the connection failed")) << run.err;
}

// Issue 18, finding 13.
TEST(Cli, VersionPrintsTheProjectVersion) {
  TempHome home;
  CliRun run = Talaria(home, {"--version"});
  EXPECT_EQ(run.exit_code, 0) << Describe({"--version"}, run);
  EXPECT_EQ(run.out, std::string("talaria ") + TALARIA_VERSION + "\n")
      << Describe({"--version"}, run);
}

TEST(Cli, MissingOrUnknownSubcommandIsAUsageError) {
  TempHome home;
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{}, std::vector<std::string>{"frobnicate"},
        std::vector<std::string>{"tools", "--no-such-flag"}}) {
    CliRun run = Talaria(home, args);
    EXPECT_EQ(run.exit_code, 2) << Describe(args, run);
  }
}

}  // namespace
}  // namespace talaria
