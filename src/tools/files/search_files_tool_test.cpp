// search_files through the dispatcher: schema, registration, result shapes of the original,
// the workspace boundary, sensitive files and the consecutive-search guard.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "talaria/confinement/workspace.h"
#include "talaria/core/dispatcher.h"
#include "talaria/core/registry.h"
#include "talaria/tools/session_services.h"
#include "tools/files/file_tool_fixture.h"

namespace talaria::tools {
namespace {

namespace fs = std::filesystem;

class SearchFilesTool : public testing::FileToolTest {
 protected:
  ToolResult Call(const Json& args) { return CallRaw("search_files", args); }
  static Json Body(const ToolResult& r) {
    const std::string& t = r.text;
    return Json::parse(t.substr(0, t.find("\n\n[Hint:")));
  }
};

TEST_F(SearchFilesTool, IsRegisteredWithTheOriginalsSchema) {
  auto entry = Registry::Global().GetEntry("search_files");
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(entry->toolset(), "file");
  EXPECT_EQ(entry->emoji(), "\xF0\x9F\x94\x8D");
  EXPECT_EQ(entry->max_result_chars(), 100'000);
  EXPECT_EQ(entry->parallel(), ParallelClass::kPathScoped);
  EXPECT_EQ(entry->path_access(), PathAccess::kRead);
  EXPECT_EQ(entry->path_args(), std::vector<std::string>{"path"});
  EXPECT_TRUE(entry->annotations().read_only);
  EXPECT_TRUE(entry->annotations().idempotent);
  const Json schema = Json::parse(entry->schema_text());
  const Json& params = schema["parameters"];
  EXPECT_EQ(params["required"], Json::array({"pattern"}));
  std::vector<std::string> names;
  for (const auto& [name, _] : params["properties"].items()) names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{"pattern", "target", "path", "file_glob", "limit",
                                             "offset", "output_mode", "context"}));
  const Json& p = params["properties"];
  EXPECT_EQ(p["target"]["enum"], Json::array({"content", "files"}));
  EXPECT_EQ(p["target"]["default"], "content");
  EXPECT_EQ(p["path"]["default"], ".");
  EXPECT_EQ(p["limit"]["default"], 50);
  EXPECT_EQ(p["offset"]["default"], 0);
  EXPECT_EQ(p["output_mode"]["enum"], Json::array({"content", "files_only", "count"}));
  EXPECT_EQ(p["output_mode"]["default"], "content");
  EXPECT_EQ(p["context"]["default"], 0);
}

TEST_F(SearchFilesTool, NeedsAWorkspace) {
  EnsureServices(ctx_).workspace = nullptr;
  auto r = Call({{"pattern", "x"}});
  EXPECT_EQ(r.status, CallStatus::kError);
  EXPECT_EQ(Body(r)["error"], "no workspace is attached to this session");
}

TEST_F(SearchFilesTool, FewMatchesAreAList) {
  Write("src/a.py", "import os\ndef main():\n    pass\n");
  Write("src/b.py", "def helper():\n");
  auto r = Call({{"pattern", "^def "}});
  ASSERT_TRUE(r.ok()) << r.text;
  EXPECT_EQ(r.text,
            R"({"total_count":2,"matches":[{"path":"./src/a.py","line":2,"content":"def main():"},)"
            R"({"path":"./src/b.py","line":1,"content":"def helper():"}]})");
}

TEST_F(SearchFilesTool, FiveMatchesArePathGrouped) {
  Write("a.txt", "hit 1\nhit 2  \nhit 3\n");
  Write("b/c.txt", "  hit 4\nhit 5\n");
  auto r = Call({{"pattern", "hit"}, {"path", "."}});
  ASSERT_TRUE(r.ok()) << r.text;
  const Json body = Body(r);
  EXPECT_EQ(body["total_count"], 5);
  EXPECT_FALSE(body.contains("matches"));
  EXPECT_EQ(
      body["matches_format"],
      "path-grouped: each file path on its own line, followed by indented '<line>: <content>' "
      "rows for matches in that file");
  EXPECT_EQ(body["matches_text"],
            "./a.txt\n  1: hit 1\n  2: hit 2\n  3: hit 3\n./b/c.txt\n  1:   hit 4\n  2: hit 5");
}

TEST_F(SearchFilesTool, TruncationAddsLowerBoundAndAHintAfterTheJson) {
  for (int i = 0; i < 4; ++i) Write("f" + std::to_string(i) + ".txt", "hit\nhit\nhit\n");
  auto r = Call({{"pattern", "hit"}, {"limit", 5}, {"offset", 2}});
  ASSERT_TRUE(r.ok()) << r.text;
  const std::string hint =
      "\n\n[Hint: Results truncated. Use offset=7 to see more, or narrow with a more specific "
      "pattern or file_glob.]";
  ASSERT_TRUE(r.text.ends_with(hint)) << r.text;
  const Json body = Body(r);
  EXPECT_EQ(body["truncated"], true);
  EXPECT_EQ(body["total_count_is_lower_bound"], true);
  EXPECT_GE(body["total_count"].get<int>(), 8);
  EXPECT_EQ(body["matches_text"],
            "./f0.txt\n  3: hit\n./f1.txt\n  1: hit\n  2: hit\n  3: hit\n./f2.txt\n  1: hit");
}

TEST_F(SearchFilesTool, CountAndFilesOnlyShapes) {
  Write("a.txt", "x\nx\n");
  Write("b.txt", "y\n");
  Write("c.txt", "x\n");
  auto counts = Call({{"pattern", "x"}, {"output_mode", "count"}});
  EXPECT_EQ(counts.text, R"({"total_count":3,"counts":{"./a.txt":2,"./c.txt":1}})");
  auto files = Call({{"pattern", "x"}, {"output_mode", "files_only"}});
  EXPECT_EQ(files.text, R"({"total_count":2,"files":["./a.txt","./c.txt"]})");
  auto none = Call({{"pattern", "zzz"}});
  EXPECT_EQ(none.text, R"({"total_count":0})");
}

TEST_F(SearchFilesTool, ContextLinesBecomeMatchesLikeRipgrepOutput) {
  Write("a.txt", "one\ntwo\nthree\n");
  auto r = Call({{"pattern", "two"}, {"context", 1}});
  EXPECT_EQ(
      r.text,
      R"({"total_count":3,"matches":[{"path":"./a.txt","line":1,"content":"one"},)"
      R"({"path":"./a.txt","line":2,"content":"two"},{"path":"./a.txt","line":3,"content":"three"}]})");
}

TEST_F(SearchFilesTool, FileSearchWithAliasesAndBareNames) {
  Write("src/config.py", "");
  Write("src/app_config.py", "");
  Write("src/main.cpp", "");
  auto r = Call({{"pattern", "*.py"}, {"target", "files"}, {"path", "src"}});
  EXPECT_EQ(r.text, R"({"total_count":2,"files":["src/app_config.py","src/config.py"]})");
  // A bare name matches as a suffix, like the original's "*name" glob.
  auto bare = Call({{"pattern", "config.py"}, {"target", "files"}});
  EXPECT_EQ(bare.text, R"({"total_count":2,"files":["./src/app_config.py","./src/config.py"]})");
  // The original's aliases find/grep are accepted through the whole pipeline: they are
  // rewritten before the schema's enum is checked.
  auto find = Call({{"pattern", "*.py"}, {"target", "find"}, {"path", "src"}});
  EXPECT_EQ(find.text, R"({"total_count":2,"files":["src/app_config.py","src/config.py"]})");
  Write("src/hit.txt", "needle\n");
  auto grep = Call({{"pattern", "needle"}, {"target", "grep"}, {"path", "src"}});
  EXPECT_EQ(grep.text,
            R"({"total_count":1,"matches":[{"path":"src/hit.txt","line":1,"content":"needle"}]})");
  // Anything else is still refused by the enum.
  auto other = Call({{"pattern", "x"}, {"target", "everything"}});
  EXPECT_FALSE(other.ok());
  EXPECT_NE(other.text.find("target"), std::string::npos) << other.text;
}

TEST_F(SearchFilesTool, SensitiveFilesAreOmittedAndCounted) {
  Write(".env", "TOKEN=hit\n");
  Write("app/.env.production", "hit\n");
  Write("app/main.py", "hit\n");
  auto r = Call({{"pattern", "hit"}});
  ASSERT_TRUE(r.ok()) << r.text;
  const Json body = Body(r);
  EXPECT_EQ(body["matches"].size(), 1U);
  EXPECT_EQ(body["matches"][0]["path"], "./app/main.py");
  EXPECT_EQ(body["_omitted"],
            "2 result(s) omitted because they target credential, token, cache, or secret-bearing "
            "environment files.");
  auto names = Call({{"pattern", ".env*"}, {"target", "files"}});
  EXPECT_EQ(Body(names)["total_count"], 0);
  EXPECT_TRUE(Body(names).contains("_omitted"));
  auto direct = Call({{"pattern", "hit"}, {"path", ".env"}});
  EXPECT_EQ(direct.status, CallStatus::kError);
}

TEST_F(SearchFilesTool, BadRegexIsAClearError) {
  Write("a.txt", "x\n");
  auto r = Call({{"pattern", "foo(bar"}});
  EXPECT_EQ(r.status, CallStatus::kError);
  const Json body = Body(r);
  EXPECT_EQ(body["total_count"], 0);
  const std::string error = body["error"];
  EXPECT_TRUE(error.starts_with("Search failed: regex parse error at offset 7")) << error;
}

// How fast it ends is talaria_search_bench's search_catastrophic_regex_ms.
TEST_F(SearchFilesTool, CatastrophicRegexEnds) {
  Write("long.txt", std::string(100'000, 'a') + "!\n");
  auto r = Call({{"pattern", "(a+)+$"}});
  if (r.status == CallStatus::kError) {
    EXPECT_NE(Body(r)["error"].get<std::string>().find("backtracking limit"), std::string::npos);
  } else {
    EXPECT_EQ(Body(r)["total_count"], 0);
  }
}

TEST_F(SearchFilesTool, PathsOutsideOrMissing) {
  auto missing = Call({{"pattern", "x"}, {"path", "nope"}});
  EXPECT_EQ(Body(missing)["error"], "Path not found: nope");
  auto outside = Call({{"pattern", "x"}, {"path", "/etc"}});
  EXPECT_EQ(outside.status, CallStatus::kError);
  EXPECT_EQ(outside.text.find(root_), std::string::npos);  // roots are never revealed
  auto dotdot = Call({{"pattern", "x"}, {"path", "../.."}});
  EXPECT_EQ(dotdot.status, CallStatus::kError);
}

TEST_F(SearchFilesTool, IgnoreFilesAboveTheSearchedDirectoryApplyUpToTheRepository) {
  Write(".gitignore", "secret_outside_repo.txt\n");  // above the repository: not applied
  Write("repo/.git/HEAD", "ref: refs/heads/main\n");
  Write("repo/.gitignore", "node_modules/\n*.min.js\n");
  Write("repo/web/node_modules/dep/index.js", "hit\n");
  Write("repo/web/app.js", "hit\n");
  Write("repo/web/app.min.js", "hit\n");
  Write("repo/web/secret_outside_repo.txt", "hit\n");
  auto r = Call({{"pattern", "hit"}, {"path", "repo/web"}, {"output_mode", "files_only"}});
  EXPECT_EQ(r.text,
            R"({"total_count":2,"files":["repo/web/app.js","repo/web/secret_outside_repo.txt"]})");
}

TEST_F(SearchFilesTool, SingleFilePath) {
  Write("docs/readme.md", "alpha\nbeta\n");
  auto r = Call({{"pattern", "beta"}, {"path", "docs/readme.md"}});
  EXPECT_EQ(r.text,
            R"({"total_count":1,"matches":[{"path":"docs/readme.md","line":2,"content":"beta"}]})");
}

TEST_F(SearchFilesTool, ConsecutiveIdenticalSearchesWarnThenBlock) {
  Write("a.txt", "x\n");
  const Json args = {{"pattern", "x"}};
  EXPECT_FALSE(Body(Call(args)).contains("_warning"));
  EXPECT_FALSE(Body(Call(args)).contains("_warning"));
  EXPECT_EQ(Body(Call(args))["_warning"],
            "You have run this exact search 3 times consecutively. The results have not changed. "
            "Use the information you already have.");
  auto blocked = Call(args);
  EXPECT_EQ(blocked.status, CallStatus::kError);
  const Json body = Body(blocked);
  EXPECT_TRUE(body["error"].get<std::string>().starts_with(
      "BLOCKED: You have run this exact search 4 times in a row."));
  EXPECT_EQ(body["pattern"], "x");
  EXPECT_EQ(body["already_searched"], 4);
  // Paging is a different search; another tool resets the streak.
  EXPECT_TRUE(Call({{"pattern", "x"}, {"offset", 1}}).ok());
  tracker_->NotifyOtherToolCall("t1");
  EXPECT_FALSE(Body(Call(args)).contains("_warning"));
}

TEST_F(SearchFilesTool, TempFilesOfAtomicWritesAreNeverResults) {
  Write("a.txt", "needle\n");
  Write(".a.txt.talaria-tmp-0123456789abcdef", "needle half-written\n");
  auto content = Call({{"pattern", "needle"}});
  EXPECT_EQ(content.text,
            R"({"total_count":1,"matches":[{"path":"./a.txt","line":1,"content":"needle"}]})");
  auto files = Call({{"pattern", "*a.txt*"}, {"target", "files"}});
  EXPECT_EQ(files.text, R"({"total_count":1,"files":["./a.txt"]})");
}

}  // namespace
}  // namespace talaria::tools
