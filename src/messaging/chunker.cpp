// Message splitting (chunker.h).
#include "messaging/chunker.h"

#include <algorithm>
#include <string>

#include "talaria/base/utf8.h"

namespace talaria::messaging {
namespace {

// Room kept in every part for " (99/99)" and for closing a fence ("\n```").
constexpr size_t kIndicatorRoom = 10;
constexpr size_t kFenceCloseRoom = 4;

size_t UnitsOf(std::string_view seq, LengthUnit unit) {
  switch (unit) {
    case LengthUnit::kBytes:
      return seq.size();
    case LengthUnit::kUtf16:
      return seq.size() == 4 ? 2 : 1;  // astral code points are a surrogate pair
    case LengthUnit::kCodePoints:
      return 1;
  }
  return 1;
}

size_t SequenceLength(std::string_view rest) {
  const size_t n = Utf8SequenceLength(rest);
  return n == 0 ? 1 : std::min(n, rest.size());
}

// The longest prefix of `text` (in bytes, on a character boundary) of at most `budget` units.
size_t PrefixWithin(std::string_view text, size_t budget, LengthUnit unit) {
  size_t bytes = 0;
  size_t units = 0;
  while (bytes < text.size()) {
    const size_t n = SequenceLength(text.substr(bytes));
    const size_t u = UnitsOf(text.substr(bytes, n), unit);
    if (units + u > budget) break;
    units += u;
    bytes += n;
  }
  return bytes;
}

// Where to cut `text` at or before `max_bytes`: after a paragraph break, a line break or a space
// in the second half of the window, else at max_bytes itself.
size_t CutPoint(std::string_view text, size_t max_bytes) {
  const std::string_view window = text.substr(0, max_bytes);
  const size_t floor = max_bytes / 2;
  for (std::string_view sep :
       {std::string_view("\n\n"), std::string_view("\n"), std::string_view(" ")}) {
    const size_t at = window.rfind(sep);
    if (at != std::string_view::npos && at >= floor) return at + sep.size();
  }
  return max_bytes;
}

// Whether a code fence is still open at the end of `part`, and its opening line if so.
bool FenceOpenAfter(std::string_view part, bool open, std::string& opener) {
  size_t line_start = 0;
  while (line_start < part.size()) {
    size_t end = part.find('\n', line_start);
    if (end == std::string_view::npos) end = part.size();
    std::string_view line = part.substr(line_start, end - line_start);
    const size_t lead = line.find_first_not_of(' ');
    if (lead != std::string_view::npos && line.substr(lead).starts_with("```")) {
      open = !open;
      if (open) opener = std::string(line.substr(lead));
    }
    line_start = end + 1;
  }
  return open;
}

}  // namespace

size_t MeasureLength(std::string_view text, LengthUnit unit) {
  if (unit == LengthUnit::kBytes) return text.size();
  size_t units = 0;
  for (size_t i = 0; i < text.size();) {
    const size_t n = SequenceLength(text.substr(i));
    units += UnitsOf(text.substr(i, n), unit);
    i += n;
  }
  return units;
}

std::vector<std::string> SplitMessage(std::string_view text, size_t limit, LengthUnit unit) {
  if (limit == 0 || MeasureLength(text, unit) <= limit) return {std::string(text)};
  std::vector<std::string> parts;
  std::string reopen;  // the fence line the next part starts with, when one was cut open
  bool open = false;
  std::string opener;
  while (!text.empty()) {
    const size_t prefix_units = MeasureLength(reopen, unit) + (reopen.empty() ? 0 : 1);
    const size_t budget =
        limit - kIndicatorRoom - kFenceCloseRoom - std::min(prefix_units, limit / 2);
    size_t max_bytes = PrefixWithin(text, budget, unit);
    if (max_bytes >= text.size()) max_bytes = text.size();
    const size_t cut = max_bytes >= text.size() ? text.size() : CutPoint(text, max_bytes);
    std::string_view body = text.substr(0, cut);
    text.remove_prefix(cut);
    std::string part = reopen.empty() ? std::string() : reopen + "\n";
    // Trailing break at the cut belongs to neither part.
    std::string_view trimmed = body;
    while (!trimmed.empty() && (trimmed.back() == '\n' || trimmed.back() == ' ')) {
      trimmed.remove_suffix(1);
    }
    part.append(trimmed);
    open = FenceOpenAfter(body, open, opener);
    reopen.clear();
    if (open && !text.empty()) {
      part += "\n```";
      reopen = opener;  // the next part reopens it, so it stays open there
    }
    parts.push_back(std::move(part));
  }
  if (parts.size() > 1) {
    for (size_t i = 0; i < parts.size(); ++i) {
      parts[i] += " (" + std::to_string(i + 1) + "/" + std::to_string(parts.size()) + ")";
    }
  }
  return parts;
}

}  // namespace talaria::messaging
