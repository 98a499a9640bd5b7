#include "talaria/editing/unified_diff.h"

#include <algorithm>
#include <limits>
#include <string>
#include <unordered_map>

namespace talaria::editing {
namespace {

// Myers' divide-and-conquer diff: find the middle snake of the shortest edit path, recurse on
// both halves. Marks every element of A that is deleted and every element of B that is inserted.
// Space is O(N + M); time O((N + M) * D).
class MyersDiff {
 public:
  MyersDiff(std::span<const uint32_t> a, std::span<const uint32_t> b)
      : a_(a), b_(b), a_changed_(a.size(), 0), b_changed_(b.size(), 0) {
    const size_t diagonals = a.size() + b.size() + 3;
    forward_.assign(diagonals, 0);
    backward_.assign(diagonals, 0);
    offset_ = static_cast<ptrdiff_t>(b.size()) + 1;
  }

  void Run() { Compare(0, Size(a_), 0, Size(b_)); }

  const std::vector<char>& a_changed() const { return a_changed_; }
  const std::vector<char>& b_changed() const { return b_changed_; }

 private:
  static ptrdiff_t Size(std::span<const uint32_t> s) { return static_cast<ptrdiff_t>(s.size()); }

  uint32_t A(ptrdiff_t i) const { return a_[static_cast<size_t>(i)]; }
  uint32_t B(ptrdiff_t i) const { return b_[static_cast<size_t>(i)]; }
  ptrdiff_t& Fwd(ptrdiff_t d) { return forward_[static_cast<size_t>(d + offset_)]; }
  ptrdiff_t& Bwd(ptrdiff_t d) { return backward_[static_cast<size_t>(d + offset_)]; }

  // Compares A[xoff, xlim) with B[yoff, ylim).
  void Compare(ptrdiff_t xoff, ptrdiff_t xlim, ptrdiff_t yoff, ptrdiff_t ylim) {
    while (xoff < xlim && yoff < ylim && A(xoff) == B(yoff)) {
      ++xoff;
      ++yoff;
    }
    while (xoff < xlim && yoff < ylim && A(xlim - 1) == B(ylim - 1)) {
      --xlim;
      --ylim;
    }
    if (xoff == xlim) {
      for (ptrdiff_t y = yoff; y < ylim; ++y) b_changed_[static_cast<size_t>(y)] = 1;
      return;
    }
    if (yoff == ylim) {
      for (ptrdiff_t x = xoff; x < xlim; ++x) a_changed_[static_cast<size_t>(x)] = 1;
      return;
    }
    auto [xmid, ymid] = MiddleSnake(xoff, xlim, yoff, ylim);
    Compare(xoff, xmid, yoff, ymid);
    Compare(xmid, xlim, ymid, ylim);
  }

  // A point on a shortest edit path strictly inside the box (both halves are smaller).
  std::pair<ptrdiff_t, ptrdiff_t> MiddleSnake(ptrdiff_t xoff, ptrdiff_t xlim, ptrdiff_t yoff,
                                              ptrdiff_t ylim) {
    const ptrdiff_t dmin = xoff - ylim;
    const ptrdiff_t dmax = xlim - yoff;
    const ptrdiff_t fmid = xoff - yoff;
    const ptrdiff_t bmid = xlim - ylim;
    ptrdiff_t fmin = fmid, fmax = fmid;
    ptrdiff_t bmin = bmid, bmax = bmid;
    const bool odd = ((fmid - bmid) & 1) != 0;
    constexpr ptrdiff_t kFar = std::numeric_limits<ptrdiff_t>::max();
    Fwd(fmid) = xoff;
    Bwd(bmid) = xlim;
    for (;;) {
      // One more step of the forward search.
      if (fmin > dmin) {
        Fwd(--fmin - 1) = -1;
      } else {
        ++fmin;
      }
      if (fmax < dmax) {
        Fwd(++fmax + 1) = -1;
      } else {
        --fmax;
      }
      for (ptrdiff_t d = fmax; d >= fmin; d -= 2) {
        const ptrdiff_t tlo = Fwd(d - 1);
        const ptrdiff_t thi = Fwd(d + 1);
        ptrdiff_t x = tlo >= thi ? tlo + 1 : thi;
        ptrdiff_t y = x - d;
        while (x < xlim && y < ylim && A(x) == B(y)) {
          ++x;
          ++y;
        }
        Fwd(d) = x;
        if (odd && bmin <= d && d <= bmax && Bwd(d) <= x) return {x, y};
      }
      // One more step of the backward search.
      if (bmin > dmin) {
        Bwd(--bmin - 1) = kFar;
      } else {
        ++bmin;
      }
      if (bmax < dmax) {
        Bwd(++bmax + 1) = kFar;
      } else {
        --bmax;
      }
      for (ptrdiff_t d = bmax; d >= bmin; d -= 2) {
        const ptrdiff_t tlo = Bwd(d - 1);
        const ptrdiff_t thi = Bwd(d + 1);
        ptrdiff_t x = tlo < thi ? tlo : thi - 1;
        ptrdiff_t y = x - d;
        while (xoff < x && yoff < y && A(x - 1) == B(y - 1)) {
          --x;
          --y;
        }
        Bwd(d) = x;
        if (!odd && fmin <= d && d <= fmax && x <= Fwd(d)) return {x, y};
      }
    }
  }

  std::span<const uint32_t> a_;
  std::span<const uint32_t> b_;
  std::vector<char> a_changed_;
  std::vector<char> b_changed_;
  std::vector<ptrdiff_t> forward_;
  std::vector<ptrdiff_t> backward_;
  ptrdiff_t offset_ = 0;
};

void AppendRun(std::vector<DiffRun>& runs, DiffRun::Kind kind, size_t a_begin, size_t a_end,
               size_t b_begin, size_t b_end) {
  if (a_begin == a_end && b_begin == b_end) return;
  runs.push_back({kind, a_begin, a_end, b_begin, b_end});
}

// Interns lines so the diff compares integers.
void InternLines(const std::vector<std::string_view>& lines,
                 std::unordered_map<std::string_view, uint32_t>& ids, std::vector<uint32_t>& out) {
  out.reserve(lines.size());
  for (std::string_view line : lines) {
    auto [it, inserted] = ids.emplace(line, static_cast<uint32_t>(ids.size()));
    out.push_back(it->second);
  }
}

std::string RangeText(size_t begin, size_t count) {
  // GNU / difflib convention: a one-line range is just its line number; an empty range names
  // the line before it.
  if (count == 1) return std::to_string(begin + 1);
  if (count == 0) return std::to_string(begin) + ",0";
  return std::to_string(begin + 1) + "," + std::to_string(count);
}

void AppendDiffLine(std::string& out, char prefix, std::string_view line) {
  out.push_back(prefix);
  if (!line.empty() && line.back() == '\n') {
    out.append(line);
  } else {
    out.append(line);
    out.append("\n\\ No newline at end of file\n");
  }
}

}  // namespace

std::vector<DiffRun> DiffSequences(std::span<const uint32_t> a, std::span<const uint32_t> b) {
  MyersDiff diff(a, b);
  diff.Run();
  const auto& ac = diff.a_changed();
  const auto& bc = diff.b_changed();
  std::vector<DiffRun> runs;
  size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    const size_t i0 = i, j0 = j;
    while (i < a.size() && j < b.size() && !ac[i] && !bc[j]) {
      ++i;
      ++j;
    }
    AppendRun(runs, DiffRun::Kind::kEqual, i0, i, j0, j);
    const size_t i1 = i;
    while (i < a.size() && ac[i]) ++i;
    AppendRun(runs, DiffRun::Kind::kDelete, i1, i, j, j);
    const size_t j1 = j;
    while (j < b.size() && bc[j]) ++j;
    AppendRun(runs, DiffRun::Kind::kInsert, i, i, j1, j);
  }
  return runs;
}

std::vector<std::string_view> SplitLinesKeepEnds(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    size_t end = nl == std::string_view::npos ? text.size() : nl + 1;
    lines.push_back(text.substr(start, end - start));
    start = end;
  }
  return lines;
}

std::string UnifiedDiff(std::string_view old_text, std::string_view new_text,
                        std::string_view from_label, std::string_view to_label, int context) {
  if (old_text == new_text) return {};
  const size_t ctx = context < 0 ? 0 : static_cast<size_t>(context);
  std::vector<std::string_view> a_lines = SplitLinesKeepEnds(old_text);
  std::vector<std::string_view> b_lines = SplitLinesKeepEnds(new_text);
  std::unordered_map<std::string_view, uint32_t> ids;
  std::vector<uint32_t> a_ids, b_ids;
  InternLines(a_lines, ids, a_ids);
  InternLines(b_lines, ids, b_ids);
  std::vector<DiffRun> runs = DiffSequences(a_ids, b_ids);

  std::string out;
  out.append("--- ").append(from_label).append("\n");
  out.append("+++ ").append(to_label).append("\n");

  // Group change runs whose separating equal stretch is at most 2 * ctx lines long.
  size_t r = 0;
  while (r < runs.size()) {
    if (runs[r].kind == DiffRun::Kind::kEqual) {
      ++r;
      continue;
    }
    size_t first = r;
    size_t last = r;  // last change run of the group
    size_t k = r + 1;
    while (k < runs.size()) {
      if (runs[k].kind != DiffRun::Kind::kEqual) {
        last = k;
        ++k;
        continue;
      }
      const size_t len = runs[k].a_end - runs[k].a_begin;
      if (k + 1 < runs.size() && len <= 2 * ctx) {
        ++k;
        continue;
      }
      break;
    }
    // Hunk bounds with leading and trailing context.
    const size_t lead =
        first > 0 ? std::min(ctx, runs[first - 1].a_end - runs[first - 1].a_begin) : 0;
    const size_t trail =
        last + 1 < runs.size() ? std::min(ctx, runs[last + 1].a_end - runs[last + 1].a_begin) : 0;
    const size_t a_start = runs[first].a_begin - lead;
    const size_t b_start = runs[first].b_begin - lead;
    const size_t a_stop = runs[last].a_end + trail;
    const size_t b_stop = runs[last].b_end + trail;
    out.append("@@ -")
        .append(RangeText(a_start, a_stop - a_start))
        .append(" +")
        .append(RangeText(b_start, b_stop - b_start))
        .append(" @@\n");
    for (size_t i = a_start; i < runs[first].a_begin; ++i) AppendDiffLine(out, ' ', a_lines[i]);
    for (size_t g = first; g <= last; ++g) {
      const DiffRun& run = runs[g];
      switch (run.kind) {
        case DiffRun::Kind::kEqual:
          for (size_t i = run.a_begin; i < run.a_end; ++i) AppendDiffLine(out, ' ', a_lines[i]);
          break;
        case DiffRun::Kind::kDelete:
          for (size_t i = run.a_begin; i < run.a_end; ++i) AppendDiffLine(out, '-', a_lines[i]);
          break;
        case DiffRun::Kind::kInsert:
          for (size_t j = run.b_begin; j < run.b_end; ++j) AppendDiffLine(out, '+', b_lines[j]);
          break;
      }
    }
    for (size_t i = runs[last].a_end; i < a_stop; ++i) AppendDiffLine(out, ' ', a_lines[i]);
    r = last + 1;
  }
  return out;
}

std::string UnifiedFileDiff(std::string_view path, std::string_view old_text,
                            std::string_view new_text) {
  return UnifiedDiff(old_text, new_text, "a/" + std::string(path), "b/" + std::string(path));
}

}  // namespace talaria::editing
