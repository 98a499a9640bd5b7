#include "talaria/search/search_engine.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "talaria/base/unique_fd.h"
#include "talaria/search/gitignore.h"
#include "talaria/search/glob.h"
#include "talaria/search/line_matcher.h"

namespace talaria::search {
namespace {

namespace fs = std::filesystem;

class TempTree {
 public:
  TempTree() {
    std::string tmpl = (fs::temp_directory_path() / "talaria-search-XXXXXX").string();
    char* dir = mkdtemp(tmpl.data());
    EXPECT_NE(dir, nullptr);
    root_ = tmpl;
  }
  ~TempTree() {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  TempTree(const TempTree&) = delete;
  TempTree& operator=(const TempTree&) = delete;

  const fs::path& root() const { return root_; }
  void Write(const std::string& rel, std::string_view content) const {
    const fs::path p = root_ / rel;
    fs::create_directories(p.parent_path());
    std::ofstream out(p, std::ios::binary);
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
  }
  void Mkdir(const std::string& rel) const { fs::create_directories(root_ / rel); }
  void Symlink(const std::string& target, const std::string& rel) const {
    fs::create_directories((root_ / rel).parent_path());
    ASSERT_EQ(symlink(target.c_str(), (root_ / rel).c_str()), 0);
  }
  UniqueFd OpenRoot(const std::string& rel = "") const {
    return UniqueFd(open((root_ / rel).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  }

 private:
  fs::path root_;
};

SearchRequest Content(std::string pattern) {
  SearchRequest r;
  r.pattern = std::move(pattern);
  r.limit = 1000;
  return r;
}

SearchOutcome RunSearch(const TempTree& t, const SearchRequest& req) {
  UniqueFd fd = t.OpenRoot();
  auto out = SearchDirectory(fd.get(), req);
  EXPECT_TRUE(out.has_value()) << (out ? "" : out.error().ToString());
  return out ? *out : SearchOutcome{};
}

// Every file that content search visits (pattern matching anything).
std::vector<std::string> VisitedFiles(const TempTree& t, SearchRequest req = Content("")) {
  req.output_mode = SearchOutputMode::kFilesOnly;
  return RunSearch(t, req).files;
}

// --- Glob -------------------------------------------------------------------------------------

struct GlobCase {
  const char* pattern;
  const char* path;
  bool match;
};

TEST(Glob, MatchesTable) {
  const GlobCase cases[] = {
      {"*.py", "a.py", true},
      {"*.py", "dir/a.py", false},  // '*' never crosses '/'
      {"*.py", ".py", true},
      {"a?c", "abc", true},
      {"a?c", "a/c", false},
      {"[abc]x", "bx", true},
      {"[!abc]x", "bx", false},
      {"[^abc]x", "dx", true},
      {"[a-f]1", "e1", true},
      {"[a-f]1", "g1", false},
      {"\\*x", "*x", true},
      {"\\*x", "ax", false},
      {"**/test_*.cpp", "test_a.cpp", true},
      {"**/test_*.cpp", "src/x/test_a.cpp", true},
      {"**/test_*.cpp", "src/x/test_a.cc", false},
      {"src/**", "src/a/b/c", true},
      {"src/**", "srcx/a", false},
      {"a/**/b", "a/b", true},
      {"a/**/b", "a/x/y/b", true},
      {"a/**/b", "a/x/y/c", false},
      {"**", "any/thing/at/all", true},
      {"a**b", "axxb", true},  // not a whole component: a plain '*'
      {"a**b", "ax/xb", false},
      {"foo*", "foobar", true},
      {"foo*", "foo/bar", false},
      {"*a*a*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaac", false},
  };
  for (const auto& c : cases) {
    auto g = Glob::Compile(c.pattern);
    ASSERT_TRUE(g) << c.pattern;
    EXPECT_EQ(g->Match(c.path), c.match) << c.pattern << " vs " << c.path;
  }
}

TEST(Glob, BracesExpandOnlyWhenAsked) {
  auto braces = Glob::Compile("*.{ts,tsx}", GlobSyntax::kBraces);
  ASSERT_TRUE(braces);
  EXPECT_TRUE(braces->Match("a.ts"));
  EXPECT_TRUE(braces->Match("a.tsx"));
  EXPECT_FALSE(braces->Match("a.js"));
  auto plain = Glob::Compile("*.{ts,tsx}");
  ASSERT_TRUE(plain);
  EXPECT_TRUE(plain->Match("a.{ts,tsx}"));
}

TEST(Glob, RejectsMalformedPatterns) {
  EXPECT_FALSE(Glob::Compile("[abc"));
  EXPECT_FALSE(Glob::Compile("abc\\"));
  EXPECT_FALSE(Glob::Compile("{a,b", GlobSyntax::kBraces));
}

// --- Gitignore --------------------------------------------------------------------------------

struct IgnoreCase {
  const char* rules;
  const char* path;
  bool is_dir;
  IgnoreVerdict verdict;
};

TEST(Gitignore, RuleSemanticsTable) {
  using V = IgnoreVerdict;
  const IgnoreCase cases[] = {
      {"*.log", "a.log", false, V::kIgnore},
      {"*.log", "deep/dir/a.log", false, V::kIgnore},  // no slash: any depth
      {"*.log\n!keep.log", "keep.log", false, V::kWhitelist},
      {"!keep.log\n*.log", "keep.log", false, V::kIgnore},  // the last match wins
      {"build/", "build", true, V::kIgnore},
      {"build/", "build", false, V::kNone},  // directory-only
      {"build/", "src/build", true, V::kIgnore},
      {"/top", "top", false, V::kIgnore},
      {"/top", "sub/top", false, V::kNone},  // anchored
      {"doc/*.txt", "doc/a.txt", false, V::kIgnore},
      {"doc/*.txt", "x/doc/a.txt", false, V::kNone},  // a middle slash anchors too
      {"doc/*.txt", "doc/sub/a.txt", false, V::kNone},
      {"**/gen", "a/b/gen", true, V::kIgnore},
      {"**/gen", "gen", false, V::kIgnore},
      {"out/**", "out/x/y.o", false, V::kIgnore},
      {"a/**/z", "a/b/c/z", false, V::kIgnore},
      {"# comment\n\n", "# comment", false, V::kNone},
      {"\\#hash", "#hash", false, V::kIgnore},
      {"\\!bang", "!bang", false, V::kIgnore},
      {"trail   ", "trail", false, V::kIgnore},
      {"sp\\ ", "sp ", false, V::kIgnore},
      {"crlf\r\n", "crlf", false, V::kIgnore},
      {"[bad", "[bad", false, V::kNone},  // an invalid line is skipped
  };
  for (const auto& c : cases) {
    IgnoreRules rules;
    rules.AddFile(c.rules);
    EXPECT_EQ(rules.Check(c.path, c.is_dir), c.verdict) << c.rules << " vs " << c.path;
  }
}

TEST(Gitignore, WalkHonoursNestedFilesNegationAndDotIgnore) {
  TempTree t;
  t.Write(".gitignore", "*.log\nbuild/\n/rootonly.txt\n!keep.log\nsecret*\n");
  t.Write("a.log", "x\n");
  t.Write("keep.log", "x\n");
  t.Write("rootonly.txt", "x\n");
  t.Write("src/rootonly.txt", "x\n");
  t.Write("build/out.txt", "x\n");
  t.Write("src/build", "x\n");  // a file named build: the dir-only rule does not apply
  t.Write("src/.gitignore", "!secret_ok.txt\n*.tmp\n");
  t.Write("src/secret_ok.txt", "x\n");
  t.Write("src/secret_no.txt", "x\n");
  t.Write("src/x.tmp", "x\n");
  t.Write("other/x.tmp", "x\n");  // the nested rule does not reach a sibling
  t.Write("lib/.ignore", "generated.c\n");
  t.Write("lib/.gitignore", "!generated.c\n");  // .ignore outranks .gitignore
  t.Write("lib/generated.c", "x\n");
  t.Write("lib/main.c", "x\n");
  t.Write(".git/HEAD", "x\n");
  t.Write("vendor/.gitignore", "*\n");
  t.Write("vendor/dep.c", "x\n");
  const std::vector<std::string> expected = {
      ".gitignore",  "keep.log",       "lib/.gitignore", "lib/.ignore",      "lib/main.c",
      "other/x.tmp", "src/.gitignore", "src/build",      "src/rootonly.txt", "src/secret_ok.txt",
  };
  EXPECT_EQ(VisitedFiles(t), expected);
}

TEST(Gitignore, PositiveFileGlobOverridesIgnoreNegativeExcludes) {
  TempTree t;
  t.Write(".gitignore", "*.log\nbuild/\n");
  t.Write("x.log", "hit\n");
  t.Write("a.txt", "hit\n");
  t.Write("build/y.log", "hit\n");  // the ignored directory is still not entered
  SearchRequest req = Content("hit");
  req.file_glob = "*.log";
  EXPECT_EQ(VisitedFiles(t, req), std::vector<std::string>{"x.log"});
  req.file_glob = "!*.log";
  EXPECT_EQ(VisitedFiles(t, req), std::vector<std::string>{"a.txt"});
}

TEST(Gitignore, ParentIgnoreFilesApplyBelowTheRoot) {
  TempTree t;  // stands for <repo>/web, searched on its own
  t.Write("node_modules/dep.js", "hit\n");
  t.Write("app/node_modules/dep.js", "hit\n");
  t.Write("app/main.js", "hit\n");
  t.Write("gen/out.js", "hit\n");
  t.Write("web.log", "hit\n");
  SearchRequest req = Content("hit");
  // <repo>/.gitignore anchors /web/gen; <repo>/web/.. is the parent of the root.
  req.parent_ignores = {{"node_modules/\n/web/gen\n/gen\n", "web"}, {"*.log\n", ""}};
  EXPECT_EQ(VisitedFiles(t, req), std::vector<std::string>{"app/main.js"});
}

TEST(SearchWalk, TheSameDirectoryFdCanBeSearchedTwice) {
  TempTree t;
  t.Write("a/b.txt", "hit\n");
  UniqueFd fd = t.OpenRoot();
  for (int i = 0; i < 3; ++i) {
    auto out = SearchDirectory(fd.get(), Content("hit"));
    ASSERT_TRUE(out);
    EXPECT_EQ(out->total_count, 1) << "run " << i;
  }
  UniqueFd file(open((t.root() / "a/b.txt").c_str(), O_RDONLY | O_CLOEXEC));
  for (int i = 0; i < 2; ++i) {
    auto out = SearchFile(file.get(), "b.txt", Content("hit"));
    ASSERT_TRUE(out);
    EXPECT_EQ(out->total_count, 1) << "run " << i;
  }
}

// --- Walk safety ------------------------------------------------------------------------------

TEST(SearchWalk, SkipsBinaryFiles) {
  TempTree t;
  t.Write("text.txt", "needle\n");
  std::string bin = "needle\n";
  bin.push_back('\0');
  bin += "needle\n";
  t.Write("blob.bin", bin);
  std::string late(9000, 'a');
  late += "\nneedle\n";
  late.push_back('\0');  // NUL beyond the first 8 KB: searched as text
  t.Write("late.txt", late);
  EXPECT_EQ(VisitedFiles(t, Content("needle")), (std::vector<std::string>{"late.txt", "text.txt"}));
}

TEST(SearchWalk, NeverFollowsSymlinks) {
  TempTree outside;
  outside.Write("secret.txt", "needle outside\n");
  TempTree t;
  t.Write("in/real.txt", "needle inside\n");
  t.Symlink(outside.root().string(), "out_dir");                        // directory outside
  t.Symlink((outside.root() / "secret.txt").string(), "out_file.txt");  // file outside
  t.Symlink(".", "in/loop");                                            // a loop
  t.Symlink("../in", "in/self_parent");                                 // another loop
  t.Symlink("real.txt", "in/alias.txt");                                // inside, still skipped
  t.Symlink("/nonexistent/dangling", "dangling");
  auto out = RunSearch(t, Content("needle"));
  ASSERT_EQ(out.matches.size(), 1U);
  EXPECT_EQ(out.matches[0].path, "in/real.txt");
  EXPECT_EQ(out.total_count, 1);
  SearchRequest files;
  files.target = SearchTarget::kFiles;
  files.pattern = "*";
  EXPECT_EQ(RunSearch(t, files).files, std::vector<std::string>{"in/real.txt"});
}

TEST(SearchWalk, SkipsSpecialFiles) {
  TempTree t;
  t.Write("a.txt", "needle\n");
  ASSERT_EQ(mkfifo((t.root() / "fifo").c_str(), 0600), 0);
  // A search that opened the fifo would block on it (it has no writer) or list it.
  EXPECT_EQ(VisitedFiles(t, Content("needle")), std::vector<std::string>{"a.txt"});
}

// --- Patterns ---------------------------------------------------------------------------------

TEST(SearchPattern, InvalidRegexIsAClearError) {
  TempTree t;
  t.Write("a.txt", "x\n");
  UniqueFd fd = t.OpenRoot();
  auto out = SearchDirectory(fd.get(), Content("foo(bar"));
  ASSERT_FALSE(out);
  EXPECT_EQ(out.error().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(out.error().message().find("regex parse error at offset 7"), std::string::npos)
      << out.error().message();
  EXPECT_NE(out.error().message().find("missing closing parenthesis"), std::string::npos);
}

// How fast it ends is talaria_search_bench's search_catastrophic_regex_ms.
TEST(SearchPattern, CatastrophicBacktrackingEnds) {
  TempTree t;
  t.Write("long.txt", std::string(50'000, 'a') + "b\n" + std::string(40, 'a') + "!\n");
  UniqueFd fd = t.OpenRoot();
  auto out = SearchDirectory(fd.get(), Content("(a+)+$"));
  if (out) {
    EXPECT_EQ(out->total_count, 0);
  } else {
    EXPECT_EQ(out.error().code(), StatusCode::kResourceExhausted);
    EXPECT_NE(out.error().message().find("long.txt:1"), std::string::npos) << out.error().message();
  }
}

TEST(SearchPattern, LiteralAnalysis) {
  std::string lit;
  EXPECT_TRUE(PatternAsLiteral("hello world", &lit));
  EXPECT_EQ(lit, "hello world");
  EXPECT_TRUE(PatternAsLiteral("a\\.b\\(c\\)", &lit));
  EXPECT_EQ(lit, "a.b(c)");
  EXPECT_FALSE(PatternAsLiteral("a.b", &lit));
  EXPECT_FALSE(PatternAsLiteral("\\d", &lit));
  EXPECT_EQ(RequiredLiteral("foo\\d+bar"), "foo");
  EXPECT_EQ(RequiredLiteral("fn_[a-z]+_handler\\("), "_handler(");
  EXPECT_EQ(RequiredLiteral("abcd?ef"), "abc");
  EXPECT_EQ(RequiredLiteral("foo|barbaz"), "");
  EXPECT_EQ(RequiredLiteral("(?i)foobar"), "");
  EXPECT_EQ(RequiredLiteral("x{0,3}yzw"), "yzw");
  EXPECT_TRUE(PatternMatchesNewline("a\\nb"));
  EXPECT_FALSE(PatternMatchesNewline("a\\\\nb"));
}

TEST(SearchPattern, StrategiesAgreeWithAReferenceScan) {
  // Literal, prefiltered and plain-regex strategies against a line-by-line reference.
  std::string text;
  std::vector<int64_t> lit_lines;
  std::vector<int64_t> re_lines;
  for (int i = 1; i <= 3000; ++i) {
    std::string line = "line " + std::to_string(i) + " filler text";
    if (i % 7 == 0) line += " call_handler(" + std::to_string(i % 10) + ")";
    if (i % 7 == 0) lit_lines.push_back(i);
    if (i % 7 == 0 && i % 10 >= 5) re_lines.push_back(i);
    text += line + "\n";
  }
  TempTree t;
  t.Write("f.txt", text);
  auto lines_of = [&](const std::string& pattern) {
    SearchRequest req = Content(pattern);
    req.limit = 100'000;
    std::vector<int64_t> got;
    for (const auto& m : RunSearch(t, req).matches) got.push_back(m.line);
    return got;
  };
  EXPECT_EQ(lines_of("call_handler\\("), lit_lines);     // literal
  EXPECT_EQ(lines_of("_handler\\([5-9]\\)"), re_lines);  // prefiltered
  EXPECT_EQ(lines_of("\\([5-9]\\)$"), re_lines);         // plain regex
  EXPECT_EQ(lines_of("[5-9]\\)\\s*$"), re_lines);        // \s could cross a newline
}

TEST(SearchPattern, MultilinePatternReportsEveryLineItCovers) {
  TempTree t;
  t.Write("a.txt", "one\nfoo\nbar\nfoo\nbaz\n");
  auto out = RunSearch(t, Content("foo\\nbar"));
  ASSERT_EQ(out.matches.size(), 2U);
  EXPECT_EQ(out.matches[0].line, 2);
  EXPECT_EQ(out.matches[0].content, "foo");
  EXPECT_EQ(out.matches[1].line, 3);
  EXPECT_EQ(out.matches[1].content, "bar");
}

// --- Output modes, paging, context --------------------------------------------------------------

TEST(SearchOutput, PagingAndTruncation) {
  TempTree t;
  for (int f = 0; f < 5; ++f) {
    std::string body;
    for (int l = 0; l < 10; ++l) body += "hit " + std::to_string(l) + "\n";
    t.Write("f" + std::to_string(f) + ".txt", body);
  }
  SearchRequest req = Content("hit");
  req.limit = 50;
  auto all = RunSearch(t, req);
  EXPECT_EQ(all.total_count, 50);
  EXPECT_FALSE(all.truncated);
  EXPECT_FALSE(all.total_is_lower_bound);
  ASSERT_EQ(all.matches.size(), 50U);

  req.limit = 12;
  req.offset = 5;
  auto page = RunSearch(t, req);
  ASSERT_EQ(page.matches.size(), 12U);
  EXPECT_EQ(page.matches[0].path, "f0.txt");
  EXPECT_EQ(page.matches[0].line, 6);
  EXPECT_EQ(page.matches[11].path, "f1.txt");
  EXPECT_EQ(page.matches[11].line, 7);
  EXPECT_TRUE(page.truncated);
  EXPECT_TRUE(page.total_is_lower_bound);
  EXPECT_GE(page.total_count, 18);  // stopped after the file that crossed offset+limit+1
  EXPECT_LE(page.total_count, 20);

  req.offset = 45;
  req.limit = 10;
  auto tail = RunSearch(t, req);
  EXPECT_EQ(tail.matches.size(), 5U);
  EXPECT_EQ(tail.total_count, 50);
  EXPECT_FALSE(tail.truncated);
}

TEST(SearchOutput, DisplayRootPrefixesPathsLikeRipgrep) {
  TempTree t;
  t.Write("src/a.py", "hit\n");
  SearchRequest req = Content("hit");
  req.display_root = ".";
  EXPECT_EQ(RunSearch(t, req).matches.at(0).path, "./src/a.py");
  req.display_root = "proj/";
  EXPECT_EQ(RunSearch(t, req).matches.at(0).path, "proj/src/a.py");
}

TEST(SearchOutput, ContextLinesMergeOverlappingWindows) {
  TempTree t;
  t.Write("a.txt", "1\n2\n3 hit\n4\n5 hit\n6\n7\n8\n9\n10 hit\n");
  SearchRequest req = Content("hit");
  req.context = 1;
  auto out = RunSearch(t, req);
  std::vector<std::pair<int64_t, bool>> got;
  for (const auto& m : out.matches) got.emplace_back(m.line, m.is_context);
  const std::vector<std::pair<int64_t, bool>> expected = {
      {2, true}, {3, false}, {4, true}, {5, false}, {6, true}, {9, true}, {10, false}};
  EXPECT_EQ(got, expected);
  EXPECT_EQ(out.matches[1].content, "3 hit");
}

TEST(SearchOutput, CountAndFilesOnlyModes) {
  TempTree t;
  t.Write("a.txt", "hit\nhit hit\nmiss\n");
  t.Write("b/c.txt", "hit\n");
  t.Write("b/d.txt", "miss\n");
  SearchRequest req = Content("hit");
  req.output_mode = SearchOutputMode::kCount;
  auto counts = RunSearch(t, req);
  const std::vector<std::pair<std::string, int64_t>> expected = {{"a.txt", 2}, {"b/c.txt", 1}};
  EXPECT_EQ(counts.counts, expected);
  EXPECT_EQ(counts.total_count, 3);
  req.output_mode = SearchOutputMode::kFilesOnly;
  auto files = RunSearch(t, req);
  EXPECT_EQ(files.files, (std::vector<std::string>{"a.txt", "b/c.txt"}));
  EXPECT_EQ(files.total_count, 2);
}

TEST(SearchOutput, FileNameSearch) {
  TempTree t;
  t.Write("src/test_a.cpp", "");
  t.Write("src/deep/test_b.cpp", "");
  t.Write("src/a.cpp", "");
  t.Write("test_c.cc", "");
  SearchRequest req;
  req.target = SearchTarget::kFiles;
  req.pattern = "**/test_*.cpp";
  EXPECT_EQ(RunSearch(t, req).files,
            (std::vector<std::string>{"src/deep/test_b.cpp", "src/test_a.cpp"}));
  req.pattern = "*.cc";
  EXPECT_EQ(RunSearch(t, req).files, std::vector<std::string>{"test_c.cc"});
  req.pattern = "deep/*.cpp";  // a slash pattern may match below the root (ripgrep's rule)
  EXPECT_EQ(RunSearch(t, req).files, std::vector<std::string>{"src/deep/test_b.cpp"});
}

TEST(SearchOutput, SensitiveFilesAreOmittedAndCountedWithoutBeingOpened) {
  TempTree t;
  t.Write(".env", "API_KEY=hit\n");
  t.Write("sub/.env.local", "hit\n");
  t.Write("a.txt", "hit\n");
  SearchRequest req = Content("hit");
  std::atomic<int> calls{0};
  req.is_sensitive = [&](std::string_view rel) {
    ++calls;
    return rel.ends_with(".env") || rel.ends_with(".env.local");
  };
  chmod((t.root() / ".env").c_str(), 0);  // opening it would fail loudly for non-root users
  auto out = RunSearch(t, req);
  ASSERT_EQ(out.matches.size(), 1U);
  EXPECT_EQ(out.matches[0].path, "a.txt");
  EXPECT_EQ(out.omitted, 2);
  EXPECT_EQ(out.files_searched, 1);
  EXPECT_EQ(calls.load(), 3);
}

TEST(SearchOutput, DeterministicOrderAcrossRunsAndThreadCounts) {
  TempTree t;
  for (int d = 0; d < 12; ++d) {
    for (int f = 0; f < 15; ++f) {
      std::string body;
      for (int l = 0; l < 30; ++l)
        body += (l % 4 == 0 ? "match " : "other ") + std::to_string(l) + "\n";
      t.Write("d" + std::to_string(d) + "/s" + std::to_string(f % 3) + "/f" + std::to_string(f) +
                  ".txt",
              body);
    }
  }
  auto signature = [&](unsigned threads, int64_t limit) {
    SearchRequest req = Content("match");
    req.threads = threads;
    req.limit = limit;
    auto out = RunSearch(t, req);
    std::string sig = std::to_string(out.total_count) + ";";
    for (const auto& m : out.matches) sig += m.path + ":" + std::to_string(m.line) + "\n";
    return sig;
  };
  for (int64_t limit : {7, 100, 100'000}) {
    const std::string first = signature(1, limit);
    for (int run = 0; run < 5; ++run) {
      EXPECT_EQ(signature(16, limit), first) << "limit " << limit;
      EXPECT_EQ(signature(3, limit), first) << "limit " << limit;
    }
  }
  EXPECT_NE(signature(1, 100'000).find("d0/s0/f0.txt:1\n"), std::string::npos);
}

TEST(SearchOutput, LargeFileChunksKeepLineNumbersAndContext) {
  // Over the whole-file threshold, so the file is read in 4 MiB chunks; needles are dense
  // around every multiple of 4 MiB so that some match and context windows straddle a chunk
  // edge whatever the exact edge is.
  constexpr size_t kChunk = size_t{4} << 20;
  std::string text;
  text.reserve(21 << 20);
  std::vector<int64_t> hits;
  int64_t line = 0;
  while (text.size() < (size_t{20} << 20)) {
    ++line;
    const size_t into = text.size() % kChunk;
    const bool near_edge = text.size() > kChunk / 2 && (into < 3000 || into > kChunk - 3000);
    if ((near_edge && line % 9 == 0) || line % 50'000 == 0 || line == 1) {
      text += "the needle is here (" + std::to_string(line) + ")\n";
      hits.push_back(line);
    } else {
      text += "0123456789 abcdefghij klmnopqrstuvwxyz ABCDEFGHIJ (" + std::to_string(line) + ")\n";
    }
  }
  const int64_t total_lines = line;
  std::vector<std::pair<int64_t, bool>> expected;  // the union of [hit-2, hit+2] windows
  for (size_t i = 0; i < hits.size(); ++i) {
    const int64_t from = std::max<int64_t>(1, hits[i] - 2);
    const int64_t to = std::min(total_lines, hits[i] + 2);
    for (int64_t l = from; l <= to; ++l) {
      if (!expected.empty() && expected.back().first >= l) {
        if (expected.back().first == l && l == hits[i]) expected.back().second = false;
        continue;
      }
      const bool is_hit = std::binary_search(hits.begin(), hits.end(), l);
      expected.emplace_back(l, !is_hit);
    }
  }
  TempTree t;
  t.Write("big.txt", text);
  SearchRequest req = Content("needle");
  req.context = 2;
  req.limit = 1'000'000;
  auto out = RunSearch(t, req);
  std::vector<std::pair<int64_t, bool>> got;
  for (const auto& m : out.matches) {
    got.emplace_back(m.line, m.is_context);
    EXPECT_NE(m.content.find("(" + std::to_string(m.line) + ")"), std::string::npos)
        << m.line << ": " << m.content;
  }
  EXPECT_EQ(got, expected);
  EXPECT_EQ(out.total_count, static_cast<int64_t>(expected.size()));

  req.context = 0;
  req.output_mode = SearchOutputMode::kCount;
  EXPECT_EQ(RunSearch(t, req).total_count, static_cast<int64_t>(hits.size()));
}

TEST(SearchOutput, SingleFile) {
  TempTree t;
  t.Write("one.txt", "a\nhit\n");
  UniqueFd fd(open((t.root() / "one.txt").c_str(), O_RDONLY | O_CLOEXEC));
  auto out = SearchFile(fd.get(), "docs/one.txt", Content("hit"));
  ASSERT_TRUE(out);
  ASSERT_EQ(out->matches.size(), 1U);
  EXPECT_EQ(out->matches[0].path, "docs/one.txt");
  EXPECT_EQ(out->matches[0].line, 2);
}

TEST(SearchOutput, DeadlineReturnsPartialResults) {
  TempTree t;
  t.Write("a.txt", "hit\n");
  SearchRequest req = Content("hit");
  req.deadline = std::chrono::steady_clock::now() - std::chrono::seconds(1);
  auto out = RunSearch(t, req);
  EXPECT_TRUE(out.truncated);
  EXPECT_EQ(out.limit_reason, "search_timeout");
}

TEST(SearchOutput, CancelledSearchIsAnError) {
  TempTree t;
  t.Write("a.txt", "hit\n");
  std::stop_source source;
  source.request_stop();
  SearchRequest req = Content("hit");
  req.cancel = source.get_token();
  UniqueFd fd = t.OpenRoot();
  auto out = SearchDirectory(fd.get(), req);
  ASSERT_FALSE(out);
  EXPECT_EQ(out.error().code(), StatusCode::kCancelled);
}

}  // namespace
}  // namespace talaria::search
