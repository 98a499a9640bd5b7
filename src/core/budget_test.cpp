// Budget: per-result spill to a private file, per-turn budget, context-window scaling, and the
// inline-truncation fallback when no spill file can be written safely.
#include "talaria/core/budget.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/file_text.h"
#include "support/temp_dir.h"

namespace talaria {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// A fresh directory under /tmp, removed with everything in it at the end of the test.
using test_support::TempDir;

std::string ReadWhole(const std::string& path) { return test_support::ReadWholeFile(path); }

unsigned ModeOf(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return 0xFFFF;
  return st.st_mode & 07777;
}

// The path named by a <persisted-output> block.
std::string SpillPathOf(const std::string& block) {
  constexpr std::string_view kLead = "Full output saved to: ";
  const size_t at = block.find(kLead);
  if (at == std::string::npos) {
    ADD_FAILURE() << "no spill path in:\n" << block.substr(0, 500);
    return {};
  }
  const size_t start = at + kLead.size();
  return block.substr(start, block.find('\n', start) - start);
}

// The preview of a <persisted-output> block.
std::string PreviewOf(const std::string& block) {
  constexpr std::string_view kLead = "chars):\n";
  constexpr std::string_view kTail = "\n...\n</persisted-output>";
  const size_t at = block.find(kLead);
  if (at == std::string::npos || !block.ends_with(kTail)) {
    ADD_FAILURE() << "no preview in:\n" << block.substr(0, 500);
    return {};
  }
  const size_t start = at + kLead.size();
  return block.substr(start, block.size() - kTail.size() - start);
}

// `count` numbered lines, each `width` code points of `fill` after the number (UTF-8 allowed).
std::string Lines(int count, std::string_view fill = "x", int width = 60) {
  std::string out;
  for (int i = 0; i < count; ++i) {
    out += "line " + std::to_string(i) + ": ";
    for (int k = 0; k < width; ++k) out += fill;
    out += '\n';
  }
  return out;
}

// The start of a long text, for failure messages that stay readable.
std::string Head(const std::string& text) { return text.substr(0, 300); }

bool IsPersisted(const std::string& text) {
  return text.starts_with("<persisted-output>") && text.ends_with("</persisted-output>");
}

BudgetConfig ConfigIn(const TempDir& dir) {
  BudgetConfig config;
  config.spill_dir = dir.path() + "/spill";
  return config;
}

// --- the per-result spill ------------------------------------------------------------------

TEST(Budget, SpillsAnOversizedResultToAPrivateFileHoldingTheFullText) {
  TempDir dir;
  const BudgetConfig config = ConfigIn(dir);
  // Over the 100,000-char default, with multi-byte text in the middle.
  const std::string text =
      Lines(1000) + Lines(400, "\xC3\xA9") + Lines(400, "\xF0\x9F\x98\x80") + Lines(200);
  ASSERT_GT(CountChars(text), kDefaultResultChars);
  ToolResult r = ToolResult::Text(text);
  ApplyResultBudget(config, {"runner", -1}, "call_1", r);

  EXPECT_EQ(r.status, CallStatus::kOk);
  ASSERT_TRUE(IsPersisted(r.text)) << Head(r.text);
  EXPECT_THAT(r.text, HasSubstr(std::to_string(CountChars(text)) + " characters"));
  EXPECT_THAT(r.text, HasSubstr("offset"));
  EXPECT_THAT(r.text, HasSubstr("limit"));
  EXPECT_THAT(r.text, HasSubstr("do not re-request the full output"));
  EXPECT_LT(r.text.size(), 8000u);

  const std::string path = SpillPathOf(r.text);
  EXPECT_EQ(fs::path(path).parent_path(), fs::path(config.spill_dir));
  EXPECT_TRUE(ReadWhole(path) == text) << "the spill file holds the full text byte for byte";
  EXPECT_EQ(ModeOf(path), 0600u);
  EXPECT_EQ(ModeOf(config.spill_dir), 0700u);
}

TEST(Budget, GivesTwoSpillsOfTheSameCallDifferentUnguessableNames) {
  TempDir dir;
  const BudgetConfig config = ConfigIn(dir);
  ToolResult first = ToolResult::Text(std::string(150'000, 'a'));
  ToolResult second = ToolResult::Text(std::string(150'000, 'b'));
  ApplyResultBudget(config, {"runner", -1}, "call_same", first);
  ApplyResultBudget(config, {"runner", -1}, "call_same", second);
  const std::string a = SpillPathOf(first.text);
  const std::string b = SpillPathOf(second.text);
  EXPECT_NE(a, b);
  EXPECT_NE(fs::path(a).filename(), "call_same.txt") << "not derivable from the call id alone";
  EXPECT_EQ(ReadWhole(a), std::string(150'000, 'a'));
  EXPECT_EQ(ReadWhole(b), std::string(150'000, 'b'));
}

TEST(Budget, KeepsSpillFilesInsideTheSpillDirectoryWhateverTheCallId) {
  TempDir dir;
  const BudgetConfig config = ConfigIn(dir);
  const std::vector<std::string_view> call_ids = {
      "../../escape", "a/b/c", "", ".hidden", "..", "x\ny", std::string_view("nul\0id", 6),
      "/etc/passwd"};
  for (std::string_view call_id : call_ids) {
    ToolResult r = ToolResult::Text(std::string(120'000, 'z'));
    ApplyResultBudget(config, {"runner", -1}, call_id, r);
    const std::string path = SpillPathOf(r.text);
    EXPECT_EQ(fs::path(path).parent_path(), fs::path(config.spill_dir)) << path;
    const std::string name = fs::path(path).filename().string();
    EXPECT_FALSE(name.starts_with(".")) << name;
    EXPECT_EQ(
        name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-"),
        std::string::npos)
        << name;
    EXPECT_EQ(ReadWhole(path).size(), 120'000u);
  }
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()), 1)
      << "nothing was written beside the spill directory";
}

TEST(Budget, TightensAnExistingSpillDirectoryToOwnerOnly) {
  TempDir dir;
  const BudgetConfig config = ConfigIn(dir);
  ASSERT_EQ(::mkdir(config.spill_dir.c_str(), 0755), 0);
  ASSERT_EQ(::chmod(config.spill_dir.c_str(), 0755), 0);
  ToolResult r = ToolResult::Text(std::string(120'000, 'q'));
  ApplyResultBudget(config, {"runner", -1}, "call_1", r);
  EXPECT_TRUE(IsPersisted(r.text)) << Head(r.text);
  EXPECT_EQ(ModeOf(config.spill_dir), 0700u);
}

TEST(Budget, SpillsUnderTalariaHomeWhenNoSpillDirIsConfigured) {
  TempDir dir;
  const std::string home = dir.path() + "/home";
  const char* old = std::getenv("TALARIA_HOME");
  const std::optional<std::string> saved = old ? std::optional<std::string>(old) : std::nullopt;
  ASSERT_EQ(::setenv("TALARIA_HOME", home.c_str(), 1), 0);
  ToolResult r = ToolResult::Text(std::string(120'000, 'h'));
  ApplyResultBudget(BudgetConfig{}, {"runner", -1}, "call_home", r);
  if (saved) {
    ::setenv("TALARIA_HOME", saved->c_str(), 1);
  } else {
    ::unsetenv("TALARIA_HOME");
  }
  const std::string path = SpillPathOf(r.text);
  EXPECT_EQ(fs::path(path).parent_path(), fs::path(home + "/spill"));
  EXPECT_EQ(ModeOf(home + "/spill"), 0700u);
  EXPECT_EQ(ModeOf(path), 0600u);
}

TEST(Budget, NeverCollidesWhenManyThreadsSpillTheSameCall) {
  TempDir dir;
  const BudgetConfig config = ConfigIn(dir);
  constexpr int kThreads = 8;
  std::vector<std::string> paths(kThreads);
  {
    std::vector<std::jthread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        ToolResult r = ToolResult::Text(std::string(110'000, static_cast<char>('a' + t)));
        ApplyResultBudget(config, {"runner", -1}, "call_race", r);
        paths[t] = SpillPathOf(r.text);
      });
    }
  }
  EXPECT_EQ(std::set<std::string>(paths.begin(), paths.end()).size(), size_t{kThreads});
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(ReadWhole(paths[t]), std::string(110'000, static_cast<char>('a' + t)));
  }
}

// --- the preview -----------------------------------------------------------------------------

TEST(Budget, PreviewIsAtMostFifteenHundredCharsAndEndsAtALineEnd) {
  struct Case {
    const char* name;
    std::string text;
  };
  const std::vector<Case> cases = {
      {"ascii lines", Lines(2000)},
      {"two-byte lines", Lines(2000, "\xC3\xA9")},
      {"emoji lines", Lines(3000, "\xF0\x9F\x98\x80", 37)},
      {"uneven lines",
       [] {
         std::string t;
         for (int i = 0; i < 20000; ++i)
           t += std::string(static_cast<size_t>(i * 7 % 97), 'k') + "\n";
         return t;
       }()},
  };
  for (const Case& c : cases) {
    TempDir dir;
    ToolResult r = ToolResult::Text(c.text);
    ApplyResultBudget(ConfigIn(dir), {"runner", -1}, "call_p", r);
    ASSERT_TRUE(IsPersisted(r.text)) << c.name << ": " << Head(r.text);
    const std::string preview = PreviewOf(r.text);
    EXPECT_LE(CountChars(preview), kDefaultPreviewChars) << c.name;
    EXPECT_GE(CountChars(preview), kDefaultPreviewChars / 2) << c.name;
    ASSERT_TRUE(c.text.starts_with(preview)) << c.name;
    ASSERT_LT(preview.size(), c.text.size()) << c.name;
    EXPECT_EQ(c.text[preview.size()], '\n') << c.name << ": the cut falls at a line end";
    EXPECT_NE(r.text.find("Preview (first " + std::to_string(CountChars(preview)) + " chars)"),
              std::string::npos)
        << c.name;
  }
}

TEST(Budget, PreviewOfTextWithoutLineBreaksIsCutOnACharacterBoundary) {
  TempDir dir;
  std::string text;
  for (int i = 0; i < 60'000; ++i) text += "\xE6\x97\xA5";  // "日", three bytes
  ToolResult r = ToolResult::Text(text + text);
  ApplyResultBudget(ConfigIn(dir), {"runner", -1}, "call_p", r);
  const std::string preview = PreviewOf(r.text);
  EXPECT_EQ(CountChars(preview), kDefaultPreviewChars);
  EXPECT_EQ(preview.size(), static_cast<size_t>(3 * kDefaultPreviewChars));
  EXPECT_TRUE(text.starts_with(preview));
}

TEST(Budget, TheSpillNoteSaysHowTheDeclaringToolPagesIt) {
  TempDir dir;
  static const char kHint[] = "Page it with the_pager using offset and limit";
  DeclareSpillPagingHint(kHint);
  ToolResult r = ToolResult::Text(Lines(5000));
  ApplyResultBudget(ConfigIn(dir), {"runner", 1000}, "call_h", r);
  ASSERT_TRUE(IsPersisted(r.text)) << Head(r.text);
  EXPECT_THAT(r.text, HasSubstr(std::string(kHint) + "; do not re-request the full output."));
}

// --- thresholds --------------------------------------------------------------------------------

TEST(Budget, ANeverSpillToolIsNeverSpilled) {
  TempDir dir;
  BudgetConfig config = ConfigIn(dir);
  config.tool_overrides["reader"] = 10;
  EXPECT_EQ(ResultThreshold(config, {"reader", 5, true}), -1);
  EXPECT_EQ(ResultThreshold(config, {"reader", 5, false}), 10) << "the flag, not the name, pins it";
  const std::string text = Lines(5000);
  ToolResult r = ToolResult::Text(text);
  ApplyResultBudget(config, {"reader", 100'000, true}, "call_r", r);
  EXPECT_TRUE(r.text == text);
  EXPECT_FALSE(fs::exists(config.spill_dir)) << "no spill file for a never-spill tool";
}

TEST(Budget, ResolvesThresholdsInTheReferenceOrderCappedAtTheDefault) {
  struct Case {
    const char* name;
    std::string tool;
    int64_t registered_max;
    std::map<std::string, int64_t, std::less<>> overrides;
    int64_t default_chars;
    int64_t want;
  };
  const std::vector<Case> cases = {
      {"default", "runner", -1, {}, 100'000, 100'000},
      {"registered max", "runner", 30'000, {}, 100'000, 30'000},
      {"registered max capped", "runner", 500'000, {}, 100'000, 100'000},
      {"override beats registered", "runner", 30'000, {{"runner", 20'000}}, 100'000, 20'000},
      {"override capped", "runner", -1, {{"runner", 400'000}}, 100'000, 100'000},
      {"override of another tool", "runner", 30'000, {{"editor", 20'000}}, 100'000, 30'000},
      {"mcp prefix", "mcp_github_search", -1, {}, 100'000, 50'000},
      {"mcp prefix beats registered", "mcp_github_search", 10'000, {}, 100'000, 50'000},
      {"override beats mcp prefix",
       "mcp_github_search",
       -1,
       {{"mcp_github_search", 5'000}},
       100'000,
       5'000},
      {"mcp capped by a smaller default", "mcp_docs_fetch", -1, {}, 40'000, 40'000},
      {"registered capped by a smaller default", "fetcher", 90'000, {}, 40'000, 40'000},
      {"not an mcp prefix", "mcpx_tool", -1, {}, 100'000, 100'000},
  };
  for (const Case& c : cases) {
    BudgetConfig config;
    config.default_result_chars = c.default_chars;
    config.tool_overrides = c.overrides;
    EXPECT_EQ(ResultThreshold(config, {c.tool, c.registered_max}), c.want) << c.name;
  }
}

TEST(Budget, SpillsOnlyWhenTheCodePointCountExceedsTheThreshold) {
  TempDir dir;
  const BudgetConfig config = ConfigIn(dir);
  struct Case {
    const char* name;
    std::string text;
    int64_t registered_max;
    bool spills;
  };
  std::string two_byte;
  for (int i = 0; i < 60'000; ++i) two_byte += "\xC3\xA9";  // 120,000 bytes, 60,000 chars
  const std::vector<Case> cases = {
      {"exactly the default", std::string(100'000, 'x'), -1, false},
      {"one over the default", std::string(100'001, 'x'), -1, true},
      {"many bytes, few chars", two_byte, -1, false},
      {"exactly a registered max", std::string(5'000, 'x'), 5'000, false},
      {"one over a registered max", std::string(5'001, 'x'), 5'000, true},
      {"multi-byte over a registered max", two_byte, 59'999, true},
  };
  for (const Case& c : cases) {
    ToolResult r = ToolResult::Text(c.text);
    ApplyResultBudget(config, {"runner", c.registered_max}, "call_t", r);
    if (c.spills) {
      EXPECT_TRUE(IsPersisted(r.text)) << c.name << ": " << Head(r.text);
    } else {
      EXPECT_TRUE(r.text == c.text) << c.name << ": " << Head(r.text);
    }
  }
}

TEST(Budget, CountCharsCountsCodePoints) {
  struct Case {
    std::string_view text;
    int64_t want;
  };
  const std::vector<Case> cases = {
      {"", 0},
      {"abc", 3},
      {"\xC3\xA9", 1},                  // é
      {"\xE6\x97\xA5\xE6\x9C\xAC", 2},  // 日本
      {"\xF0\x9F\x98\x80", 1},          // 😀
      {"a\xC3\xA9\xE6\x97\xA5\xF0\x9F\x98\x80z", 5},
      {"line\nnext\ttab", 13},
      {std::string_view("nul\0x", 5), 5},
  };
  for (const Case& c : cases) EXPECT_EQ(CountChars(c.text), c.want) << c.text;
}

// --- the per-turn budget -----------------------------------------------------------------------

struct Turn {
  std::vector<std::string> tools;
  std::vector<std::string> ids;
  std::vector<ToolResult> results;
  std::vector<bool> never_spill;

  void Add(std::string tool, size_t chars, char fill, bool pinned = false) {
    tools.push_back(std::move(tool));
    ids.push_back("call_" + std::to_string(ids.size()));
    results.push_back(ToolResult::Text(std::string(chars, fill)));
    never_spill.push_back(pinned);
  }
  std::vector<TurnResult> View() {
    std::vector<TurnResult> out;
    for (size_t i = 0; i < results.size(); ++i) {
      out.push_back({tools[i], ids[i], &results[i], never_spill[i]});
    }
    return out;
  }
  bool Spilled(size_t i) const { return results[i].text.starts_with("<persisted-output>"); }
  int64_t Total() const {
    int64_t total = 0;
    for (const auto& r : results) total += CountChars(r.text);
    return total;
  }
};

TEST(Budget, TurnBudgetSpillsTheLargestResultsFirstUntilTheTurnFits) {
  TempDir dir;
  const BudgetConfig config = ConfigIn(dir);
  Turn turn;
  turn.Add("runner", 80'000, 'a');
  turn.Add("fetcher", 95'000, 'b');
  turn.Add("finder", 70'000, 'c');
  turn.Add("editor", 60'000, 'd');  // 305,000 in all
  auto view = turn.View();
  EnforceTurnBudget(config, view);
  EXPECT_TRUE(turn.Spilled(1)) << "the largest goes first";
  EXPECT_TRUE(turn.Spilled(0)) << "still over after one spill: the next largest follows";
  EXPECT_EQ(turn.results[2].text, std::string(70'000, 'c')) << "under budget now: left alone";
  EXPECT_EQ(turn.results[3].text, std::string(60'000, 'd'));
  EXPECT_LE(turn.Total(), kDefaultTurnBudgetChars);
  EXPECT_EQ(ReadWhole(SpillPathOf(turn.results[1].text)), std::string(95'000, 'b'));
  EXPECT_EQ(ReadWhole(SpillPathOf(turn.results[0].text)), std::string(80'000, 'a'));
}

TEST(Budget, TurnBudgetLeavesATurnThatFitsAlone) {
  TempDir dir;
  const BudgetConfig config = ConfigIn(dir);
  Turn turn;
  turn.Add("runner", 90'000, 'a');
  turn.Add("editor", 90'000, 'b');
  turn.Add("searcher", 20'000, 'c');  // exactly 200,000
  auto view = turn.View();
  EnforceTurnBudget(config, view);
  for (size_t i = 0; i < turn.results.size(); ++i) EXPECT_FALSE(turn.Spilled(i)) << i;
  EXPECT_FALSE(fs::exists(config.spill_dir));
}

TEST(Budget, TurnBudgetNeverSpillsANeverSpillToolOrAnAlreadyPersistedResult) {
  TempDir dir;
  const BudgetConfig config = ConfigIn(dir);
  Turn turn;
  turn.Add("reader", 150'000, 'r', /*pinned=*/true);
  turn.Add("runner", 40'000, 't');
  turn.Add("editor", 30'000, 'p');  // 220,000: over, but only the small ones may move
  auto view = turn.View();
  EnforceTurnBudget(config, view);
  EXPECT_EQ(turn.results[0].text, std::string(150'000, 'r'));
  EXPECT_TRUE(turn.Spilled(1));
  EXPECT_FALSE(turn.Spilled(2)) << "170,000 plus a preview fits";

  const std::string persisted = turn.results[1].text;
  auto again = turn.View();
  EnforceTurnBudget(config, again);
  EXPECT_EQ(turn.results[1].text, persisted) << "a persisted block is not spilled again";
}

// --- context-window scaling ----------------------------------------------------------------------

TEST(Budget, ScalesBothBudgetsToTheContextWindow) {
  struct Case {
    int64_t tokens;
    int64_t per_result;
    int64_t per_turn;
  };
  const std::vector<Case> cases = {
      {0, 100'000, 200'000},                                  // unknown window: defaults
      {-1, 100'000, 200'000},        {4'000, 8'000, 16'000},  // 16,000 chars: both floors
      {16'000, 9'600, 19'200},                                // 64,000 chars: 15 % / 30 %
      {32'000, 19'200, 38'400},      {128'000, 76'800, 153'600},
      {160'000, 96'000, 192'000},    {200'000, 100'000, 200'000},  // 800,000 chars: both caps
      {1'000'000, 100'000, 200'000},
  };
  for (const Case& c : cases) {
    const BudgetConfig config = BudgetConfig::ForContextWindow(c.tokens);
    EXPECT_EQ(config.default_result_chars, c.per_result) << c.tokens;
    EXPECT_EQ(config.turn_budget_chars, c.per_turn) << c.tokens;
    EXPECT_EQ(config.preview_chars, kDefaultPreviewChars) << c.tokens;
    EXPECT_EQ(config.mcp_result_chars, kDefaultMcpResultChars) << c.tokens;
  }
  // The scaled per-result budget caps every threshold, the MCP one included.
  const BudgetConfig small = BudgetConfig::ForContextWindow(16'000);
  EXPECT_EQ(ResultThreshold(small, {"mcp_docs_fetch", -1}), 9'600);
  EXPECT_EQ(ResultThreshold(small, {"runner", 50'000}), 9'600);
}

// --- when no spill file can be written
// -------------------------------------------------------------

TEST(Budget, TruncatesInlineWhenTheSpillDirectoryCannotBeUsed) {
  enum class Kind { kRegularFile, kSymlinkToDir, kDanglingSymlink };
  for (Kind kind : {Kind::kRegularFile, Kind::kSymlinkToDir, Kind::kDanglingSymlink}) {
    TempDir dir;
    BudgetConfig config = ConfigIn(dir);
    const std::string elsewhere = dir.path() + "/elsewhere";
    switch (kind) {
      case Kind::kRegularFile:
        std::ofstream(config.spill_dir) << "not a directory";
        break;
      case Kind::kSymlinkToDir:
        ASSERT_EQ(::mkdir(elsewhere.c_str(), 0700), 0);
        ASSERT_EQ(::symlink(elsewhere.c_str(), config.spill_dir.c_str()), 0);
        break;
      case Kind::kDanglingSymlink:
        ASSERT_EQ(::symlink(elsewhere.c_str(), config.spill_dir.c_str()), 0);
        break;
    }
    const std::string text = Lines(3000);
    ToolResult r = ToolResult::Text(text);
    ApplyResultBudget(config, {"runner", -1}, "call_x", r);
    const auto label = static_cast<int>(kind);
    EXPECT_EQ(r.text.find("<persisted-output>"), std::string::npos)
        << label << ": " << Head(r.text);
    EXPECT_NE(
        r.text.find("[Truncated: tool response was " + std::to_string(CountChars(text)) + " chars"),
        std::string::npos)
        << label << ": " << r.text.substr(r.text.size() > 300 ? r.text.size() - 300 : 0);
    EXPECT_LT(CountChars(r.text), 2 * kDefaultPreviewChars) << label;
    const std::string head = r.text.substr(0, r.text.find("\n...\n"));
    EXPECT_TRUE(text.starts_with(head)) << label << ": the inline text starts with the preview";
    EXPECT_GE(CountChars(head), kDefaultPreviewChars / 2) << label;
    switch (kind) {
      case Kind::kRegularFile:
        EXPECT_EQ(ReadWhole(config.spill_dir), "not a directory");
        break;
      case Kind::kSymlinkToDir:
        EXPECT_TRUE(fs::is_empty(elsewhere)) << "nothing is written through the symlink";
        EXPECT_EQ(ModeOf(elsewhere), 0700u);
        break;
      case Kind::kDanglingSymlink:
        EXPECT_FALSE(fs::exists(elsewhere)) << "the symlink's target is not created";
        break;
    }
  }
}

// --- MCP envelopes
// ------------------------------------------------------------------------------------

TEST(Budget, UnwrapsAnMcpEnvelopeToPageableTextBeforeSpilling) {
  TempDir dir;
  const BudgetConfig config = ConfigIn(dir);
  const std::string inner = Lines(900, "m");  // over the 50,000 MCP threshold
  Json envelope = Json::object();
  envelope["result"] = inner;
  envelope["structuredContent"] = Json::object({{"rows", 900}, {"source", "docs"}});
  ToolResult r = ToolResult::Text(DumpJson(envelope));
  ApplyResultBudget(config, {"mcp_docs_fetch", -1}, "call_m", r);
  ASSERT_TRUE(IsPersisted(r.text)) << Head(r.text);
  const std::string spilled = ReadWhole(SpillPathOf(r.text));
  EXPECT_TRUE(spilled.starts_with(inner)) << "the file starts with the unwrapped text, not JSON";
  EXPECT_THAT(spilled.substr(inner.size()), HasSubstr("structuredContent"));
  EXPECT_THAT(spilled.substr(inner.size()), HasSubstr("\"rows\": 900"));
  EXPECT_TRUE(inner.starts_with(PreviewOf(r.text))) << "the preview shows the unwrapped text";
}

TEST(Budget, SpillsAnMcpResultThatIsNotAnEnvelopeAsItIs) {
  const std::string pad(60'000, 'p');
  struct Case {
    const char* name;
    std::string text;
  };
  const std::vector<Case> cases = {
      {"plain text", pad},
      {"an object without result", R"({"items": [1, 2, 3], "pad": ")" + pad + R"("})"},
      {"a result that is not a string", R"({"result": {"pad": ")" + pad + R"("}})"},
      // Regression: a number beyond the range of a double made the JSON parser throw out of
      // ParseJson (nlohmann out_of_range 406), through the budget and the dispatcher.
      {"a number beyond double range", R"({"result": "x", "n": 1e999, "pad": ")" + pad + R"("})"},
      {"a huge integer",
       R"({"result": "x", "n": )" + std::string(400, '9') + R"(, "pad": ")" + pad + R"("})"},
  };
  for (const Case& c : cases) {
    TempDir dir;
    ToolResult r = ToolResult::Text(c.text);
    EXPECT_NO_THROW(ApplyResultBudget(ConfigIn(dir), {"mcp_docs_list", -1}, "call_m", r)) << c.name;
    ASSERT_TRUE(IsPersisted(r.text)) << c.name << ": " << Head(r.text);
    EXPECT_TRUE(ReadWhole(SpillPathOf(r.text)) == c.text) << c.name;
  }
}

}  // namespace
}  // namespace talaria
