#include "lint/line_diff.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <span>

namespace talaria::lint_internal {
namespace {

// Beyond this many differences Myers' trace (~D² ints) is not worth keeping; such an edit is a
// rewrite, and its middle stays unmapped.
constexpr int kMaxEditDistance = 1024;

struct HashedLines {
  std::span<const std::string_view> lines;
  std::span<const uint64_t> hashes;
};

bool SameLine(const HashedLines& a, size_t i, const HashedLines& b, size_t j) {
  return a.hashes[i] == b.hashes[j] && a.lines[i] == b.lines[j];
}

// Myers' greedy shortest edit script on a (N lines) and b (M lines); calls match(i, j) for each
// pair of equal lines on the script's diagonals. Returns false (no calls made) when more than
// `max_d` differences would be needed.
template <typename Match>
bool MyersMatch(const HashedLines& a, const HashedLines& b, int max_d, Match&& match) {
  const int n = static_cast<int>(a.lines.size());
  const int m = static_cast<int>(b.lines.size());
  max_d = std::min(max_d, n + m);
  const int offset = max_d + 1;
  std::vector<int> v(static_cast<size_t>(2 * max_d + 3), 0);
  // trace[d] = v over k in [-d-1, d+1] as it was before step d.
  std::vector<std::vector<int>> trace;
  int found = -1;
  for (int d = 0; d <= max_d && found < 0; ++d) {
    trace.emplace_back(v.begin() + (offset - d - 1), v.begin() + (offset + d + 2));
    for (int k = -d; k <= d; k += 2) {
      int x = (k == -d || (k != d && v[offset + k - 1] < v[offset + k + 1]))
                  ? v[offset + k + 1]
                  : v[offset + k - 1] + 1;
      int y = x - k;
      while (x < n && y < m && SameLine(a, static_cast<size_t>(x), b, static_cast<size_t>(y))) {
        ++x;
        ++y;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) {
        found = d;
        break;
      }
    }
  }
  if (found < 0) return false;
  int x = n;
  int y = m;
  for (int d = found; d >= 0; --d) {
    const std::vector<int>& t = trace[static_cast<size_t>(d)];
    auto tv = [&](int k) {
      const int at = k + d + 1;  // diagonals -d..d, shifted to 1..2d+1
      return t[static_cast<size_t>(at)];
    };
    const int k = x - y;
    const int prev_k = (k == -d || (k != d && tv(k - 1) < tv(k + 1))) ? k + 1 : k - 1;
    const int prev_x = tv(prev_k);
    const int prev_y = prev_x - prev_k;
    while (x > prev_x && y > prev_y) {
      --x;
      --y;
      match(x, y);
    }
    x = prev_x;
    y = prev_y;
  }
  return true;
}

std::vector<uint64_t> HashAll(std::span<const std::string_view> lines) {
  std::vector<uint64_t> out;
  out.reserve(lines.size());
  std::hash<std::string_view> h;
  for (std::string_view l : lines) out.push_back(h(l));
  return out;
}

}  // namespace

std::vector<int> MapOldLinesToNew(std::string_view old_text, std::string_view new_text,
                                  size_t max_work) {
  const std::vector<std::string_view> a = SplitLines(old_text);
  const std::vector<std::string_view> b = SplitLines(new_text);
  const size_t n = a.size();
  const size_t m = b.size();
  // Entries 1..n are the lines; n+1 is the end of the text, where parsers put "unexpected end
  // of input" — it maps to the new text's end.
  std::vector<int> map(n + 2, 0);
  map[n + 1] = static_cast<int>(m + 1);

  size_t prefix = 0;
  while (prefix < n && prefix < m && a[prefix] == b[prefix]) {
    map[prefix + 1] = static_cast<int>(prefix + 1);
    ++prefix;
  }
  size_t suffix = 0;
  while (suffix < n - prefix && suffix < m - prefix && a[n - 1 - suffix] == b[m - 1 - suffix]) {
    map[n - suffix] = static_cast<int>(m - suffix);
    ++suffix;
  }
  const size_t mid_a = n - prefix - suffix;
  const size_t mid_b = m - prefix - suffix;
  if (mid_a == 0 || mid_b == 0) return map;

  const std::span<const std::string_view> sa(a.data() + prefix, mid_a);
  const std::span<const std::string_view> sb(b.data() + prefix, mid_b);
  const std::vector<uint64_t> ha = HashAll(sa);
  const std::vector<uint64_t> hb = HashAll(sb);
  const size_t width = mid_a + mid_b;
  const size_t budget_d = max_work / width;
  const int max_d = static_cast<int>(std::min<size_t>(budget_d, kMaxEditDistance));
  MyersMatch(HashedLines{sa, ha}, HashedLines{sb, hb}, max_d, [&](int i, int j) {
    map[prefix + static_cast<size_t>(i) + 1] =
        static_cast<int>(prefix + static_cast<size_t>(j) + 1);
  });
  return map;
}

}  // namespace talaria::lint_internal
