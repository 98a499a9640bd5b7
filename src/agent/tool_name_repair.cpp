#include "agent/tool_name_repair.h"

#include <algorithm>
#include <vector>

#include "talaria/base/ascii.h"
#include "talaria/base/strings.h"

namespace talaria::agent {
namespace {

// Names longer than this are not names; matching them would only cost time.
constexpr size_t kMaxNameChars = 128;

bool IsUpper(char c) { return c >= 'A' && c <= 'Z'; }
bool IsLower(char c) { return c >= 'a' && c <= 'z'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// `-`, space and `.` to `_`, runs collapsed, ends trimmed.
std::string Underscores(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '-' || c == ' ' || c == '.' || c == '_') {
      if (!out.empty() && out.back() != '_') out.push_back('_');
    } else {
      out.push_back(c);
    }
  }
  while (!out.empty() && out.back() == '_') out.pop_back();
  return out;
}

// ReadFile -> read_file, HTTPGet -> http_get (a capital after a lower-case letter or digit, or
// before a lower-case letter inside a run of capitals, starts a word).
std::string SnakeCase(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (IsUpper(c) && i > 0) {
      const char prev = s[i - 1];
      const bool next_lower = i + 1 < s.size() && IsLower(s[i + 1]);
      if (IsLower(prev) || IsDigit(prev) || (IsUpper(prev) && next_lower)) out.push_back('_');
    }
    out.push_back(c);
  }
  return AsciiLower(out);
}

// "terminal_tool" -> "terminal"; "terminaltool" -> "terminal" (a bare suffix only when
// something is left).
std::optional<std::string> StripToolSuffix(std::string_view s) {
  for (std::string_view suffix : {"_tool", "tool"}) {
    if (s.size() > suffix.size() && s.substr(s.size() - suffix.size()) == suffix) {
      std::string out(s.substr(0, s.size() - suffix.size()));
      while (!out.empty() && out.back() == '_') out.pop_back();
      if (!out.empty()) return out;
    }
  }
  return std::nullopt;
}

}  // namespace

double NameSimilarity(std::string_view a, std::string_view b) {
  if (a.empty() && b.empty()) return 1.0;
  if (a.size() > kMaxNameChars || b.size() > kMaxNameChars) return 0.0;
  std::vector<size_t> row(b.size() + 1, 0);
  for (char ca : a) {
    size_t diagonal = 0;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = ca == b[j - 1] ? diagonal + 1 : std::max(row[j], row[j - 1]);
      diagonal = above;
    }
  }
  return 2.0 * static_cast<double>(row[b.size()]) / static_cast<double>(a.size() + b.size());
}

std::optional<std::string> RepairToolName(std::string_view name,
                                          std::span<const std::string> offered,
                                          const ToolNameLookup& lookup) {
  if (std::string exact = lookup(name); !exact.empty()) return exact;
  // A leaked quote or tag ends the name (`patch"`, `terminal</tool_call>`).
  std::string_view cut = name.substr(0, std::min(name.find_first_of("\"'<>"), name.size()));
  cut = Trim(cut);
  if (cut.empty() || cut.size() > kMaxNameChars) return std::nullopt;

  // Deterministic spellings first, in the original's order; each is tried with the suffix
  // stripped too.
  std::vector<std::string> spellings = {std::string(cut), AsciiLower(cut),
                                        Underscores(AsciiLower(cut)), Underscores(SnakeCase(cut))};
  const size_t plain = spellings.size();
  for (size_t i = 0; i < plain; ++i) {
    std::optional<std::string> stripped = StripToolSuffix(spellings[i]);
    if (stripped) {
      spellings.push_back(*stripped);
      if (auto twice = StripToolSuffix(*stripped)) spellings.push_back(*twice);
    }
  }
  for (const std::string& spelling : spellings) {
    if (std::string exact = lookup(spelling); !exact.empty()) return exact;
  }

  // A unique fuzzy match against the normalized spelling.
  const std::string& normalized = spellings[3];
  double best = 0;
  double second = 0;
  const std::string* best_name = nullptr;
  for (const std::string& candidate : offered) {
    const double score = NameSimilarity(normalized, candidate);
    if (score > best) {
      second = best;
      best = score;
      best_name = &candidate;
    } else if (score > second) {
      second = score;
    }
  }
  if (best_name == nullptr || best < kFuzzyNameCutoff) return std::nullopt;
  if (second >= kFuzzyNameCutoff && best - second < kFuzzyNameMargin) return std::nullopt;
  return *best_name;
}

std::string UnknownToolMessage(std::string_view name, std::span<const std::string> offered) {
  std::string shown(name.substr(0, std::min<size_t>(name.size(), kMaxNameChars)));
  std::string message = "Tool '" + shown + "' does not exist. Available tools: ";
  message += offered.empty() ? std::string("(none)") : Join(offered, ", ");
  return message;
}

}  // namespace talaria::agent
