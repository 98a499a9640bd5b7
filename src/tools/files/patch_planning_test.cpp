// How the batch planner scopes patch calls: in mode "patch" by the files the V4A text names (read
// by the tool's own parser through ToolSpec::call_paths), otherwise by `path`. The planner and
// read_file are the real ones from the global registry.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/temp_dir.h"
#include "talaria/core/batch_planner.h"
#include "talaria/core/registry.h"

namespace talaria::tools {
namespace {

using talaria::test_support::TempDir;

struct Call {
  std::string name;
  std::string args;
};

Call Read(std::string path) { return {"read_file", Json{{"path", std::move(path)}}.dump()}; }
Call PatchText(std::string v4a) {
  return {"patch", Json{{"mode", "patch"}, {"patch", std::move(v4a)}}.dump()};
}

// Segments as text: "P0,1 S2" (P = parallel, S = sequential).
std::string Describe(const std::vector<PlannedSegment>& segments) {
  std::string out;
  for (const PlannedSegment& s : segments) {
    if (!out.empty()) out += ' ';
    out += s.parallel ? 'P' : 'S';
    for (size_t k = 0; k < s.calls.size(); ++k)
      out += (k > 0 ? "," : "") + std::to_string(s.calls[k]);
  }
  return out;
}

BatchPlan Plan(const std::string& cwd, const std::vector<Call>& calls) {
  std::vector<PlannedCall> planned;
  for (const Call& c : calls) planned.push_back(PlannedCall{c.name, c.args, cwd});
  return PlanBatchDetailed(planned, Registry::Global());
}

Result<std::optional<std::vector<std::string>>> PathsOf(const Json& args) {
  auto entry = Registry::Global().GetEntry("patch");
  EXPECT_NE(entry, nullptr);
  EXPECT_NE(entry->call_paths(), nullptr);
  return entry->call_paths()(args);
}

TEST(PatchPlanning, NamesEveryFileOfAV4aPatchIncludingBothEndsOfAMove) {
  const struct {
    std::string_view patch;
    std::vector<std::string> want;
  } kCases[] = {
      {"*** Begin Patch\n*** Update File: src/a.py\n@@ def f @@\n-x\n+y\n*** End Patch\n",
       {"src/a.py"}},
      {"*** Begin Patch\n*** Add File: new.md\n+hello\n*** End Patch", {"new.md"}},
      {"*** Begin Patch\n*** Delete File: old.txt\n*** End Patch\n", {"old.txt"}},
      {"*** Begin Patch\n*** Move File: from/a.txt -> to/b.txt\n*** End Patch\n",
       {"from/a.txt", "to/b.txt"}},
      {"*** Begin Patch\n"
       "*** Update File: one.c\n-a\n+b\n*** End of File\n"
       "*** Add File: two.c\n+x\n"
       "*** Delete File: three.c\n"
       "*** Move File: four.c -> five.c\n"
       "*** End Patch\n",
       {"one.c", "two.c", "three.c", "four.c", "five.c"}},
      {"*** Begin Patch\r\n*** Update File: spaced name.txt\r\n-a\r\n+b\r\n*** End Patch\r\n",
       {"spaced name.txt"}},
      {"*** Update File: bare.txt\n-a\n+b\n", {"bare.txt"}},
      // Hunk lines are never headers: a header starts with "***" in column 0.
      {"*** Update File: a\n-*** Delete File: not-a-header\n+ *** Add File: nor-this\n", {"a"}},
  };
  for (const auto& c : kCases) {
    auto got = PathsOf({{"mode", "patch"}, {"patch", c.patch}});
    ASSERT_TRUE(got.has_value()) << c.patch << "\n" << got.error().message();
    ASSERT_TRUE(got->has_value()) << c.patch;
    EXPECT_EQ(**got, c.want) << c.patch;
  }
}

TEST(PatchPlanning, LeavesReplaceModeToPathAndRefusesWhatItCannotRead) {
  for (const Json& args : {Json{{"path", "a"}}, Json{{"mode", "replace"}, {"path", "a"}}}) {
    auto got = PathsOf(args);
    ASSERT_TRUE(got.has_value()) << args;
    EXPECT_FALSE(got->has_value()) << "path names the file: " << args;
  }
  const std::string_view kBad[] = {
      "",
      "just some text\n",
      "*** Begin Patch\n*** End Patch\n",                              // no file operation
      "*** Begin Patch\n*** Update File: a.txt\n-x\n+y\n",             // Begin without End
      "*** Begin Patch\n*** Frobnicate File: a.txt\n*** End Patch\n",  // unknown header
      "*** Begin Patch\n*** Update File:   \n*** End Patch\n",         // empty path
      "*** Begin Patch\n*** Move File: a.txt\n*** End Patch\n",        // no arrow
      "*** Begin Patch\n*** Move to: b.txt\n*** End Patch\n",          // refused spelling
  };
  for (std::string_view patch : kBad) {
    EXPECT_FALSE(PathsOf({{"mode", "patch"}, {"patch", patch}}).has_value()) << patch;
  }
  EXPECT_FALSE(PathsOf({{"mode", 1}, {"path", "x"}}).has_value()) << "a mode that is not a string";
  EXPECT_FALSE(PathsOf({{"mode", "patch"}, {"path", "x"}}).has_value()) << "no patch text";
}

TEST(PatchPlanning, ScopesPatchCallsFromTheirModeAndV4aHeaders) {
  TempDir t;
  std::ofstream(t / "a.txt") << "x\n";
  const std::string patch_mode_with_path =
      Json{{"mode", "patch"},
           {"path", "a.txt"},
           {"patch", "*** Begin Patch\n*** Delete File: q\n*** End Patch"}}
          .dump();
  const struct {
    std::string_view what;
    std::vector<Call> calls;
    std::string_view want;
  } kCases[] = {
      {"replace mode uses `path`",
       {Read("a.txt"), {"patch", R"({"mode":"replace","path":"a.txt"})"}},
       "S0,1"},
      {"mode defaults to replace",
       {Read("a.txt"), {"patch", R"({"path":"a.txt","old_string":"x"})"}},
       "S0,1"},
      {"replace mode on another file", {Read("a.txt"), {"patch", R"({"path":"b"})"}}, "P0,1"},
      {"update header",
       {Read("a.txt"),
        PatchText("*** Begin Patch\n*** Update File: a.txt\n-x\n+y\n*** End Patch\n")},
       "S0,1"},
      {"add header",
       {Read("new/n.txt"),
        PatchText("*** Begin Patch\n*** Add File: new/n.txt\n+y\n*** End Patch\n")},
       "S0,1"},
      {"delete header",
       {PatchText("*** Begin Patch\n*** Delete File: a.txt\n*** End Patch\n"), Read("a.txt")},
       "S0,1"},
      {"move source",
       {Read("a.txt"),
        PatchText("*** Begin Patch\n*** Move File: a.txt -> b.txt\n*** End Patch\n")},
       "S0,1"},
      {"move destination",
       {Read("b.txt"),
        PatchText("*** Begin Patch\n*** Move File: a.txt -> b.txt\n*** End Patch\n")},
       "S0,1"},
      {"a patch of other files runs beside reads",
       {Read("z.txt"),
        PatchText("*** Begin Patch\n*** Update File: a.txt\n-x\n+y\n"
                  "*** Move File: m -> n\n*** End Patch\n"),
        Read("y.txt")},
       "P0,1,2"},
      {"in patch mode `path` is not a scope",
       {Read("a.txt"), {"patch", patch_mode_with_path}},
       "P0,1"},
      {"two patches of different files",
       {PatchText("*** Delete File: p\n"), PatchText("*** Delete File: q\n")},
       "P0,1"},
      {"two patches of the same file",
       {PatchText("*** Delete File: p\n"), PatchText("*** Add File: p\n+x\n")},
       "S0,1"},
      {"an unreadable patch runs alone",
       {Read("a"), PatchText("*** Begin Patch\n*** Update File: x\n-a\n+b\n"), Read("b")},
       "S0,1,2"},
  };
  for (const auto& c : kCases) {
    EXPECT_EQ(Describe(Plan(t.path(), c.calls).segments), c.want) << c.what;
  }
  const BatchPlan plan = Plan(t.path(), {PatchText("*** Move File: m -> n\n")});
  ASSERT_EQ(plan.calls.size(), 1u);
  ASSERT_EQ(plan.calls[0].scopes.size(), 2u);
  EXPECT_EQ(plan.calls[0].scopes[0].path, t.path() + "/m");
  EXPECT_EQ(plan.calls[0].scopes[1].path, t.path() + "/n");
  EXPECT_EQ(plan.calls[0].scopes[1].access, PathAccess::kWrite);
}

}  // namespace
}  // namespace talaria::tools
