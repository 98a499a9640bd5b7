// patch through the dispatcher on a real workspace: registration and schema, replace mode, V4A
// mode (all-or-nothing, rollback), the result shape, audit records and the workspace boundary.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "talaria/audit/audit_log.h"
#include "talaria/confinement/workspace.h"
#include "talaria/core/dispatcher.h"
#include "talaria/core/registry.h"
#include "tools/files/file_tool_fixture.h"

namespace talaria::tools {
namespace {

namespace fs = std::filesystem;

class PatchTool : public testing::FileToolTest {
 protected:
  Json Call(const Json& args) { return FileToolTest::Call("patch", args); }
  Json Replace(const std::string& path, const std::string& old_string,
               const std::string& new_string, bool replace_all = false) {
    return Call({{"mode", "replace"},
                 {"path", path},
                 {"old_string", old_string},
                 {"new_string", new_string},
                 {"replace_all", replace_all}});
  }
  Json Patch(const std::string& patch) { return Call({{"mode", "patch"}, {"patch", patch}}); }
};

TEST_F(PatchTool, IsRegisteredWithTheReferenceSchema) {
  auto entry = Registry::Global().GetEntry("patch");
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(entry->toolset(), "file");
  EXPECT_NE(entry->emoji(), kDefaultEmoji);
  EXPECT_EQ(entry->max_result_chars(), 100'000);
  EXPECT_EQ(entry->parallel(), ParallelClass::kPathScoped);
  EXPECT_EQ(entry->path_args(), std::vector<std::string>{"path"});
  EXPECT_EQ(entry->path_access(), PathAccess::kWrite);
  EXPECT_TRUE(entry->annotations().destructive);
  EXPECT_FALSE(entry->annotations().read_only);
  const Json schema = Json::parse(entry->schema_text());
  const Json& params = schema["parameters"];
  // mode defaults to replace, so nothing is required (issue 18, finding 7).
  EXPECT_FALSE(params.contains("required"));
  std::vector<std::string> names;
  for (const auto& [name, _] : params["properties"].items()) names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{"mode", "path", "old_string", "new_string",
                                             "replace_all", "patch"}));
  EXPECT_EQ(params["properties"]["mode"]["enum"], Json::array({"replace", "patch"}));
  EXPECT_EQ(params["properties"]["mode"]["default"], "replace");
  EXPECT_EQ(params["properties"]["replace_all"]["type"], "boolean");
  EXPECT_EQ(params["properties"]["replace_all"]["default"], false);
}

TEST_F(PatchTool, ReplaceEditsTheFileAndReportsTheMatcher) {
  Write("src/app.py", "def greet():\n    print('hello')\n");
  Json r = Replace("src/app.py", "print('hello')", "print('hi')");
  ASSERT_EQ(r.value("success", false), true) << r.dump();
  EXPECT_EQ(Read("src/app.py"), "def greet():\n    print('hi')\n");
  EXPECT_EQ(r["match"]["strategy"], "exact");
  EXPECT_EQ(r["match"]["similarity"], 1.0);
  EXPECT_EQ(r["resolved_path"], root_ + "/src/app.py");
  EXPECT_EQ(r["files_modified"], Json::array({root_ + "/src/app.py"}));
  EXPECT_EQ(r["diff"],
            "--- a/src/app.py\n+++ b/src/app.py\n@@ -1,2 +1,2 @@\n def greet():\n"
            "-    print('hello')\n+    print('hi')\n");
  ASSERT_TRUE(r.contains("lint"));
  EXPECT_EQ(r["lint"]["status"], "ok");
  // Key order of the reference's result.
  std::vector<std::string> keys;
  for (const auto& [k, _] : r.items()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"success", "diff", "files_modified", "lint",
                                            "resolved_path", "match"}));
  EXPECT_TRUE(last_.ok());
}

TEST_F(PatchTool, ReplaceIsTheDefaultWhenModeIsLeftOut) {
  Write("notes.txt", "alpha\nbeta\n");
  Json r = Call({{"path", "notes.txt"}, {"old_string", "beta"}, {"new_string", "gamma"}});
  ASSERT_EQ(r.value("success", false), true) << r.dump();
  EXPECT_EQ(Read("notes.txt"), "alpha\ngamma\n");
}

TEST_F(PatchTool, ReplaceThroughAFuzzyMatcherNamesIt) {
  Write("a.py", "if x:\n    run(1)   \n    stop()\n");
  Json r = Replace("a.py", "run(1)\nstop()", "run(2)\nstop()");
  ASSERT_EQ(r.value("success", false), true) << r.dump();
  EXPECT_EQ(r["match"]["strategy"], "line_trimmed");
  EXPECT_EQ(Read("a.py"), "if x:\n    run(2)\n    stop()\n");
}

TEST_F(PatchTool, ReplaceRefusesAWeakApproximateMatchAndLeavesTheFile) {
  const std::string content =
      "def compute(a, b):\n    total = a + b\n    total = total * 2\n    return total\n";
  Write("c.py", content);
  Json r = Replace(
      "c.py", "def compute(a, b):\n    total = b * c\n    total = total / 20\n    return total",
      "def compute(a, b):\n    return 0");
  EXPECT_EQ(r["success"], false);
  EXPECT_NE(r["error"].get<std::string>().find("below the 0.90"), std::string::npos) << r.dump();
  EXPECT_EQ(Read("c.py"), content);
  EXPECT_FALSE(last_.ok());
}

TEST_F(PatchTool, ReplaceNotFoundCarriesDidYouMeanAndAHint) {
  Write("a.txt", "alpha beta\ngamma delta\n");
  Json r = Replace("a.txt", "gamma delte", "x");
  EXPECT_EQ(r["success"], false);
  const std::string error = r["error"];
  EXPECT_EQ(error.rfind("Could not find a match for old_string in the file", 0), 0u) << error;
  EXPECT_NE(error.find("Did you mean"), std::string::npos) << error;
  EXPECT_TRUE(r.contains("_hint"));
  EXPECT_EQ(Read("a.txt"), "alpha beta\ngamma delta\n");
}

TEST_F(PatchTool, ReplaceAlreadyAppliedIsANoOp) {
  Write("a.txt", "value = compute_total(items)\n");
  Json r = Replace("a.txt", "value = compute(items)", "value = compute_total(items)");
  EXPECT_EQ(r["success"], true);
  EXPECT_EQ(r["no_change"], true);
  EXPECT_NE(r["note"].get<std::string>().find("do not re-send this patch"), std::string::npos);
  EXPECT_TRUE(AuditLines().empty());
}

TEST_F(PatchTool, ReplaceKeepsCrlfBomAndMode) {
  Write("w.txt", "\xEF\xBB\xBFone\r\ntwo\r\n");
  ASSERT_EQ(::chmod((root_ + "/w.txt").c_str(), 0640), 0);
  Json r = Replace("w.txt", "one\ntwo", "one\n2\nthree");
  ASSERT_EQ(r.value("success", false), true) << r.dump();
  EXPECT_EQ(Read("w.txt"), "\xEF\xBB\xBFone\r\n2\r\nthree\r\n");
  struct stat st {};
  ASSERT_EQ(::stat((root_ + "/w.txt").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
}

TEST_F(PatchTool, ReplaceAllAndMultipleMatches) {
  Write("m.txt", "x = 1\ny = 2\nx = 1\n");
  Json r = Replace("m.txt", "x = 1", "x = 3");
  EXPECT_EQ(r["success"], false);
  EXPECT_NE(r["error"].get<std::string>().find("L1: x = 1"), std::string::npos);
  r = Replace("m.txt", "x = 1", "x = 3", true);
  ASSERT_EQ(r.value("success", false), true) << r.dump();
  EXPECT_EQ(r["replacements"], 2);
  EXPECT_EQ(Read("m.txt"), "x = 3\ny = 2\nx = 3\n");
}

TEST_F(PatchTool, ReplaceRefusesToBreakAValidJsonFileButLintsABrokenOne) {
  Write("c.json", "{\"a\": 1, \"b\": 2}\n");
  Json r = Replace("c.json", "\"b\": 2}", "\"b\": 2,,}");
  EXPECT_EQ(r["success"], false);
  EXPECT_NE(r["error"].get<std::string>().find("NOT created or modified"), std::string::npos)
      << r.dump();
  EXPECT_EQ(Read("c.json"), "{\"a\": 1, \"b\": 2}\n");

  Write("broken.json", "{\"a\": 1,, \"b\": 2}\n");
  r = Replace("broken.json", "\"b\": 2", "\"b\": 3");
  ASSERT_EQ(r.value("success", false), true) << r.dump();
  EXPECT_EQ(r["lint"]["status"], "error");
}

TEST_F(PatchTool, ReplaceErrorsForMissingFileArgumentsAndWorkspace) {
  Json r = Replace("nope.txt", "a", "b");
  EXPECT_EQ(r["success"], false);
  EXPECT_EQ(r["error"], "File not found: nope.txt");

  r = Call({{"mode", "replace"}, {"path", "x.txt"}, {"new_string", "b"}});
  EXPECT_EQ(r["success"], false);
  EXPECT_NE(r["error"].get<std::string>().find("old_string is required"), std::string::npos);

  r = Replace("../outside.txt", "a", "b");
  EXPECT_EQ(r["success"], false);
  EXPECT_FALSE(fs::exists(base_ + "/outside.txt"));

  ToolContext bare;
  ToolResult res = dispatcher_.Dispatch(
      "patch", R"({"mode":"replace","path":"a","old_string":"a","new_string":"b"})", bare);
  EXPECT_FALSE(res.ok());
  EXPECT_EQ(Json::parse(res.text)["error"], "no workspace is attached to this session");
}

TEST_F(PatchTool, ReplaceIsAudited) {
  Write("a.txt", "one\n");
  Json r = Replace("a.txt", "one", "two");
  ASSERT_EQ(r.value("success", false), true) << r.dump();
  auto lines = AuditLines();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0]["tool"], "patch");
  EXPECT_EQ(lines[0]["session"], "s1");
  EXPECT_EQ(lines[0]["path"], root_ + "/a.txt");
  EXPECT_EQ(lines[0]["outcome"], "ok");
  EXPECT_FALSE(lines[0]["sha256_before"].is_null());
  EXPECT_NE(lines[0]["sha256_before"], lines[0]["sha256_after"]);
}

TEST_F(PatchTool, V4aAppliesAMultiFilePatch) {
  Write("src/main.py", "def greet():\n    print(\"hello\")\n");
  Write("old.txt", "bye\n");
  Write("mv/a.txt", "moving\n");
  Json r = Patch(
      "*** Begin Patch\n"
      "*** Update File: src/main.py\n"
      "@@ def greet @@\n"
      " def greet():\n"
      "-    print(\"hello\")\n"
      "+    print(\"hi\")\n"
      "*** Add File: docs/new.md\n"
      "+# New\n"
      "*** Delete File: old.txt\n"
      "*** Move File: mv/a.txt -> mv/b.txt\n"
      "*** End Patch\n");
  ASSERT_EQ(r.value("success", false), true) << r.dump();
  EXPECT_EQ(Read("src/main.py"), "def greet():\n    print(\"hi\")\n");
  EXPECT_EQ(Read("docs/new.md"), "# New\n");
  EXPECT_FALSE(Exists("old.txt"));
  EXPECT_FALSE(Exists("mv/a.txt"));
  EXPECT_EQ(Read("mv/b.txt"), "moving\n");
  EXPECT_EQ(r["files_modified"],
            Json::array({root_ + "/src/main.py", root_ + "/mv/a.txt -> " + root_ + "/mv/b.txt"}));
  EXPECT_EQ(r["files_created"], Json::array({root_ + "/docs/new.md"}));
  EXPECT_EQ(r["files_deleted"], Json::array({root_ + "/old.txt"}));
  EXPECT_FALSE(r.contains("resolved_path"));
  EXPECT_EQ(r["match"]["strategy"], "exact");
  const std::string diff = r["diff"];
  EXPECT_NE(diff.find("--- a/src/main.py\n+++ b/src/main.py\n"), std::string::npos) << diff;
  EXPECT_NE(diff.find("--- /dev/null\n+++ b/docs/new.md\n"), std::string::npos) << diff;
  EXPECT_NE(diff.find("--- a/old.txt\n+++ /dev/null\n"), std::string::npos) << diff;
  EXPECT_NE(diff.find("# Moved: mv/a.txt -> mv/b.txt"), std::string::npos) << diff;
  // One audit record per mutation (the move writes one for each end).
  EXPECT_EQ(AuditLines().size(), 5u);
}

TEST_F(PatchTool, V4aValidationFailureModifiesNothing) {
  Write("a.txt", "alpha\n");
  Write("b.txt", "beta\n");
  auto before = Snapshot();
  Json r = Patch(
      "*** Begin Patch\n"
      "*** Update File: a.txt\n-alpha\n+ALPHA\n"
      "*** Add File: c.txt\n+new\n"
      "*** Update File: b.txt\n-gamma\n+GAMMA\n"
      "*** Delete File: ghost.txt\n"
      "*** End Patch\n");
  EXPECT_EQ(r["success"], false);
  const std::string error = r["error"];
  EXPECT_EQ(error.rfind("Patch validation failed (no files were modified):\n", 0), 0u) << error;
  EXPECT_NE(error.find("b.txt: hunk 1"), std::string::npos) << error;
  EXPECT_NE(error.find("ghost.txt: file not found for deletion"), std::string::npos) << error;
  EXPECT_EQ(Snapshot(), before);
  EXPECT_TRUE(AuditLines().empty());
}

TEST_F(PatchTool, V4aRejectsTraversalAndPathsOutsideTheWorkspace) {
  Json r = Patch("*** Begin Patch\n*** Add File: ../escape.txt\n+x\n*** End Patch\n");
  EXPECT_EQ(r["success"], false);
  EXPECT_NE(r["error"].get<std::string>().find("'..'"), std::string::npos);
  EXPECT_FALSE(fs::exists(base_ + "/escape.txt"));

  r = Patch("*** Begin Patch\n*** Add File: " + base_ + "/escape.txt\n+x\n*** End Patch\n");
  EXPECT_EQ(r["success"], false);
  EXPECT_EQ(r["error"].get<std::string>().rfind("Patch validation failed", 0), 0u) << r.dump();
  EXPECT_FALSE(fs::exists(base_ + "/escape.txt"));

  // A symlinked directory pointing outside.
  fs::create_directories(base_ + "/outside");
  fs::create_directory_symlink(base_ + "/outside", root_ + "/link");
  r = Patch("*** Begin Patch\n*** Add File: link/evil.txt\n+x\n*** End Patch\n");
  EXPECT_EQ(r["success"], false) << r.dump();
  EXPECT_FALSE(fs::exists(base_ + "/outside/evil.txt"));
}

TEST_F(PatchTool, V4aAlreadyAppliedPatchIsANoOp) {
  Write("f.txt", "value = compute_total(items)\n");
  Json r = Patch(
      "*** Begin Patch\n*** Update File: f.txt\n-value = compute(items)\n"
      "+value = compute_total(items)\n*** End Patch\n");
  EXPECT_EQ(r["success"], true) << r.dump();
  EXPECT_EQ(r["no_change"], true);
  EXPECT_NE(r["note"].get<std::string>().find("do not re-send this patch"), std::string::npos);
}

TEST_F(PatchTool, V4aReportsTheWeakestHunkMatchAndLintPerFile) {
  Write("m.c", "int main() {\n  int count = 0;\n  count += step(1);\n  return count;\n}\n");
  Write("cfg.json", "{\"a\": 1}\n");
  Json r = Patch(
      "*** Begin Patch\n"
      "*** Update File: m.c\n"
      " int main(void) {\n"
      "   int count = 0;\n"
      "-  count += step(1);\n"
      "+  count += step(2);\n"
      "   return count;\n"
      "*** Update File: cfg.json\n"
      "-{\"a\": 1}\n"
      "+{\"a\": 2}\n"
      "*** End Patch\n");
  ASSERT_EQ(r.value("success", false), true) << r.dump();
  EXPECT_EQ(r["match"]["strategy"], "context_aware");
  EXPECT_GE(r["match"]["similarity"].get<double>(), 0.9);
  ASSERT_EQ(r["hunks"].size(), 2u);
  EXPECT_EQ(r["hunks"][1]["strategy"], "exact");
  ASSERT_TRUE(r.contains("lint"));
  EXPECT_EQ(r["lint"][root_ + "/cfg.json"]["status"], "ok");
  EXPECT_EQ(Read("cfg.json"), "{\"a\": 2}\n");
}

TEST_F(PatchTool, V4aRollsBackWhenAWriteFailsMidway) {
  Write("a.txt", "alpha\n");
  Write("gone.txt", "to be deleted\n");
  const auto before = Snapshot();
  // The third step writes more than the file-size limit allows, after the first two landed:
  // the update and the delete must be undone.
  std::string patch =
      "*** Begin Patch\n*** Update File: a.txt\n-alpha\n+ALPHA\n*** Delete File: gone.txt\n"
      "*** Add File: big.txt\n";
  const std::string line = "+" + std::string(1023, 'x') + "\n";
  for (int i = 0; i < 256; ++i) patch += line;
  patch += "*** End Patch\n";

  struct rlimit old_limit {};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old_limit), 0);
  auto old_handler = ::signal(SIGXFSZ, SIG_IGN);
  struct rlimit small = old_limit;
  small.rlim_cur = 64 * 1024;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  Json r = Patch(patch);
  ::setrlimit(RLIMIT_FSIZE, &old_limit);
  ::signal(SIGXFSZ, old_handler);

  EXPECT_EQ(r["success"], false) << r.dump();
  const std::string error = r["error"];
  EXPECT_NE(error.find("Applying the patch failed at big.txt"), std::string::npos) << error;
  EXPECT_NE(error.find("2 change(s) made before the failure were rolled back"), std::string::npos)
      << error;
  EXPECT_EQ(Snapshot(), before);
}

TEST_F(PatchTool, UnknownModeAndMissingPatchAreErrors) {
  Json r = Call({{"mode", "patch"}});
  EXPECT_EQ(r["success"], false);
  EXPECT_NE(r["error"].get<std::string>().find("patch is required"), std::string::npos);
  ToolResult bad = dispatcher_.Dispatch("patch", R"({"mode":"rewrite"})", ctx_);
  EXPECT_FALSE(bad.ok());
}

TEST_F(PatchTool, RepeatedMissesOnOnePathEscalateTheHintUntilASuccess) {
  Write("a.py", "x = 1\n");
  Write("b.py", "y = 2\n");
  for (int attempt = 1; attempt <= 2; ++attempt) {
    Json r = Replace("a.py", "z = 3", "z = 4");
    ASSERT_EQ(r["success"], false);
    EXPECT_EQ(r["error"].get<std::string>().rfind("Could not find a match for old_string", 0), 0u)
        << r.dump();
    EXPECT_EQ(r["_hint"].get<std::string>().find("failure #"), std::string::npos) << attempt;
  }
  // Another path has its own count.
  EXPECT_EQ(Replace("b.py", "nope", "x")["_hint"].get<std::string>().find("failure #"),
            std::string::npos);
  Json third = Replace("a.py", "z = 3", "z = 4");
  EXPECT_NE(third["_hint"].get<std::string>().find("failure #3 in a row"), std::string::npos)
      << third.dump();
  EXPECT_NE(third["_hint"].get<std::string>().find("write_file"), std::string::npos);
  // A success on the path resets the streak.
  ASSERT_EQ(Replace("a.py", "x = 1", "x = 2")["success"], true);
  EXPECT_EQ(Replace("a.py", "z = 3", "z = 4")["_hint"].get<std::string>().find("failure #"),
            std::string::npos);
}

}  // namespace
}  // namespace talaria::tools
