// DiffSnapshots (snapshot_diff.h): the common head and tail are skipped, the middle is matched
// by ref and, for ref-less lines, by content.
#include "browser/snapshot_diff.h"

#include <algorithm>
#include <map>
#include <vector>

#include "talaria/base/lines.h"

namespace talaria::browser {
namespace {

std::string_view Trimmed(std::string_view line) {
  const size_t first = line.find_first_not_of(' ');
  return first == std::string_view::npos ? std::string_view() : line.substr(first);
}

// The line's own ref ("e5", "f1e5"; a frame placeholder's "frame:e7"), or "" when it has none.
// Page text can hold "[ref=...]" too: a text line has no ref, and the ref tag comes after the
// quoted name and before the value, so the first tag past the name is the line's.
std::string RefOf(std::string_view line) {
  line = Trimmed(line);
  if (line.starts_with("- text:")) return "";
  size_t from = 0;
  if (const size_t quote = line.find('"'); quote != std::string_view::npos) {
    const size_t colon = line.find(": ");
    if (colon == std::string_view::npos || quote < colon) {
      size_t end = quote + 1;
      while (end < line.size() && line[end] != '"') end += line[end] == '\\' ? 2 : 1;
      from = end;
    }
  }
  const size_t ref = line.find("[ref=", from);
  const size_t frame = line.find("[frame=", from);
  const size_t value = line.find(": ", from);
  const bool is_frame = frame < ref;
  const size_t at = std::min(ref, frame);
  if (at == std::string_view::npos || at > value) return "";
  const size_t start = at + (is_frame ? 7 : 5);
  const size_t end = line.find(']', start);
  if (end == std::string_view::npos) return "";
  std::string id(line.substr(start, end - start));
  return is_frame ? "frame:" + id : id;
}

// For each line, the ref of the nearest line at or above it that has one ("" when none).
std::vector<std::string> AnchorsOf(const std::vector<std::string_view>& lines) {
  std::vector<std::string> anchors(lines.size());
  std::string last;
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string ref = RefOf(lines[i]);
    if (!ref.empty() && !ref.starts_with("frame:")) last = std::move(ref);
    anchors[i] = last;
  }
  return anchors;
}

void Emit(std::string& out, char mark, std::string_view line, std::string_view anchor) {
  out += mark;
  out += ' ';
  out += Trimmed(line);
  if (!anchor.empty() && RefOf(line).empty()) {
    out += "  (after @";
    out += anchor;
    out += ')';
  }
  out += '\n';
}

}  // namespace

SnapshotDiff DiffSnapshots(std::string_view before, std::string_view after) {
  const std::vector<std::string_view> old_lines = SplitLines(before);
  const std::vector<std::string_view> new_lines = SplitLines(after);
  size_t head = 0;
  while (head < old_lines.size() && head < new_lines.size() && old_lines[head] == new_lines[head]) {
    ++head;
  }
  size_t tail = 0;
  while (tail < old_lines.size() - head && tail < new_lines.size() - head &&
         old_lines[old_lines.size() - 1 - tail] == new_lines[new_lines.size() - 1 - tail]) {
    ++tail;
  }
  const size_t old_end = old_lines.size() - tail, new_end = new_lines.size() - tail;

  // The old middle: lines with a ref by ref, the others by content (several may be equal).
  std::map<std::string, size_t> old_by_ref;
  std::map<std::string_view, std::vector<size_t>> old_by_text;
  for (size_t i = head; i < old_end; ++i) {
    std::string ref = RefOf(old_lines[i]);
    if (!ref.empty()) {
      old_by_ref.emplace(std::move(ref), i);
    } else {
      old_by_text[Trimmed(old_lines[i])].push_back(i);
    }
  }
  std::vector<bool> old_kept(old_lines.size(), false);
  const std::vector<std::string> old_anchors = AnchorsOf(old_lines);
  const std::vector<std::string> new_anchors = AnchorsOf(new_lines);

  SnapshotDiff diff;
  for (size_t i = head; i < new_end; ++i) {
    const std::string_view line = new_lines[i];
    const std::string ref = RefOf(line);
    if (!ref.empty()) {
      auto it = old_by_ref.find(ref);
      if (it == old_by_ref.end() || old_kept[it->second]) {
        Emit(diff.text, '+', line, "");
        ++diff.added;
        continue;
      }
      old_kept[it->second] = true;
      if (Trimmed(old_lines[it->second]) != Trimmed(line)) {
        Emit(diff.text, '~', line, "");
        ++diff.changed;
      }
      continue;
    }
    auto it = old_by_text.find(Trimmed(line));
    if (it != old_by_text.end() && !it->second.empty()) {
      old_kept[it->second.front()] = true;
      it->second.erase(it->second.begin());
      continue;
    }
    Emit(diff.text, '+', line, new_anchors[i]);
    ++diff.added;
  }
  for (size_t i = head; i < old_end; ++i) {
    if (old_kept[i]) continue;
    Emit(diff.text, '-', old_lines[i], old_anchors[i]);
    ++diff.removed;
  }
  if (!diff.text.empty()) diff.text.pop_back();  // the last newline
  return diff;
}

}  // namespace talaria::browser
