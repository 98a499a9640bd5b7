#include "talaria/core/budget.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <optional>

#include <nlohmann/json.hpp>

#include "talaria/base/file_io.h"
#include "talaria/base/log.h"
#include "talaria/base/paths.h"
#include "talaria/base/random.h"

namespace talaria {
namespace {

int64_t Clamp(int64_t v, int64_t lo, int64_t hi) { return std::max(lo, std::min(v, hi)); }

// Byte offset of the first `chars` code points of `text`.
size_t PrefixBytes(std::string_view text, int64_t chars) {
  size_t i = 0;
  int64_t seen = 0;
  while (i < text.size()) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) {
      if (seen == chars) break;
      ++seen;
    }
    ++i;
  }
  return i;
}

std::string Preview(std::string_view text, int64_t preview_chars) {
  std::string_view head = text.substr(0, PrefixBytes(text, preview_chars));
  if (head.size() < text.size()) {
    // Cut at the last line end when that keeps at least half the preview.
    size_t nl = head.rfind('\n');
    if (nl != std::string_view::npos && nl > head.size() / 2) head = head.substr(0, nl);
  }
  return std::string(head);
}

std::string HumanSize(size_t bytes) {
  char buf[32];
  if (bytes >= 1024 * 1024) {
    std::snprintf(buf, sizeof buf, "%.1f MB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  } else {
    std::snprintf(buf, sizeof buf, "%.1f KB", static_cast<double>(bytes) / 1024.0);
  }
  return buf;
}

std::string SafeStem(std::string_view call_id) {
  std::string stem;
  for (char c : call_id.substr(0, 120)) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-' || c == '.';
    stem += ok ? c : '_';
  }
  if (stem.empty() || stem[0] == '.') stem = "result" + stem;
  return stem;
}

// Creates (or checks) a private directory: ours, not a symlink, no group/other access.
bool EnsurePrivateDir(const std::string& dir) {
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return false;
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid())
    return false;
  if ((st.st_mode & 077) != 0 && ::chmod(dir.c_str(), 0700) != 0) return false;
  return true;
}

}  // namespace

std::optional<std::string> WriteSpillFile(const BudgetConfig& config, std::string_view call_id,
                                          std::string_view content) {
  std::string dir = config.spill_dir;
  if (dir.empty()) {
    const std::string home = TalariaHome();
    if (!EnsurePrivateDir(home)) return std::nullopt;
    dir = home + "/spill";
  }
  if (!EnsurePrivateDir(dir)) return std::nullopt;
  const std::string suffix = RandomHex(8);
  const std::string path = dir + "/" + SafeStem(call_id) + "-" + suffix + ".txt";
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return std::nullopt;
  struct stat st {};
  const bool complete = WriteAll(fd, content).ok() && ::fstat(fd, &st) == 0 &&
                        static_cast<size_t>(st.st_size) == content.size();
  ::close(fd);
  if (!complete) {
    // Fail closed: a short file would make the model page through wrong data.
    ::unlink(path.c_str());
    return std::nullopt;
  }
  return path;
}

namespace {

// MCP envelopes {"result": text, "structuredContent"?: ...} spill as pageable text.
std::string PageableText(std::string_view tool, const std::string& text) {
  if (!tool.starts_with("mcp_") || text.empty() || text[0] != '{') return text;
  auto parsed = ParseJson(text);
  if (!parsed || !parsed->is_object()) return text;
  auto result = parsed->find("result");
  if (result == parsed->end() || !result->is_string()) return text;
  std::string out = result->get<std::string>();
  for (const char* key : {"structuredContent", "_meta"}) {
    if (auto it = parsed->find(key); it != parsed->end()) {
      out += "\n\n--- ";
      out += key;
      out += " ---\n";
      out += it->dump(2, ' ', false, Json::error_handler_t::replace);
    }
  }
  return out;
}

// How the model reads a spill file back, as the tool that can declared it; static storage.
std::atomic<const char*> g_paging_hint{nullptr};

std::string PagingHint() {
  const char* hint = g_paging_hint.load();
  return hint != nullptr ? hint : "Read it in parts (an offset and a limit)";
}

void Spill(const BudgetConfig& config, std::string_view tool, std::string_view call_id,
           ToolResult& result) {
  const std::string content = PageableText(tool, result.text);
  const int64_t chars = CountChars(content);
  const std::string preview = Preview(content, config.preview_chars);
  std::string block;
  if (auto path = WriteSpillFile(config, call_id, content)) {
    block = "<persisted-output>\nThis tool result was too large (" + std::to_string(chars) +
            " characters, " + HumanSize(content.size()) + ").\nFull output saved to: " + *path +
            "\n" + PagingHint() + "; do not re-request the full output.\n\nPreview (first " +
            std::to_string(CountChars(preview)) + " chars):\n" + preview +
            "\n...\n</persisted-output>";
  } else {
    LogWarn("could not write a spill file; truncating the result inline");
    block = preview + "\n...\n[Truncated: tool response was " + std::to_string(chars) +
            " chars. Full output could not be saved.]";
  }
  result.text = std::move(block);
}

}  // namespace

void DeclareSpillPagingHint(const char* hint) { g_paging_hint.store(hint); }

BudgetConfig BudgetConfig::ForContextWindow(int64_t context_tokens) {
  BudgetConfig config;
  if (context_tokens <= 0) return config;
  const int64_t window_chars = context_tokens * kCharsPerToken;
  config.default_result_chars = Clamp(window_chars * 15 / 100, 8'000, kDefaultResultChars);
  config.turn_budget_chars = Clamp(window_chars * 30 / 100, 16'000, kDefaultTurnBudgetChars);
  return config;
}

int64_t CountChars(std::string_view utf8) {
  int64_t n = 0;
  for (char c : utf8) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

int64_t ResultThreshold(const BudgetConfig& config, const ResultOrigin& origin) {
  if (origin.never_spill) return -1;
  int64_t threshold = config.default_result_chars;
  if (auto it = config.tool_overrides.find(origin.tool); it != config.tool_overrides.end()) {
    threshold = it->second;
  } else if (origin.tool.starts_with("mcp_")) {
    threshold = config.mcp_result_chars;
  } else if (origin.registered_max > 0) {
    threshold = origin.registered_max;
  }
  return std::min(threshold, config.default_result_chars);
}

void ApplyResultBudget(const BudgetConfig& config, const ResultOrigin& origin,
                       std::string_view call_id, ToolResult& result) {
  const int64_t threshold = ResultThreshold(config, origin);
  if (threshold < 0) return;
  // Bytes bound chars from above: most results are decided without counting.
  if (static_cast<int64_t>(result.text.size()) <= threshold) return;
  if (CountChars(result.text) <= threshold) return;
  Spill(config, origin.tool, call_id, result);
}

void EnforceTurnBudget(const BudgetConfig& config, std::span<TurnResult> results) {
  int64_t total = 0;
  std::vector<std::pair<int64_t, size_t>> candidates;  // (chars, index)
  for (size_t i = 0; i < results.size(); ++i) {
    const int64_t chars = CountChars(results[i].result->text);
    total += chars;
    const bool persisted = results[i].result->text.starts_with("<persisted-output>");
    if (!persisted && !results[i].never_spill) candidates.emplace_back(chars, i);
  }
  std::sort(candidates.begin(), candidates.end(), std::greater<>());
  for (const auto& [chars, index] : candidates) {
    if (total <= config.turn_budget_chars) break;
    ToolResult& r = *results[index].result;
    Spill(config, results[index].tool, results[index].call_id, r);
    total += CountChars(r.text) - chars;
  }
}

}  // namespace talaria
