// Result budgets: how much of a tool's output reaches the model.
//
// Per result: a text over its tool's threshold is written whole to a private spill file and
// replaced by a <persisted-output> block (size, path, how to page it with read_file, a preview).
// Per turn: when a batch's results together exceed the turn budget, the largest are spilled
// first. A tool that reads spill files back never spills (that would loop: persist -> read ->
// persist): it declares ToolSpec::never_spill.
// Thread-safety: free functions; spill files get unique unpredictable names, so concurrent
// calls never collide.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "talaria/core/tool_result.h"

namespace talaria {

inline constexpr int64_t kDefaultResultChars = 100'000;
inline constexpr int64_t kDefaultTurnBudgetChars = 200'000;
inline constexpr int64_t kDefaultPreviewChars = 1'500;
inline constexpr int64_t kDefaultMcpResultChars = 50'000;
inline constexpr int64_t kCharsPerToken = 4;

struct BudgetConfig {
  int64_t default_result_chars = kDefaultResultChars;
  int64_t turn_budget_chars = kDefaultTurnBudgetChars;
  int64_t preview_chars = kDefaultPreviewChars;
  int64_t mcp_result_chars = kDefaultMcpResultChars;
  std::map<std::string, int64_t, std::less<>> tool_overrides;
  std::string spill_dir;  // empty: $TALARIA_HOME/spill

  // Scales both budgets to a model's context window: per result 15 % of it (floor 8,000,
  // cap 100,000 chars), per turn 30 % (floor 16,000, cap 200,000). tokens <= 0: defaults.
  static BudgetConfig ForContextWindow(int64_t context_tokens);
};

// Length as the model counts it: Unicode code points of UTF-8 text.
int64_t CountChars(std::string_view utf8);

// What the budget knows of the tool that made a result.
struct ResultOrigin {
  std::string_view tool;
  int64_t registered_max = -1;  // the tool's max_result_chars; -1 when unset
  bool never_spill = false;     // the tool's ToolSpec::never_spill
};

// The threshold for a result: none when it never spills (returns -1) -> config override ->
// MCP prefix -> the tool's registered max -> default; each capped at the default.
int64_t ResultThreshold(const BudgetConfig& config, const ResultOrigin& origin);

// Spills `result.text` when it is longer than its threshold. Leaves it alone otherwise. When
// no spill file can be written safely, truncates inline with a note instead.
void ApplyResultBudget(const BudgetConfig& config, const ResultOrigin& origin,
                       std::string_view call_id, ToolResult& result);

struct TurnResult {
  std::string_view tool;
  std::string_view call_id;
  ToolResult* result;
  bool never_spill = false;  // the tool's ToolSpec::never_spill
};

// Declares how a model pages through a spill file (the spill note says it); the tool that reads
// spill files declares it from a static initializer. REQUIRES: `hint` has static storage.
void DeclareSpillPagingHint(const char* hint);

// Writes `content` to a fresh 0600 file with an unguessable name in the spill directory
// (config.spill_dir, else $TALARIA_HOME/spill; created private) and returns its path; nullopt
// when it cannot be written whole. `call_id` becomes the file name's stem (sanitised).
std::optional<std::string> WriteSpillFile(const BudgetConfig& config, std::string_view call_id,
                                          std::string_view content);

// Spills the largest results of one turn until their total fits the turn budget.
void EnforceTurnBudget(const BudgetConfig& config, std::span<TurnResult> results);

}  // namespace talaria
