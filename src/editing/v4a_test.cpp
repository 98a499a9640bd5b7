#include "talaria/editing/v4a.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

namespace talaria::editing {
namespace {

using Files = std::map<std::string, std::string>;

V4aReader ReaderOf(const Files& files, std::vector<std::string>* denied = nullptr) {
  return [&files, denied](const std::string& path) -> Result<std::optional<std::string>> {
    if (denied != nullptr && std::find(denied->begin(), denied->end(), path) != denied->end()) {
      return Err(PermissionDeniedError("permission denied"));
    }
    auto it = files.find(path);
    if (it == files.end()) return std::optional<std::string>();
    return std::optional<std::string>(it->second);
  };
}

Result<V4aPlan> PlanText(std::string_view patch, const Files& files) {
  auto ops = ParseV4aPatch(patch);
  if (!ops) return Err(ops.error());
  return PlanV4aPatch(*ops, ReaderOf(files));
}

// The content each path ends up with after the plan's steps.
Files Apply(const V4aPlan& plan, Files files) {
  for (const V4aStep& s : plan.steps) {
    switch (s.kind) {
      case V4aOpKind::kUpdate:
      case V4aOpKind::kAdd:
        files[s.path] = *s.after;
        break;
      case V4aOpKind::kDelete:
        files.erase(s.path);
        break;
      case V4aOpKind::kMove:
        files[s.new_path] = files[s.path];
        files.erase(s.path);
        break;
    }
  }
  return files;
}

// --- parsing ---------------------------------------------------------------------------------

TEST(ParseV4aPatch, ReadsEveryHeaderKind) {
  auto ops = ParseV4aPatch(
      "*** Begin Patch\n"
      "*** Update File: src/main.py\n"
      "@@ def greet @@\n"
      " def greet():\n"
      "-    print(\"hello\")\n"
      "+    print(\"hi\")\n"
      "@@ def tail\n"
      " last()\n"
      "+after()\n"
      "*** End of File\n"
      "*** Add File: docs/new.md\n"
      "+# Title\n"
      "+\n"
      "+body\n"
      "*** Delete File: old.txt\n"
      "*** Move File: a/b.txt -> c/d.txt\n"
      "*** End Patch\n");
  ASSERT_TRUE(ops) << ops.error().message();
  ASSERT_EQ(ops->size(), 4u);
  const V4aOperation& up = (*ops)[0];
  EXPECT_EQ(up.kind, V4aOpKind::kUpdate);
  EXPECT_EQ(up.path, "src/main.py");
  ASSERT_EQ(up.hunks.size(), 2u);
  EXPECT_EQ(up.hunks[0].context_hint, "def greet");
  ASSERT_EQ(up.hunks[0].lines.size(), 3u);
  EXPECT_EQ(up.hunks[0].lines[0].prefix, ' ');
  EXPECT_EQ(up.hunks[0].lines[0].text, "def greet():");
  EXPECT_EQ(up.hunks[0].lines[1].prefix, '-');
  EXPECT_EQ(up.hunks[0].lines[2].text, "    print(\"hi\")");
  EXPECT_FALSE(up.hunks[0].end_of_file);
  EXPECT_EQ(up.hunks[1].context_hint, "def tail");
  EXPECT_TRUE(up.hunks[1].end_of_file);

  const V4aOperation& add = (*ops)[1];
  EXPECT_EQ(add.kind, V4aOpKind::kAdd);
  EXPECT_EQ(add.path, "docs/new.md");
  ASSERT_EQ(add.hunks.size(), 1u);
  EXPECT_EQ(add.hunks[0].lines.size(), 3u);

  EXPECT_EQ((*ops)[2].kind, V4aOpKind::kDelete);
  EXPECT_EQ((*ops)[2].path, "old.txt");
  EXPECT_EQ((*ops)[3].kind, V4aOpKind::kMove);
  EXPECT_EQ((*ops)[3].path, "a/b.txt");
  EXPECT_EQ((*ops)[3].new_path, "c/d.txt");
}

TEST(ParseV4aPatch, AcceptsMissingMarkersCrlfAndLooseSpacing) {
  auto ops = ParseV4aPatch("***  Update   File:  x.txt\r\n-a\r\n+b\r\n");
  ASSERT_TRUE(ops) << ops.error().message();
  ASSERT_EQ(ops->size(), 1u);
  EXPECT_EQ((*ops)[0].path, "x.txt");
  EXPECT_EQ((*ops)[0].hunks[0].lines[1].text, "b");
}

TEST(ParseV4aPatch, BlankLinesInsideAHunkAreContextButTrailingOnesAreSeparators) {
  auto ops = ParseV4aPatch(
      "*** Begin Patch\n*** Update File: f\n a\n\n-b\n+c\n\n\n*** Update File: g\n-x\n+y\n"
      "*** End Patch");
  ASSERT_TRUE(ops) << ops.error().message();
  const auto& lines = (*ops)[0].hunks[0].lines;
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[1].prefix, ' ');
  EXPECT_EQ(lines[1].text, "");
  EXPECT_EQ(lines[3].text, "c");
}

TEST(ParseV4aPatch, RefusesATruncatedPatch) {
  auto ops = ParseV4aPatch("*** Begin Patch\n*** Update File: f\n-a\n+b\n");
  ASSERT_FALSE(ops);
  EXPECT_EQ(ops.error().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(ops.error().message().find("End Patch"), std::string::npos);
}

TEST(ParseV4aPatch, RejectsMoveToWithGuidance) {
  auto ops = ParseV4aPatch(
      "*** Begin Patch\n*** Update File: a.py\n*** Move to: b.py\n-x\n+y\n*** End Patch\n");
  ASSERT_FALSE(ops);
  EXPECT_NE(ops.error().message().find("'*** Move File: a.py -> b.py'"), std::string::npos)
      << ops.error().message();
}

TEST(ParseV4aPatch, RejectsTraversalInEveryHeader) {
  for (const char* patch : {
           "*** Begin Patch\n*** Update File: ../etc/passwd\n-a\n+b\n*** End Patch",
           "*** Begin Patch\n*** Add File: a/../../b\n+x\n*** End Patch",
           "*** Begin Patch\n*** Delete File: ..\n*** End Patch",
           "*** Begin Patch\n*** Move File: ok.txt -> x/../../../tmp/y\n*** End Patch",
       }) {
    auto ops = ParseV4aPatch(patch);
    ASSERT_FALSE(ops) << patch;
    EXPECT_NE(ops.error().message().find("'..'"), std::string::npos) << ops.error().message();
  }
  // A name merely containing dots is fine.
  EXPECT_TRUE(ParseV4aPatch("*** Begin Patch\n*** Delete File: a..b/..c\n*** End Patch"));
}

TEST(ParseV4aPatch, ListsEveryMalformation) {
  auto ops = ParseV4aPatch(
      "*** Begin Patch\n"
      "*** Update File: empty.txt\n"
      "*** Add File: new.txt\n"
      "no plus sign\n"
      "*** Rename File: x\n"
      "*** Move File: nowhere\n"
      "*** Update File: \n"
      "-a\n+b\n"
      "*** End Patch\n");
  ASSERT_FALSE(ops);
  const std::string& msg = ops.error().message();
  EXPECT_EQ(msg.rfind("Parse error:", 0), 0u) << msg;
  EXPECT_NE(msg.find("empty.txt: no hunks found"), std::string::npos) << msg;
  EXPECT_NE(msg.find("must start with '+'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("unrecognized header '*** Rename File: x'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'source -> destination'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("empty file path"), std::string::npos) << msg;
}

TEST(ParseV4aPatch, EmptyPatchIsAnError) {
  EXPECT_FALSE(ParseV4aPatch("*** Begin Patch\n*** End Patch\n"));
  EXPECT_FALSE(ParseV4aPatch(""));
}

TEST(ParseV4aPatch, ContentOnlyInDeleteIsAnError) {
  auto ops = ParseV4aPatch("*** Begin Patch\n*** Delete File: a\n-line\n*** End Patch");
  ASSERT_FALSE(ops);
  EXPECT_NE(ops.error().message().find("takes no content"), std::string::npos);
}

// --- planning --------------------------------------------------------------------------------

TEST(PlanV4aPatch, UpdatesAFileAndProducesItsDiff) {
  Files files = {{"src/main.py", "def greet():\n    print(\"hello\")\n\ngreet()\n"}};
  auto plan = PlanText(
      "*** Begin Patch\n*** Update File: src/main.py\n@@ def greet @@\n def greet():\n"
      "-    print(\"hello\")\n+    print(\"hi\")\n*** End Patch",
      files);
  ASSERT_TRUE(plan) << plan.error().message();
  ASSERT_EQ(plan->steps.size(), 1u);
  EXPECT_EQ(Apply(*plan, files)["src/main.py"], "def greet():\n    print(\"hi\")\n\ngreet()\n");
  EXPECT_EQ(plan->files_modified, std::vector<std::string>{"src/main.py"});
  EXPECT_TRUE(plan->files_created.empty());
  EXPECT_NE(plan->diff.find("--- a/src/main.py\n+++ b/src/main.py\n"), std::string::npos);
  EXPECT_NE(plan->diff.find("-    print(\"hello\")\n+    print(\"hi\")\n"), std::string::npos);
  EXPECT_EQ(plan->strategy, MatchStrategy::kExact);
  EXPECT_EQ(plan->similarity, 1.0);
  ASSERT_EQ(plan->hunks.size(), 1u);
  EXPECT_EQ(plan->hunks[0].strategy, MatchStrategy::kExact);
}

TEST(PlanV4aPatch, LaterHunksSeeEarlierOnes) {
  Files files = {{"f", "a\nb\nc\n"}};
  auto plan =
      PlanText("*** Begin Patch\n*** Update File: f\n-a\n+A\n@@\n-A\n+AA\n*** End Patch", files);
  ASSERT_TRUE(plan) << plan.error().message();
  EXPECT_EQ(Apply(*plan, files)["f"], "AA\nb\nc\n");
}

TEST(PlanV4aPatch, ValidationIsAllOrNothingAndListsEveryProblem) {
  Files files = {{"a.txt", "alpha\n"}, {"b.txt", "beta\n"}, {"exists.txt", "x\n"}};
  auto plan = PlanText(
      "*** Begin Patch\n"
      "*** Update File: a.txt\n-alpha\n+ALPHA\n"  // fine on its own
      "*** Update File: b.txt\n-gamma\n+GAMMA\n"  // hunk not found
      "*** Update File: missing.txt\n-x\n+y\n"    // no such file
      "*** Add File: exists.txt\n+new\n"          // Add over an existing file
      "*** Delete File: ghost.txt\n"              // nothing to delete
      "*** Move File: a.txt -> b.txt\n"           // destination taken
      "*** End Patch",
      files);
  ASSERT_FALSE(plan);
  EXPECT_EQ(plan.error().code(), StatusCode::kFailedPrecondition);
  const std::string& msg = plan.error().message();
  EXPECT_EQ(msg.rfind("Patch validation failed (no files were modified):\n  \xE2\x80\xA2 ", 0), 0u)
      << msg;
  EXPECT_NE(msg.find("b.txt: hunk 1: Could not find a match"), std::string::npos) << msg;
  EXPECT_NE(msg.find("missing.txt: file not found"), std::string::npos) << msg;
  EXPECT_NE(msg.find("exists.txt: file already exists"), std::string::npos) << msg;
  EXPECT_NE(msg.find("ghost.txt: file not found for deletion"), std::string::npos) << msg;
  EXPECT_NE(msg.find("b.txt: destination already exists"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("a.txt: hunk"), std::string::npos) << msg;
}

TEST(PlanV4aPatch, AddCreatesWithATrailingNewline) {
  Files files;
  auto plan = PlanText("*** Begin Patch\n*** Add File: n.md\n+# T\n+\n+body\n*** End Patch", files);
  ASSERT_TRUE(plan) << plan.error().message();
  EXPECT_EQ(Apply(*plan, files)["n.md"], "# T\n\nbody\n");
  EXPECT_EQ(plan->files_created, std::vector<std::string>{"n.md"});
  EXPECT_NE(plan->diff.find("--- /dev/null\n+++ b/n.md\n@@ -0,0 +1,3 @@\n"), std::string::npos)
      << plan->diff;
}

TEST(PlanV4aPatch, OverlayCarriesStateBetweenOperations) {
  Files files = {{"a.txt", "one\n"}, {"gone.txt", "old\n"}};
  auto plan = PlanText(
      "*** Begin Patch\n"
      "*** Move File: a.txt -> moved/a.txt\n"
      "*** Update File: moved/a.txt\n-one\n+two\n"
      "*** Delete File: gone.txt\n"
      "*** Add File: gone.txt\n+fresh\n"
      "*** Add File: a.txt\n+reborn\n"
      "*** End Patch",
      files);
  ASSERT_TRUE(plan) << plan.error().message();
  Files after = Apply(*plan, files);
  EXPECT_EQ(after["moved/a.txt"], "two\n");
  EXPECT_EQ(after["gone.txt"], "fresh\n");
  EXPECT_EQ(after["a.txt"], "reborn\n");
  EXPECT_EQ(plan->files_deleted, std::vector<std::string>{"gone.txt"});
  EXPECT_EQ(plan->files_created, (std::vector<std::string>{"gone.txt", "a.txt"}));
  EXPECT_EQ(plan->files_modified,
            (std::vector<std::string>{"a.txt -> moved/a.txt", "moved/a.txt"}));
  EXPECT_NE(plan->diff.find("# Moved: a.txt -> moved/a.txt\n"), std::string::npos);
}

TEST(PlanV4aPatch, MoveNeedsASourceAndAFreeDestination) {
  Files files = {{"a", "1\n"}, {"b", "2\n"}};
  auto plan = PlanText("*** Begin Patch\n*** Move File: nope -> c\n*** End Patch", files);
  ASSERT_FALSE(plan);
  EXPECT_NE(plan.error().message().find("nope: source file not found for move"), std::string::npos);
  plan = PlanText("*** Begin Patch\n*** Move File: a -> b\n*** End Patch", files);
  ASSERT_FALSE(plan);
  EXPECT_NE(plan.error().message().find("b: destination already exists"), std::string::npos);
  // A destination freed earlier in the same patch is free.
  plan =
      PlanText("*** Begin Patch\n*** Delete File: b\n*** Move File: a -> b\n*** End Patch", files);
  ASSERT_TRUE(plan) << plan.error().message();
  EXPECT_EQ(Apply(*plan, files), (Files{{"b", "1\n"}}));
}

TEST(PlanV4aPatch, UnreadablePathsAreProblemsNotFreeSpace) {
  Files files;
  std::vector<std::string> denied = {"locked.txt"};
  auto ops = ParseV4aPatch("*** Begin Patch\n*** Add File: locked.txt\n+x\n*** End Patch");
  ASSERT_TRUE(ops);
  auto plan = PlanV4aPatch(*ops, ReaderOf(files, &denied));
  ASSERT_FALSE(plan);
  EXPECT_NE(plan.error().message().find("locked.txt: could not confirm the path is free"),
            std::string::npos)
      << plan.error().message();
}

TEST(PlanV4aPatch, AdditionOnlyHunksNeedAUniqueHintOrEndOfFile) {
  Files files = {{"f.py", "import os\n\ndef a():\n    pass\n\ndef b():\n    pass\n"}};
  auto plan = PlanText("*** Begin Patch\n*** Update File: f.py\n+import sys\n*** End Patch", files);
  ASSERT_FALSE(plan);
  EXPECT_NE(plan.error().message().find("gives no place"), std::string::npos);

  plan = PlanText("*** Begin Patch\n*** Update File: f.py\n@@ pass @@\n+    x = 1\n*** End Patch",
                  files);
  ASSERT_FALSE(plan);
  EXPECT_NE(plan.error().message().find("occurs 2 times"), std::string::npos)
      << plan.error().message();

  plan =
      PlanText("*** Begin Patch\n*** Update File: f.py\n@@ nowhere @@\n+x\n*** End Patch", files);
  ASSERT_FALSE(plan);
  EXPECT_NE(plan.error().message().find("is not in the file"), std::string::npos);

  plan = PlanText(
      "*** Begin Patch\n*** Update File: f.py\n@@ import os @@\n+import sys\n*** End Patch", files);
  ASSERT_TRUE(plan) << plan.error().message();
  EXPECT_EQ(Apply(*plan, files)["f.py"],
            "import os\nimport sys\n\ndef a():\n    pass\n\ndef b():\n    pass\n");

  plan = PlanText(
      "*** Begin Patch\n*** Update File: f.py\n+\n+def c():\n+    pass\n*** End of File\n"
      "*** End Patch",
      files);
  ASSERT_TRUE(plan) << plan.error().message();
  EXPECT_EQ(Apply(*plan, files)["f.py"],
            "import os\n\ndef a():\n    pass\n\ndef b():\n    pass\n\ndef c():\n    pass\n");
}

TEST(PlanV4aPatch, SeveralMatchesArePickedOnlyByAUniqueHint) {
  Files files = {{"f.py", "def a():\n    return 0\n\ndef b():\n    return 0\n"}};
  auto plan = PlanText(
      "*** Begin Patch\n*** Update File: f.py\n-    return 0\n+    return 1\n*** End Patch", files);
  ASSERT_FALSE(plan);
  EXPECT_NE(plan.error().message().find("matches 2 places"), std::string::npos);
  EXPECT_NE(plan.error().message().find("L2:"), std::string::npos);
  EXPECT_NE(plan.error().message().find("L5:"), std::string::npos);

  plan = PlanText(
      "*** Begin Patch\n*** Update File: f.py\n@@ def b @@\n-    return 0\n+    return 1\n"
      "*** End Patch",
      files);
  ASSERT_TRUE(plan) << plan.error().message();
  EXPECT_EQ(Apply(*plan, files)["f.py"], "def a():\n    return 0\n\ndef b():\n    return 1\n");
}

// Regression for the original's V4A bug (reference §5 item 10): a hunk whose context only
// resembles a nearby region must not be bound to it and rewrite it silently.
TEST(PlanV4aPatch, RefusesAWeakApproximateHunkInsteadOfRewritingANearbyRegion) {
  Files files = {{"cfg.py",
                  "def load_config(path):\n"
                  "    data = read(path)\n"
                  "    return parse(data)\n"
                  "\n"
                  "def save_config(path, cfg):\n"
                  "    text = dump(cfg)\n"
                  "    write(path, text)\n"}};
  auto plan = PlanText(
      "*** Begin Patch\n*** Update File: cfg.py\n"
      " def load_config(path):\n"
      "-    contents = fetch_remote(path, retries=3)\n"
      "-    return decode(contents)\n"
      "+    return {}\n"
      "*** End Patch",
      files);
  ASSERT_FALSE(plan);
  EXPECT_EQ(plan.error().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(plan.error().message().find("Patch validation failed"), std::string::npos);
}

TEST(PlanV4aPatch, AnApproximateHunkAboveTheThresholdNamesItsMatcher) {
  Files files = {
      {"m.c", "int main() {\n  int count = 0;\n  count += step(1);\n  return count;\n}\n"}};
  auto plan = PlanText(
      "*** Begin Patch\n*** Update File: m.c\n"
      " int main(void) {\n"
      "   int count = 0;\n"
      "-  count += step(1);\n"
      "+  count += step(2);\n"
      "   return count;\n"
      "*** End Patch",
      files);
  ASSERT_TRUE(plan) << plan.error().message();
  EXPECT_EQ(plan->strategy, MatchStrategy::kContextAware);
  EXPECT_GE(plan->similarity, kMinApplySimilarity);
  EXPECT_LT(plan->similarity, 1.0);
  // The untouched anchor lines keep the file's text.
  EXPECT_EQ(Apply(*plan, files)["m.c"],
            "int main() {\n  int count = 0;\n  count += step(2);\n  return count;\n}\n");
}

TEST(PlanV4aPatch, EndOfFileHunksMustSitAtTheEnd) {
  Files files = {{"f", "x = 1\ny = 2\nx = 1\n"}};
  auto plan = PlanText(
      "*** Begin Patch\n*** Update File: f\n-x = 1\n+x = 3\n*** End of File\n"
      "*** End Patch",
      files);
  ASSERT_TRUE(plan) << plan.error().message();
  EXPECT_EQ(Apply(*plan, files)["f"], "x = 1\ny = 2\nx = 3\n");
  plan = PlanText(
      "*** Begin Patch\n*** Update File: f\n-y = 2\n+y = 3\n*** End of File\n"
      "*** End Patch",
      files);
  ASSERT_FALSE(plan);
  EXPECT_NE(plan.error().message().find("End of File"), std::string::npos);
}

TEST(PlanV4aPatch, AlreadyAppliedHunksAreSkipped) {
  Files files = {{"f", "value = compute_total(items)\nother\n"}};
  auto plan = PlanText(
      "*** Begin Patch\n*** Update File: f\n-value = compute(items)\n"
      "+value = compute_total(items)\n*** End Patch",
      files);
  ASSERT_TRUE(plan) << plan.error().message();
  EXPECT_TRUE(plan->steps.empty());
  ASSERT_EQ(plan->hunks.size(), 1u);
  EXPECT_TRUE(plan->hunks[0].already_applied);
  ASSERT_FALSE(plan->notes.empty());
  EXPECT_NE(plan->notes[0].find("already applied"), std::string::npos);
}

TEST(PlanV4aPatch, ContextOnlyPatchChangesNothingAndIsAnError) {
  Files files = {{"f", "a\nb\n"}};
  auto plan = PlanText("*** Begin Patch\n*** Update File: f\n a\n b\n*** End Patch", files);
  ASSERT_FALSE(plan);
  EXPECT_NE(plan.error().message().find("Patch contains no changes"), std::string::npos);
}

TEST(PlanV4aPatch, KeepsCrlfLineEndings) {
  Files files = {{"w.txt", "one\r\ntwo\r\nthree\r\n"}};
  auto plan = PlanText(
      "*** Begin Patch\n*** Update File: w.txt\n one\n-two\n+2\n+2b\n three\n@@ three @@\n+four\n"
      "*** End Patch",
      files);
  ASSERT_TRUE(plan) << plan.error().message();
  EXPECT_EQ(Apply(*plan, files)["w.txt"], "one\r\n2\r\n2b\r\nthree\r\nfour\r\n");
}

// Random patches assembled from V4A fragments never crash the parser or the planner, and a
// plan that succeeds only names files the patch names.
TEST(PlanV4aPatch, RandomPatchesNeverCrash) {
  const std::vector<std::string> fragments = {"*** Begin Patch\n",
                                              "*** End Patch\n",
                                              "*** Update File: a\n",
                                              "*** Update File: b\n",
                                              "*** Add File: c\n",
                                              "*** Delete File: a\n",
                                              "*** Move File: a -> d\n",
                                              "*** Move to: e\n",
                                              "*** End of File\n",
                                              "@@ one @@\n",
                                              "@@\n",
                                              " one\n",
                                              "-one\n",
                                              "+uno\n",
                                              "-two\n",
                                              "+dos\n",
                                              "\n",
                                              "two\n",
                                              "\\ No newline at end of file\n",
                                              "*** Unknown\n",
                                              "+\n",
                                              " \n"};
  Files files = {{"a", "one\ntwo\nthree\n"}, {"b", "one\r\ntwo\r\n"}};
  std::mt19937 rng(99);
  std::uniform_int_distribution<size_t> pick(0, fragments.size() - 1);
  for (int round = 0; round < 3000; ++round) {
    std::string patch;
    const int n = std::uniform_int_distribution<int>(0, 12)(rng);
    for (int i = 0; i < n; ++i) patch += fragments[pick(rng)];
    auto ops = ParseV4aPatch(patch);
    if (!ops) continue;
    auto plan = PlanV4aPatch(*ops, ReaderOf(files));
    if (!plan) continue;
    for (const V4aStep& step : plan->steps) {
      EXPECT_TRUE(step.path == "a" || step.path == "b" || step.path == "c" || step.path == "d")
          << step.path;
    }
  }
}

}  // namespace
}  // namespace talaria::editing
