// Batch planner and path scopes: admission, overlap, canonicalisation (through real symlinks in a
// temp dir), and the segment rules. Every test uses its own Registry.
#include "talaria/core/batch_planner.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/path_scope.h"
#include "core/test_tools.h"
#include "support/temp_dir.h"

namespace talaria {
namespace {

namespace fs = std::filesystem;

// A temp dir (support/temp_dir.h) with the shapes the planner tests build in it.
class PlannerTree : public test_support::TempDir {
 public:
  void MakeDir(std::string_view rel) const { fs::create_directories(*this / rel); }
  void MakeFile(std::string_view rel) const {
    fs::create_directories(fs::path(*this / rel).parent_path());
    std::ofstream(*this / rel) << "x\n";
  }
  void MakeSymlink(std::string_view target, std::string_view rel) const {
    fs::create_directory_symlink(target, *this / rel);
  }
};

// --- PathScope: normalisation, overlap, canonicalisation ------------------------

TEST(PathScope, NormalizesAbsolutePathsLexically) {
  const struct {
    std::string_view in;
    std::string_view out;
  } kCases[] = {
      {"/", "/"},
      {"//", "/"},
      {"/a/b", "/a/b"},
      {"/a/b/", "/a/b"},
      {"/a//b///c", "/a/b/c"},
      {"/a/./b/.", "/a/b"},
      {"/a/b/../c", "/a/c"},
      {"/a/b/../../..", "/"},
      {"/../a", "/a"},
      {"/a/../../b/./c/..", "/b"},
      {"/a/...", "/a/..."},
      {"/a/..b", "/a/..b"},
  };
  for (const auto& c : kCases) EXPECT_EQ(NormalizeAbsolutePath(c.in), c.out) << c.in;
}

TEST(PathScope, OverlapIsAComponentWisePrefixEitherWay) {
  const struct {
    std::string_view a;
    std::string_view b;
    bool overlap;
  } kCases[] = {
      // The original's cases: the same file, a directory and a file inside it (either order),
      // siblings that share a byte prefix but not a component.
      {"/a/b", "/a/b", true},     {"/a/b", "/a/b/c", true},        {"/a/b/c", "/a/b", true},
      {"/a/b", "/a/bc", false},   {"/a/bc", "/a/b", false},        {"/a/b.txt", "/a/b", false},
      {"/a/b", "/a/c", false},    {"/", "/anything/at/all", true}, {"/x", "/", true},
      {"/a/b/c/d", "/a/b", true}, {"/ab/c", "/a", false},
  };
  for (const auto& c : kCases) {
    EXPECT_EQ(PathsOverlap(c.a, c.b), c.overlap) << c.a << " vs " << c.b;
  }
}

TEST(PathScope, CanonicalizesRelativeAbsoluteAndDotDotPaths) {
  PlannerTree t;
  t.MakeFile("dir/f.txt");
  PathCanonicalizer c;
  const std::string& root = t.path();
  const struct {
    std::string cwd;
    std::string path;
    std::string want;
  } kCases[] = {
      {root, "dir/f.txt", root + "/dir/f.txt"},
      {root, root + "/dir/f.txt", root + "/dir/f.txt"},  // absolute ignores cwd
      {"/elsewhere", root + "/dir/f.txt", root + "/dir/f.txt"},
      {root + "/dir", "../dir/./f.txt", root + "/dir/f.txt"},
      {root + "/dir", "..", root},
      {root, "", root},  // empty path = the cwd
      {root, ".", root},
      {root, "dir/", root + "/dir"},
      {root, "missing/deep/file.txt", root + "/missing/deep/file.txt"},
      {root, "dir/f.txt/below", root + "/dir/f.txt/below"},  // under a regular file
      {root + "/dir/../dir", "f.txt", root + "/dir/f.txt"},  // `..` in the cwd too
      {root, "../../../../../../../../..", "/"},
  };
  for (const auto& k : kCases) {
    EXPECT_EQ(c.Canonicalize(k.cwd, k.path), k.want) << k.cwd << " + " << k.path;
  }
}

TEST(PathScope, EmptyOrRelativeCwdIsTakenAgainstTheProcessCwd) {
  char buf[4096];
  ASSERT_NE(::getcwd(buf, sizeof buf), nullptr);
  const std::string process_cwd = fs::canonical(buf).string();
  PathCanonicalizer c;
  EXPECT_EQ(c.Canonicalize("", "no-such-file-here.txt"),
            NormalizeAbsolutePath(process_cwd + "/no-such-file-here.txt"));
  EXPECT_EQ(c.Canonicalize("no-such-dir", "x"),
            NormalizeAbsolutePath(process_cwd + "/no-such-dir/x"));
}

TEST(PathScope, ResolvesSymlinkedDirectoriesOnDisk) {
  PlannerTree t;
  t.MakeFile("real/sub/f.txt");
  t.MakeSymlink(t / "real", "link");         // absolute target
  t.MakeSymlink("real/sub", "rel-link");     // relative target
  t.MakeSymlink(t / "nowhere", "dangling");  // target does not exist
  PathCanonicalizer c;
  const std::string& root = t.path();
  const struct {
    std::string cwd;
    std::string path;
    std::string want;
  } kCases[] = {
      {root, "link/sub/f.txt", root + "/real/sub/f.txt"},
      {root, "link", root + "/real"},
      {root, "rel-link/f.txt", root + "/real/sub/f.txt"},
      // The deepest existing ancestor is resolved; the rest is kept as written.
      {root, "link/new/deeper/file.txt", root + "/real/new/deeper/file.txt"},
      {root + "/link", "sub/f.txt", root + "/real/sub/f.txt"},  // a symlinked cwd
      {root + "/link/sub", "../sub/f.txt", root + "/real/sub/f.txt"},
      // A dangling link does not resolve: it stays as named under its resolved parent.
      {root, "dangling/x.txt", root + "/dangling/x.txt"},
  };
  for (const auto& k : kCases) {
    EXPECT_EQ(c.Canonicalize(k.cwd, k.path), k.want) << k.cwd << " + " << k.path;
  }
}

TEST(PathScope, CachedResultsMatchFreshOnes) {
  PlannerTree t;
  t.MakeFile("real/a.txt");
  t.MakeSymlink(t / "real", "link");
  PathCanonicalizer warm;
  for (int i = 0; i < 3; ++i) {
    for (std::string_view p : {"link/a.txt", "link/b.txt", "link", "real/x/y", "link/x/y"}) {
      PathCanonicalizer fresh;
      EXPECT_EQ(warm.Canonicalize(t.path(), p), fresh.Canonicalize(t.path(), p)) << p;
    }
  }
}

// --- BatchPlanner ----------------------------------------------------------------------------

// An editor's paths in mode "multi": its "paths" list (what a V4A text names, in the real
// tool); other modes leave them to `path`.
Result<std::optional<std::vector<std::string>>> EditorPaths(const Json& args) {
  auto mode = args.find("mode");
  if (mode == args.end()) return std::nullopt;
  if (!mode->is_string()) return Err(InvalidArgumentError("mode is not a string"));
  if (mode->get_ref<const std::string&>() != "multi") return std::nullopt;
  auto paths = args.find("paths");
  if (paths == args.end() || !paths->is_array()) return Err(InvalidArgumentError("no paths list"));
  std::vector<std::string> out;
  for (const Json& p : *paths) {
    if (!p.is_string()) return Err(InvalidArgumentError("a path that is not a string"));
    out.push_back(p.get<std::string>());
  }
  return out;
}

// A registry of planner test tools: stand-ins for file tools (parallel classes and path
// arguments like theirs), an editor naming its paths through call_paths, safe tools, a
// never-parallel tool and a two-path writer.
class PlannerHarness {
 public:
  PlannerHarness() {
    Add("reader", ParallelClass::kPathScoped, {"path"}, PathAccess::kRead,
        R"({"type":"object","properties":{"path":{"type":"string"}},"required":["path"]})");
    Add("finder", ParallelClass::kPathScoped, {"path"}, PathAccess::kRead,
        R"({"type":"object","properties":{"pattern":{"type":"string"},)"
        R"("path":{"type":"string","default":"."}}})");
    Add("writer", ParallelClass::kPathScoped, {"path"}, PathAccess::kWrite,
        R"({"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}}})");
    Add("editor", ParallelClass::kPathScoped, {"path"}, PathAccess::kWrite,
        R"({"type":"object","properties":{"mode":{"type":"string"},"path":{"type":"string"},)"
        R"("paths":{"type":"array"}}})",
        EditorPaths);
    Add("copier", ParallelClass::kPathScoped, {"source", "destination"}, PathAccess::kWrite,
        R"({"type":"object","properties":{"source":{"type":"string"},)"
        R"("destination":{"type":"string"}}})");
    Add("searcher", ParallelClass::kSafe, {}, PathAccess::kRead, R"({"type":"object"})");
    Add("mcp_docs_lookup", ParallelClass::kSafe, {}, PathAccess::kRead, R"({"type":"object"})");
    Add("runner", ParallelClass::kNever, {}, PathAccess::kRead, R"({"type":"object"})");
  }

  void Add(const std::string& name, ParallelClass parallel, std::vector<std::string> path_args,
           PathAccess access, std::string_view params, CallPathsFn call_paths = nullptr) {
    ToolSpec spec;
    spec.call_paths = call_paths;
    spec.name = name;
    spec.handler = [](const Json&, ToolContext&) { return ToolResult::Text("ok"); };
    spec.parallel = parallel;
    spec.path_args = std::move(path_args);
    spec.path_access = access;
    ASSERT_TRUE(RegisterTestTool(registry, std::move(spec), params).ok()) << name;
  }

  Registry registry;
};

// One call of a table row: tool, raw arguments, cwd relative to the temp dir ("" = its root).
struct Call {
  std::string name;
  std::string args;
  std::string cwd;
};

// Segments as text: "P0,1 S2,3" (P = parallel, S = sequential).
std::string Describe(const std::vector<PlannedSegment>& segments) {
  std::string out;
  for (const PlannedSegment& s : segments) {
    if (!out.empty()) out += ' ';
    out += s.parallel ? 'P' : 'S';
    for (size_t k = 0; k < s.calls.size(); ++k) {
      if (k > 0) out += ',';
      out += std::to_string(s.calls[k]);
    }
  }
  return out;
}

// Plans `calls` with every cwd under `root`; also checks PlanBatch agrees with PlanBatchDetailed.
std::vector<PlannedSegment> Plan(const PlannerHarness& h, const std::string& root,
                                 const std::vector<Call>& calls, BatchPlan* detail = nullptr) {
  std::vector<std::string> cwds(calls.size());
  std::vector<PlannedCall> planned(calls.size());
  for (size_t i = 0; i < calls.size(); ++i) {
    cwds[i] = calls[i].cwd.empty() ? root : root + "/" + calls[i].cwd;
    planned[i] = PlannedCall{calls[i].name, calls[i].args, cwds[i]};
  }
  BatchPlan plan = PlanBatchDetailed(planned, h.registry);
  EXPECT_EQ(Describe(plan.segments), Describe(PlanBatch(planned, h.registry)));
  if (detail != nullptr) *detail = plan;
  return plan.segments;
}

struct PlanCase {
  std::string_view what;
  std::vector<Call> calls;
  std::string_view want;
};

void RunTable(const std::vector<PlanCase>& cases, const PlannerTree& t) {
  PlannerHarness h;
  for (const PlanCase& c : cases) {
    EXPECT_EQ(Describe(Plan(h, t.path(), c.calls)), c.want) << c.what;
  }
}

Call Read(std::string path, std::string cwd = "") {
  return {"reader", Json{{"path", std::move(path)}}.dump(), std::move(cwd)};
}
Call Write(std::string path, std::string cwd = "") {
  return {"writer", Json{{"path", std::move(path)}, {"content", "x"}}.dump(), std::move(cwd)};
}
Call Search(std::string path) {
  return {"finder", Json{{"pattern", "x"}, {"path", std::move(path)}}.dump(), ""};
}
Call Multi(std::vector<std::string> paths) {
  return {"editor", Json{{"mode", "multi"}, {"paths", std::move(paths)}}.dump(), ""};
}
Call Safe() { return {"searcher", R"({"query":"q"})", ""}; }
Call Never() { return {"runner", R"({"command":"ls"})", ""}; }

TEST(BatchPlanner, EmptyAndSingleCallBatches) {
  PlannerTree t;
  RunTable(
      {
          {"no calls", {}, ""},
          {"one read is a run of one: sequential", {Read("a")}, "S0"},
          {"one safe call", {Safe()}, "S0"},
          {"one barrier", {Never()}, "S0"},
      },
      t);
}

TEST(BatchPlanner, SafeCallsRunTogetherAndBarriersSplitThem) {
  PlannerTree t;
  RunTable(
      {
          {"two safe", {Safe(), Safe()}, "P0,1"},
          {"safe tools of different kinds (an MCP read-only tool declares kSafe)",
           {Safe(), {"mcp_docs_lookup", "{}", ""}, Safe()},
           "P0,1,2"},
          {"a barrier between two safe calls leaves runs of one",
           {Safe(), Never(), Safe()},
           "S0,1,2"},
          {"a barrier splits two runs", {Safe(), Safe(), Never(), Safe(), Safe()}, "P0,1 S2 P3,4"},
          {"adjacent barriers merge into one sequential segment",
           {Never(), Never(), Safe(), Safe(), Never()},
           "S0,1 P2,3 S4"},
          {"unknown tools are barriers",
           {Safe(), {"no_such_tool", "{}", ""}, Safe(), Safe()},
           "S0,1 P2,3"},
          {"safe calls and path-scoped calls share a run",
           {Safe(), Read("a"), Write("b")},
           "P0,1,2"},
      },
      t);
}

TEST(BatchPlanner, ReaderReaderOverlapStaysParallel) {
  PlannerTree t;
  t.MakeFile("src/a.txt");
  RunTable(
      {
          {"same file", {Read("src/a.txt"), Read("src/a.txt")}, "P0,1"},
          {"a directory search and a read inside it", {Search("src"), Read("src/a.txt")}, "P0,1"},
          {"search of the cwd (default path) and reads",
           {{"finder", R"({"pattern":"x"})", ""}, Read("src/a.txt"), Read("b")},
           "P0,1,2"},
      },
      t);
}

TEST(BatchPlanner, WriterOverlapStartsANewSegmentAfterTheConflictingCall) {
  PlannerTree t;
  t.MakeFile("src/a.txt");
  RunTable(
      {
          {"read then write the same file", {Read("src/a.txt"), Write("src/a.txt")}, "S0,1"},
          {"write then read the same file", {Write("src/a.txt"), Read("src/a.txt")}, "S0,1"},
          {"writer/writer on the same file", {Write("f"), Write("f")}, "S0,1"},
          {"writers on different files", {Write("f"), Write("g"), Write("src/h")}, "P0,1,2"},
          {"a write inside a searched directory", {Search("src"), Write("src/new.txt")}, "S0,1"},
          {"a write to a directory and a read below it", {Write("src"), Read("src/a.txt")}, "S0,1"},
          {"siblings sharing a byte prefix do not overlap",
           {Write("src/a"), Read("src/ab")},
           "P0,1"},
          {"search of the cwd (default path) conflicts with any write below it",
           {{"finder", R"({"pattern":"x"})", ""}, Write("deep/down/f")},
           "S0,1"},
          {"the conflicting call opens the next run, later calls join it",
           {Read("a"), Read("b"), Write("a"), Read("c"), Read("d")},
           "P0,1 P2,3,4"},
          {"a conflict with the last call of the run",
           {Read("a"), Read("b"), Write("b"), Read("c")},
           "P0,1 P2,3"},
          {"a conflict in the new run closes it too",
           {Read("a"), Read("b"), Write("a"), Read("a")},
           "P0,1 S2,3"},
          {"writer after safe calls only conflicts with scoped ones",
           {Safe(), Read("a"), Safe(), Write("a"), Safe()},
           "P0,1,2 P3,4"},
          {"a two-path writer conflicts through either path",
           {Read("x"), {"copier", R"({"source":"y","destination":"x"})", ""}},
           "S0,1"},
          {"a two-path writer beside unrelated calls",
           {Read("z"), {"copier", R"({"source":"y","destination":"x"})", ""}},
           "P0,1"},
      },
      t);
}

TEST(BatchPlanner, CanonicalisesPathsBeforeComparingThem) {
  PlannerTree t;
  t.MakeFile("real/f.txt");
  t.MakeDir("one");
  t.MakeDir("two");
  t.MakeSymlink(t / "real", "link");
  const std::string abs = t / "real/f.txt";
  RunTable(
      {
          {"relative vs absolute", {Read(abs), Write("real/f.txt")}, "S0,1"},
          {"`..` components", {Read("one/../real/./f.txt"), Write("real/f.txt")}, "S0,1"},
          {"`..` through the cwd", {Read("../real/f.txt", "one"), Write("real/f.txt")}, "S0,1"},
          {"the same relative name in different cwds",
           {Write("f.txt", "one"), Write("f.txt", "two")},
           "P0,1"},
          {"a symlinked directory on disk", {Read("link/f.txt"), Write("real/f.txt")}, "S0,1"},
          {"a new file below a symlinked directory",
           {Write("link/new/g.txt"), Read("real/new")},
           "S0,1"},
          {"a symlinked cwd", {Read("f.txt", "link"), Write("real/f.txt")}, "S0,1"},
          {"a symlink and a different file", {Read("link/f.txt"), Write("real/g.txt")}, "P0,1"},
      },
      t);
}

TEST(BatchPlanner, ScopesCallsByTheirCallPathsWhenTheToolNamesThem) {
  PlannerTree t;
  t.MakeFile("a.txt");
  RunTable(
      {
          {"single mode uses `path`",
           {Read("a.txt"), {"editor", R"({"mode":"single","path":"a.txt"})", ""}},
           "S0,1"},
          {"no mode: `path`", {Read("a.txt"), {"editor", R"({"path":"a.txt"})", ""}}, "S0,1"},
          {"`path` on another file", {Read("a.txt"), {"editor", R"({"path":"b"})", ""}}, "P0,1"},
          {"a named file", {Read("a.txt"), Multi({"a.txt"})}, "S0,1"},
          {"any of the named files", {Read("b.txt"), Multi({"x", "b.txt"})}, "S0,1"},
          {"other files run beside reads",
           {Read("z.txt"), Multi({"a.txt", "m"}), Read("y.txt")},
           "P0,1,2"},
          {"with call paths `path` is not a scope",
           {Read("a.txt"), {"editor", R"({"mode":"multi","path":"a.txt","paths":["q"]})", ""}},
           "P0,1"},
          {"two edits of different files", {Multi({"p"}), Multi({"q"})}, "P0,1"},
          {"two edits of the same file", {Multi({"p"}), Multi({"p"})}, "S0,1"},
      },
      t);
}

TEST(BatchPlanner, UnreadableCallsAreBarriers) {
  PlannerTree t;
  RunTable(
      {
          {"arguments that are not JSON",
           {Read("a"), {"reader", "{not json", ""}, Read("b")},
           "S0,1,2"},
          {"arguments that are an array", {Safe(), {"searcher", "[1,2]", ""}, Safe()}, "S0,1,2"},
          {"arguments that are a string", {Safe(), {"searcher", R"("q")", ""}, Safe()}, "S0,1,2"},
          {"blank arguments mean {}", {Safe(), {"searcher", "  ", ""}, Safe()}, "P0,1,2"},
          {"a path argument that is a number",
           {Read("a"), {"reader", R"({"path":42})", ""}, Read("b")},
           "S0,1,2"},
          {"a path argument that is null",
           {Read("a"), {"reader", R"({"path":null})", ""}, Read("b")},
           "S0,1,2"},
          {"a path-scoped call without any path (and no schema default)",
           {Read("a"), {"reader", "{}", ""}, Read("b")},
           "S0,1,2"},
          {"paths the tool cannot tell (not a list)",
           {Read("a"), {"editor", R"({"mode":"multi","paths":"x"})", ""}, Read("b")},
           "S0,1,2"},
          {"paths the tool cannot tell (no list)",
           {Read("a"), {"editor", R"({"mode":"multi","path":"x"})", ""}, Read("b")},
           "S0,1,2"},
          {"a mode that is not a string",
           {Read("a"), {"editor", R"({"mode":1,"path":"x"})", ""}, Read("b")},
           "S0,1,2"},
          {"call paths naming no file", {Read("a"), Multi({}), Read("b")}, "S0,1,2"},
      },
      t);
}

TEST(BatchPlanner, ReportsHowEachCallWasAdmitted) {
  PlannerTree t;
  PlannerHarness h;
  BatchPlan plan;
  Plan(h, t.path(),
       {Read("a"), Never(), {"nope", "{}", ""}, Safe(), Multi({"m", "n"}), {"reader", "[]", ""}},
       &plan);
  ASSERT_EQ(plan.calls.size(), 6u);
  EXPECT_EQ(plan.calls[0].admission, Admission::kPathScoped);
  ASSERT_EQ(plan.calls[0].scopes.size(), 1u);
  EXPECT_EQ(plan.calls[0].scopes[0].path, t / "a");
  EXPECT_EQ(plan.calls[0].scopes[0].access, PathAccess::kRead);
  EXPECT_EQ(plan.calls[1].reason, "never parallel");
  EXPECT_EQ(plan.calls[2].reason, "unknown tool");
  EXPECT_EQ(plan.calls[3].admission, Admission::kSafe);
  ASSERT_EQ(plan.calls[4].scopes.size(), 2u);
  EXPECT_EQ(plan.calls[4].scopes[0].path, t / "m");
  EXPECT_EQ(plan.calls[4].scopes[1].path, t / "n");
  EXPECT_EQ(plan.calls[4].scopes[1].access, PathAccess::kWrite);
  EXPECT_EQ(plan.calls[5].admission, Admission::kBarrier);
  EXPECT_EQ(plan.calls[5].reason, "arguments are not a JSON object");
}

TEST(BatchPlanner, PlanToJsonListsSegmentsToolsAndAdmissions) {
  PlannerTree t;
  PlannerHarness h;
  const std::string a = R"({"path":"a"})";
  const std::string cmd = R"({"command":"ls"})";
  const std::vector<PlannedCall> calls = {
      {"reader", a, t.path()}, {"searcher", "{}", t.path()}, {"runner", cmd, t.path()}};
  const BatchPlan plan = PlanBatchDetailed(calls, h.registry);
  const Json want = Json::parse(R"([
    {"parallel": true, "calls": [0, 1], "tools": ["reader", "searcher"],
     "admissions": [{"class": "path_scoped", "scopes": [{"path": ")" +
                                t / "a" + R"(", "access": "read"}]},
                    {"class": "safe"}]},
    {"parallel": false, "calls": [2], "tools": ["runner"],
     "admissions": [{"class": "barrier", "reason": "never parallel"}]}
  ])");
  EXPECT_EQ(PlanToJson(plan, calls), want);
  EXPECT_EQ(FormatPlan(plan, calls),
            "1 parallel   #0 reader, #1 searcher\n"
            "2 sequential #2 runner (never parallel)\n");
}

TEST(BatchPlanner, UsesTheRegistryAsItIsWhenPlanning) {
  PlannerTree t;
  PlannerHarness h;
  const std::vector<Call> calls = {{"late_tool", "{}", ""}, {"late_tool", "{}", ""}};
  EXPECT_EQ(Describe(Plan(h, t.path(), calls)), "S0,1");
  h.Add("late_tool", ParallelClass::kSafe, {}, PathAccess::kRead, R"({"type":"object"})");
  EXPECT_EQ(Describe(Plan(h, t.path(), calls)), "P0,1");
}

// Invariants over random batches: segments cover 0..n-1 in order (never reordered), parallel runs
// have >= 2 calls, no two sequential segments are adjacent, no barrier sits in a parallel run,
// and no two calls of a run conflict.
TEST(BatchPlanner, RandomBatchesKeepEveryInvariant) {
  PlannerTree t;
  t.MakeFile("d/a");
  t.MakeFile("d/b");
  t.MakeSymlink(t / "d", "l");
  PlannerHarness h;
  const std::vector<std::string> paths = {"d", "d/a", "d/b", "l/a", "d/../d/b", "e", "e/f", "d/ab"};
  std::mt19937 rng(20240605);
  for (int round = 0; round < 300; ++round) {
    const size_t n = rng() % 24;
    std::vector<Call> calls;
    for (size_t i = 0; i < n; ++i) {
      const std::string& p = paths[rng() % paths.size()];
      switch (rng() % 6) {
        case 0:
          calls.push_back(Read(p));
          break;
        case 1:
          calls.push_back(Write(p));
          break;
        case 2:
          calls.push_back(Search(p));
          break;
        case 3:
          calls.push_back(Multi({p}));
          break;
        case 4:
          calls.push_back(Safe());
          break;
        default:
          calls.push_back(rng() % 2 ? Never() : Call{"reader", "[", ""});
          break;
      }
    }
    BatchPlan plan;
    const std::vector<PlannedSegment> segments = Plan(h, t.path(), calls, &plan);
    size_t next = 0;
    for (size_t s = 0; s < segments.size(); ++s) {
      const PlannedSegment& seg = segments[s];
      ASSERT_FALSE(seg.calls.empty());
      for (size_t i : seg.calls) ASSERT_EQ(i, next++) << "round " << round;
      if (seg.parallel) {
        EXPECT_GE(seg.calls.size(), 2u);
        for (size_t x = 0; x < seg.calls.size(); ++x) {
          const CallAdmission& ax = plan.calls[seg.calls[x]];
          EXPECT_NE(ax.admission, Admission::kBarrier);
          for (size_t y = x + 1; y < seg.calls.size(); ++y) {
            for (const PathScope& sx : ax.scopes) {
              for (const PathScope& sy : plan.calls[seg.calls[y]].scopes) {
                EXPECT_FALSE(PathsOverlap(sx.path, sy.path) &&
                             (sx.access == PathAccess::kWrite || sy.access == PathAccess::kWrite))
                    << "round " << round << ": " << sx.path << " vs " << sy.path;
              }
            }
          }
        }
      } else if (s > 0) {
        EXPECT_TRUE(segments[s - 1].parallel) << "adjacent sequential segments, round " << round;
      }
    }
    EXPECT_EQ(next, n);
  }
}

}  // namespace
}  // namespace talaria
