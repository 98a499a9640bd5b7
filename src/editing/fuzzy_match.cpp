#include "talaria/editing/fuzzy_match.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

#include "talaria/editing/unified_diff.h"

namespace talaria::editing {
namespace {

// ---------------------------------------------------------------------------------------------
// Small string helpers

constexpr std::string_view kTrimChars = " \t\r\f\v";

bool IsBlank(std::string_view s) { return s.find_first_not_of(" \t\r\n\f\v") == s.npos; }

std::string_view Trim(std::string_view s) {
  size_t b = s.find_first_not_of(kTrimChars);
  if (b == s.npos) return {};
  size_t e = s.find_last_not_of(kTrimChars);
  return s.substr(b, e - b + 1);
}

std::string_view TrimLeft(std::string_view s) {
  size_t b = s.find_first_not_of(kTrimChars);
  return b == s.npos ? std::string_view{} : s.substr(b);
}

std::string_view LeadingIndent(std::string_view line) {
  size_t i = 0;
  while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
  return line.substr(0, i);
}

std::vector<std::string_view> SplitOn(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (;;) {
    size_t pos = s.find(sep, start);
    if (pos == s.npos) {
      out.push_back(s.substr(start));
      return out;
    }
    out.push_back(s.substr(start, pos - start));
    start = pos + 1;
  }
}

std::string JoinLines(const std::vector<std::string>& lines) {
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i > 0) out.push_back('\n');
    out.append(lines[i]);
  }
  return out;
}

std::string ReplaceAllOf(std::string_view s, std::string_view from, std::string_view to) {
  std::string out;
  size_t start = 0;
  for (;;) {
    size_t pos = s.find(from, start);
    if (pos == s.npos) break;
    out.append(s.substr(start, pos - start)).append(to);
    start = pos + from.size();
  }
  out.append(s.substr(start));
  return out;
}

std::string CrlfToLf(std::string_view s) { return ReplaceAllOf(s, "\r\n", "\n"); }

// Cuts at `max_bytes` without splitting a UTF-8 sequence, adding "..." when cut.
std::string Clip(std::string_view s, size_t max_bytes) {
  if (s.size() <= max_bytes) return std::string(s);
  size_t cut = max_bytes > 3 ? max_bytes - 3 : 0;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  return std::string(s.substr(0, cut)) + "...";
}

std::string FormatSimilarity(double similarity) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%.2f", similarity);
  return buf;
}

// ---------------------------------------------------------------------------------------------
// Bit-parallel LCS length (Allison-Dix / Hyyro): O(|text| * ceil(|pattern| / 64)).

class LcsPattern {
 public:
  explicit LcsPattern(std::string_view pattern)
      : size_(pattern.size()), words_((pattern.size() + 63) / 64) {
    slot_.fill(-1);
    for (size_t i = 0; i < pattern.size(); ++i) {
      const auto c = static_cast<unsigned char>(pattern[i]);
      if (slot_[c] < 0) {
        slot_[c] = static_cast<int32_t>(masks_.size() / std::max<size_t>(words_, 1));
        masks_.resize(masks_.size() + words_, 0);
      }
      masks_[static_cast<size_t>(slot_[c]) * words_ + i / 64] |= uint64_t{1} << (i % 64);
    }
  }

  size_t size() const { return size_; }

  size_t Lcs(std::string_view text) const {
    if (size_ == 0 || text.empty()) return 0;
    std::vector<uint64_t> v(words_, ~uint64_t{0});
    for (char ch : text) {
      const int32_t slot = slot_[static_cast<unsigned char>(ch)];
      if (slot < 0) continue;  // a byte absent from the pattern leaves V unchanged
      const uint64_t* m = &masks_[static_cast<size_t>(slot) * words_];
      uint64_t carry = 0;
      for (size_t w = 0; w < words_; ++w) {
        const uint64_t old = v[w];
        const uint64_t u = old & m[w];
        const uint64_t t = old + u;
        const uint64_t c1 = t < old ? 1 : 0;
        const uint64_t s = t + carry;
        const uint64_t c2 = s < t ? 1 : 0;
        carry = c1 | c2;
        v[w] = s | (old & ~m[w]);
      }
    }
    size_t ones = 0;
    for (size_t w = 0; w < words_; ++w) {
      uint64_t word = v[w];
      if (w + 1 == words_ && size_ % 64 != 0) word &= (uint64_t{1} << (size_ % 64)) - 1;
      ones += static_cast<size_t>(std::popcount(word));
    }
    return size_ - ones;
  }

  double Ratio(std::string_view text) const {
    const size_t total = size_ + text.size();
    if (total == 0) return 1.0;
    return 2.0 * static_cast<double>(Lcs(text)) / static_cast<double>(total);
  }

 private:
  size_t size_;
  size_t words_;
  std::array<int32_t, 256> slot_{};
  std::vector<uint64_t> masks_;
};

// Upper bound of the ratio from the lengths alone: 2 * min / (a + b).
double RatioBound(size_t a, size_t b) {
  if (a + b == 0) return 1.0;
  return 2.0 * static_cast<double>(std::min(a, b)) / static_cast<double>(a + b);
}

// ---------------------------------------------------------------------------------------------
// Normalized views: a rewritten copy of a text with a map back to the original bytes.

struct NormView {
  // One original unit whose output differs from its input ("\r\n" -> "\n", a run of blanks
  // -> " ", an em dash -> "--"). Everything between segments is copied byte for byte.
  struct Segment {
    size_t norm_begin;
    size_t norm_len;
    size_t orig_begin;
    size_t orig_len;
    size_t norm_end() const { return norm_begin + norm_len; }
  };

  std::string text;
  std::vector<Segment> segments;  // sorted by norm_begin; empty means identity

  bool identity() const { return segments.empty(); }

  // The last segment starting at or before `n`, or null.
  const Segment* SegmentBefore(size_t n) const {
    auto it = std::upper_bound(segments.begin(), segments.end(), n,
                               [](size_t v, const Segment& s) { return v < s.norm_begin; });
    return it == segments.begin() ? nullptr : &*(it - 1);
  }

  // The original offset of `n`; false when `n` falls inside one unit's output.
  bool MapPos(size_t n, size_t& out) const {
    const Segment* seg = SegmentBefore(n);
    if (seg == nullptr) {
      out = n;
    } else if (n < seg->norm_end()) {
      if (n != seg->norm_begin) return false;
      out = seg->orig_begin;
    } else {
      out = seg->orig_begin + seg->orig_len + (n - seg->norm_end());
    }
    return true;
  }

  // Maps [b, e) of `text` to the original.
  bool MapBack(size_t& b, size_t& e) const {
    if (identity()) return true;
    size_t ob = 0, oe = 0;
    if (!MapPos(b, ob) || !MapPos(e, oe)) return false;
    b = ob;
    e = oe;
    return true;
  }
};

class NormViewBuilder {
 public:
  explicit NormViewBuilder(size_t reserve) { view_.text.reserve(reserve); }
  void Copy(std::string_view bytes) { view_.text.append(bytes); }
  void Replace(std::string_view out, size_t orig_pos, size_t orig_len) {
    view_.segments.push_back({view_.text.size(), out.size(), orig_pos, orig_len});
    view_.text.append(out);
  }
  NormView Finish() && { return std::move(view_); }

 private:
  NormView view_;
};

// "\r\n" read as "\n" (the unit maps to the '\r').
NormView CrlfView(std::string_view s) {
  NormViewBuilder b(s.size());
  size_t copied = 0;
  for (size_t pos = s.find("\r\n"); pos != s.npos; pos = s.find("\r\n", pos + 2)) {
    b.Copy(s.substr(copied, pos - copied));
    b.Replace("\n", pos, 2);
    copied = pos + 2;
  }
  b.Copy(s.substr(copied));
  return std::move(b).Finish();
}

// Runs of spaces and tabs read as one space.
NormView WhitespaceView(std::string_view s) {
  NormViewBuilder b(s.size());
  for (size_t i = 0; i < s.size();) {
    if (s[i] == ' ' || s[i] == '\t') {
      size_t j = i;
      while (j < s.size() && (s[j] == ' ' || s[j] == '\t')) ++j;
      if (j - i == 1 && s[i] == ' ') {
        b.Copy(" ");
      } else {
        b.Replace(" ", i, j - i);
      }
      i = j;
    } else {
      size_t j = i;
      while (j < s.size() && s[j] != ' ' && s[j] != '\t') ++j;
      b.Copy(s.substr(i, j - i));
      i = j;
    }
  }
  return std::move(b).Finish();
}

// Length of the UTF-8 sequence at s[i] and its code point; invalid bytes are single units.
size_t DecodeUtf8(std::string_view s, size_t i, uint32_t& cp) {
  const auto c0 = static_cast<unsigned char>(s[i]);
  size_t len = 1;
  if (c0 < 0x80) {
    cp = c0;
    return 1;
  }
  if ((c0 & 0xE0) == 0xC0) {
    len = 2;
    cp = c0 & 0x1F;
  } else if ((c0 & 0xF0) == 0xE0) {
    len = 3;
    cp = c0 & 0x0F;
  } else if ((c0 & 0xF8) == 0xF0) {
    len = 4;
    cp = c0 & 0x07;
  } else {
    cp = c0;
    return 1;
  }
  if (i + len > s.size()) {
    cp = c0;
    return 1;
  }
  for (size_t k = 1; k < len; ++k) {
    const auto ck = static_cast<unsigned char>(s[i + k]);
    if ((ck & 0xC0) != 0x80) {
      cp = c0;
      return 1;
    }
    cp = (cp << 6) | (ck & 0x3F);
  }
  return len;
}

// The ASCII stand-in for typographic characters models type as ASCII: smart quotes, dashes and
// the minus sign, the ellipsis, NBSP and the other Zs spaces. Empty when `cp` stays as is.
std::string_view AsciiFor(uint32_t cp) {
  switch (cp) {
    case 0x201C:
    case 0x201D:
    case 0x201E:
    case 0x201F:
      return "\"";
    case 0x2018:
    case 0x2019:
    case 0x201A:
    case 0x201B:
      return "'";
    case 0x2014:
      return "--";
    case 0x2010:
    case 0x2011:
    case 0x2012:
    case 0x2013:
    case 0x2212:
      return "-";
    case 0x2026:
      return "...";
    case 0x00A0:
    case 0x202F:
    case 0x205F:
    case 0x3000:
      return " ";
    default:
      if (cp >= 0x2000 && cp <= 0x200A) return " ";
      return {};
  }
}

NormView UnicodeView(std::string_view s) {
  NormViewBuilder b(s.size());
  size_t copied = 0;
  for (size_t i = 0; i < s.size();) {
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    uint32_t cp = 0;
    const size_t len = DecodeUtf8(s, i, cp);
    std::string_view ascii = len > 1 ? AsciiFor(cp) : std::string_view{};
    if (!ascii.empty()) {
      b.Copy(s.substr(copied, i - copied));
      b.Replace(ascii, i, len);
      copied = i + len;
    }
    i += len;
  }
  b.Copy(s.substr(copied));
  return std::move(b).Finish();
}

std::string UnicodeNormalize(std::string_view s) { return UnicodeView(s).text; }

// ---------------------------------------------------------------------------------------------
// Lines

struct LineSpan {
  size_t begin = 0;
  size_t end = 0;   // excludes the '\n' and a '\r' before it
  size_t next = 0;  // start of the following line; text.size() for the last line
};

std::vector<LineSpan> SplitLineSpans(std::string_view text) {
  std::vector<LineSpan> spans;
  size_t start = 0;
  for (;;) {
    size_t nl = text.find('\n', start);
    if (nl == text.npos) {
      size_t end = text.size();
      if (end > start && text[end - 1] == '\r') --end;
      spans.push_back({start, end, text.size()});
      return spans;
    }
    size_t end = nl;
    if (end > start && text[end - 1] == '\r') --end;
    spans.push_back({start, end, nl + 1});
    start = nl + 1;
  }
}

struct LinePattern {
  std::vector<std::string_view> lines;
  bool trailing_newline = false;  // old_string ended with a newline: the match takes it too
};

LinePattern SplitPattern(std::string_view p) {
  LinePattern out;
  if (!p.empty() && p.back() == '\n') {
    p.remove_suffix(1);
    if (!p.empty() && p.back() == '\r') p.remove_suffix(1);
    out.trailing_newline = true;
  }
  for (std::string_view line : SplitOn(p, '\n')) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    out.lines.push_back(line);
  }
  return out;
}

struct Range {
  size_t begin = 0;
  size_t end = 0;
  double similarity = 1.0;
};

Range WindowRange(const std::vector<LineSpan>& spans, size_t first, size_t count,
                  bool trailing_newline, double similarity = 1.0) {
  const LineSpan& last = spans[first + count - 1];
  size_t end = last.end;
  if (trailing_newline && last.next > last.end) end = last.next;
  return {spans[first].begin, end, similarity};
}

std::string_view LineText(std::string_view text, const LineSpan& span) {
  return text.substr(span.begin, span.end - span.begin);
}

// Windows of pattern.lines.size() consecutive lines where eq(line, j) holds for every line j and
// accept(first_line) approves the window; non-overlapping, first come first served.
template <typename Eq, typename Accept>
std::vector<Range> MatchLineWindows(std::string_view text, const std::vector<LineSpan>& spans,
                                    const LinePattern& pattern, Eq eq, Accept accept) {
  std::vector<Range> out;
  const size_t k = pattern.lines.size();
  if (k == 0 || k > spans.size()) return out;
  for (size_t i = 0; i + k <= spans.size();) {
    bool ok = true;
    for (size_t j = 0; j < k && ok; ++j) ok = eq(LineText(text, spans[i + j]), j);
    if (ok && accept(i)) {
      out.push_back(WindowRange(spans, i, k, pattern.trailing_newline));
      i += k;
    } else {
      ++i;
    }
  }
  return out;
}

template <typename Eq>
std::vector<Range> MatchLineWindows(std::string_view text, const std::vector<LineSpan>& spans,
                                    const LinePattern& pattern, Eq eq) {
  return MatchLineWindows(text, spans, pattern, eq, [](size_t) { return true; });
}

// The indentation difference of one line pair with their common tail removed: ("    ", "") for
// a file line indented 4 deeper than old_string's, ("\t", "    ") for a tab against 4 spaces.
std::pair<std::string_view, std::string_view> IndentShift(std::string_view file_line,
                                                          std::string_view old_line) {
  std::string_view a = LeadingIndent(file_line);
  std::string_view b = LeadingIndent(old_line);
  while (!a.empty() && !b.empty() && a.back() == b.back()) {
    a.remove_suffix(1);
    b.remove_suffix(1);
  }
  return {a, b};
}

// True when every non-blank line of the window is shifted by the same indentation (the file may
// be indented more or less than old_string, or with another prefix, but uniformly).
bool UniformIndent(std::string_view text, const std::vector<LineSpan>& spans, size_t first,
                   const LinePattern& pattern) {
  bool have = false;
  std::pair<std::string_view, std::string_view> shift;
  for (size_t j = 0; j < pattern.lines.size(); ++j) {
    std::string_view c = LineText(text, spans[first + j]);
    std::string_view p = pattern.lines[j];
    if (IsBlank(c) || IsBlank(p)) continue;
    auto s = IndentShift(c, p);
    if (!have) {
      shift = s;
      have = true;
    } else if (s != shift) {
      return false;
    }
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// The matchers. Each works on `text` (content with CRLF read as LF when old_string has no CR)
// and returns ranges of `text`.

std::vector<Range> FindExact(std::string_view text, std::string_view pattern) {
  std::vector<Range> out;
  if (pattern.empty()) return out;
  size_t pos = 0;
  while ((pos = text.find(pattern, pos)) != text.npos) {
    out.push_back({pos, pos + pattern.size(), 1.0});
    pos += pattern.size();  // non-overlapping, like str.replace
  }
  return out;
}

// Lines equal once trimmed, and indented like old_string up to one uniform shift (trailing
// whitespace and a block moved in or out). Non-uniform indentation is indentation_flexible's.
std::vector<Range> MatchLineTrimmed(std::string_view text, const std::vector<LineSpan>& spans,
                                    std::string_view pattern) {
  LinePattern p = SplitPattern(pattern);
  std::vector<std::string_view> want;
  for (auto line : p.lines) want.push_back(Trim(line));
  return MatchLineWindows(
      text, spans, p, [&](std::string_view line, size_t j) { return Trim(line) == want[j]; },
      [&](size_t first) { return UniformIndent(text, spans, first, p); });
}

// Lines equal once trimmed, whatever their indentation (unicode_normalized's line fallback).
std::vector<Range> MatchLineTrimmedAnyIndent(std::string_view text,
                                             const std::vector<LineSpan>& spans,
                                             std::string_view pattern) {
  LinePattern p = SplitPattern(pattern);
  std::vector<std::string_view> want;
  for (auto line : p.lines) want.push_back(Trim(line));
  return MatchLineWindows(text, spans, p,
                          [&](std::string_view line, size_t j) { return Trim(line) == want[j]; });
}

std::vector<Range> MapRanges(const NormView& view, std::vector<Range> ranges) {
  std::vector<Range> out;
  for (Range r : ranges) {
    if (view.MapBack(r.begin, r.end)) out.push_back(r);
  }
  return out;
}

std::vector<Range> MatchWhitespaceNormalized(std::string_view text, std::string_view pattern) {
  NormView pv = WhitespaceView(pattern);
  NormView tv = WhitespaceView(text);
  if (pv.text == pattern && tv.text == text) return {};  // nothing collapsed: exact already ran
  return MapRanges(tv, FindExact(tv.text, pv.text));
}

std::vector<Range> MatchIndentationFlexible(std::string_view text,
                                            const std::vector<LineSpan>& spans,
                                            std::string_view pattern) {
  LinePattern p = SplitPattern(pattern);
  std::vector<std::string_view> want;
  for (auto line : p.lines) want.push_back(TrimLeft(line));
  return MatchLineWindows(
      text, spans, p, [&](std::string_view line, size_t j) { return TrimLeft(line) == want[j]; });
}

// Literal backslash escapes (\n, \t, \r) turned into the characters they name.
std::string UnescapeControls(std::string_view s) {
  std::string out = ReplaceAllOf(s, "\\n", "\n");
  out = ReplaceAllOf(out, "\\t", "\t");
  return ReplaceAllOf(out, "\\r", "\r");
}

std::vector<Range> MatchEscapeNormalized(std::string_view text, std::string_view pattern) {
  std::string unescaped = UnescapeControls(pattern);
  if (unescaped == pattern) return {};
  return FindExact(text, unescaped);
}

std::vector<Range> MatchTrimmedBoundary(std::string_view text, const std::vector<LineSpan>& spans,
                                        std::string_view pattern) {
  LinePattern p = SplitPattern(pattern);
  const size_t k = p.lines.size();
  std::vector<std::string_view> want = p.lines;
  want.front() = Trim(want.front());
  want.back() = Trim(want.back());
  return MatchLineWindows(text, spans, p, [&](std::string_view line, size_t j) {
    return (j == 0 || j + 1 == k) ? Trim(line) == want[j] : line == want[j];
  });
}

// Keeps the best of overlapping candidates, then restores file order.
std::vector<Range> SuppressOverlaps(std::vector<Range> candidates) {
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const Range& a, const Range& b) { return a.similarity > b.similarity; });
  std::vector<Range> kept;
  for (const Range& c : candidates) {
    bool overlaps = false;
    for (const Range& k : kept) {
      if (c.begin < k.end && k.begin < c.end) {
        overlaps = true;
        break;
      }
    }
    if (!overlaps) kept.push_back(c);
  }
  std::sort(kept.begin(), kept.end(),
            [](const Range& a, const Range& b) { return a.begin < b.begin; });
  return kept;
}

// Patterns beyond this size skip the similarity matchers (their cost grows with the product of
// the sizes, and an approximate match of a huge block is not evidence of anything).
constexpr size_t kMaxSimilarityPatternBytes = 64 * 1024;
// Line-pair comparisons context_aware may spend on one call.
constexpr size_t kMaxContextAwareWork = 20'000'000;

// Candidate block_anchor windows need this middle similarity to be reported at all.
constexpr double kBlockAnchorFloor = 0.5;
// context_aware: a line "matches" at this ratio, and a window needs half its lines matching.
constexpr double kContextLineRatio = 0.8;

std::vector<Range> MatchBlockAnchor(const NormView& uview, const std::vector<LineSpan>& uspans,
                                    std::string_view pattern) {
  const std::string normalized = UnicodeNormalize(pattern);
  LinePattern p = SplitPattern(normalized);  // views into `normalized`
  const size_t k = p.lines.size();
  if (k < 3) return {};
  const std::string_view first = Trim(p.lines.front());
  const std::string_view last = Trim(p.lines.back());
  if (first.empty() || last.empty() || k > uspans.size()) return {};
  std::string pattern_middle;
  for (size_t j = 1; j + 1 < k; ++j) {
    if (j > 1) pattern_middle.push_back('\n');
    pattern_middle.append(Trim(p.lines[j]));
  }
  LcsPattern lcs(pattern_middle);
  const std::string_view text = uview.text;
  std::vector<Range> candidates;
  std::string middle;
  for (size_t i = 0; i + k <= uspans.size(); ++i) {
    if (Trim(LineText(text, uspans[i])) != first) continue;
    if (Trim(LineText(text, uspans[i + k - 1])) != last) continue;
    middle.clear();
    for (size_t j = 1; j + 1 < k; ++j) {
      if (j > 1) middle.push_back('\n');
      middle.append(Trim(LineText(text, uspans[i + j])));
    }
    const double similarity = lcs.Ratio(middle);
    if (similarity >= kBlockAnchorFloor) {
      candidates.push_back(WindowRange(uspans, i, k, p.trailing_newline, similarity));
    }
  }
  return MapRanges(uview, SuppressOverlaps(std::move(candidates)));
}

std::vector<Range> MatchContextAware(const NormView& uview, const std::vector<LineSpan>& uspans,
                                     std::string_view pattern) {
  const std::string normalized = UnicodeNormalize(pattern);
  LinePattern p = SplitPattern(normalized);  // views into `normalized`
  const size_t k = p.lines.size();
  if (k > uspans.size()) return {};
  struct PatternLine {
    size_t index;
    std::string_view text;
    LcsPattern lcs;
  };
  std::vector<PatternLine> lines;
  for (size_t j = 0; j < k; ++j) {
    std::string_view t = Trim(p.lines[j]);
    if (!t.empty()) lines.push_back({j, t, LcsPattern(t)});
  }
  const size_t n = lines.size();
  if (n < 2) return {};  // one line is too little evidence for an approximate match
  if ((uspans.size() - k + 1) * n > kMaxContextAwareWork) return {};
  const size_t needed = (n + 1) / 2;
  const size_t max_misses = n - needed;
  const std::string_view text = uview.text;
  std::vector<Range> candidates;
  for (size_t i = 0; i + k <= uspans.size(); ++i) {
    size_t hits = 0, misses = 0, lcs_total = 0, len_total = 0;
    for (const PatternLine& pl : lines) {
      const std::string_view c = Trim(LineText(text, uspans[i + pl.index]));
      len_total += pl.text.size() + c.size();
      size_t lcs = 0;
      if (RatioBound(pl.text.size(), c.size()) >= kContextLineRatio) {
        lcs = pl.lcs.Lcs(c);
      } else if (misses + 1 <= max_misses) {
        // Cannot reach the line threshold, but still counts toward the window's similarity.
        lcs = pl.lcs.Lcs(c);
      }
      lcs_total += lcs;
      const double ratio =
          pl.text.size() + c.size() == 0
              ? 1.0
              : 2.0 * static_cast<double>(lcs) / static_cast<double>(pl.text.size() + c.size());
      if (ratio >= kContextLineRatio) {
        ++hits;
      } else if (++misses > max_misses) {
        break;
      }
    }
    if (misses > max_misses || hits < needed) continue;
    const double similarity =
        len_total == 0 ? 1.0
                       : 2.0 * static_cast<double>(lcs_total) / static_cast<double>(len_total);
    candidates.push_back(WindowRange(uspans, i, k, p.trailing_newline, similarity));
  }
  return MapRanges(uview, SuppressOverlaps(std::move(candidates)));
}

// ---------------------------------------------------------------------------------------------
// Replacement building

std::string_view FirstMeaningfulLine(std::string_view text) {
  for (std::string_view line : SplitOn(text, '\n')) {
    if (!IsBlank(line)) return line;
  }
  return {};
}

// Translates indentation from old_string's convention to the file's, learned from the line
// pairs of a match: first by exact indentation, then by the shift (common tail removed) whose
// old-side prefix is the longest prefix of the line's indentation. A line no rule covers keeps
// its indentation.
class IndentMap {
 public:
  void Learn(std::string_view file_line, std::string_view old_line) {
    if (IsBlank(file_line) || IsBlank(old_line)) return;
    Add(exact_, LeadingIndent(old_line), LeadingIndent(file_line));
    auto [file_prefix, old_prefix] = IndentShift(file_line, old_line);
    Add(shifts_, old_prefix, file_prefix);
  }

  bool changes_anything() const {
    for (const auto& e : exact_) {
      if (!e.conflict && e.from != e.to) return true;
    }
    return false;
  }

  std::string Apply(std::string_view line) const {
    if (IsBlank(line)) return std::string(line);
    const std::string_view indent = LeadingIndent(line);
    const std::string_view rest = line.substr(indent.size());
    for (const auto& e : exact_) {
      if (!e.conflict && e.from == indent) return e.to + std::string(rest);
    }
    const Entry* best = nullptr;
    for (const auto& e : shifts_) {
      if (e.conflict || indent.substr(0, e.from.size()) != e.from) continue;
      if (best == nullptr || e.from.size() > best->from.size()) best = &e;
    }
    if (best == nullptr) return std::string(line);
    return best->to + std::string(indent.substr(best->from.size())) + std::string(rest);
  }

 private:
  struct Entry {
    std::string from;
    std::string to;
    bool conflict = false;
  };
  static void Add(std::vector<Entry>& entries, std::string_view from, std::string_view to) {
    for (auto& e : entries) {
      if (e.from == from) {
        if (e.to != to) e.conflict = true;  // ambiguous: this indentation maps two ways
        return;
      }
    }
    entries.push_back({std::string(from), std::string(to)});
  }

  std::vector<Entry> exact_;
  std::vector<Entry> shifts_;
};

// The region in the file's own characters with the model's edit (old -> new) applied, for
// unicode_normalized matches whose normalized text equals old_string's: spans the model left
// alone keep the file's bytes (em dashes, smart quotes, NBSP).
std::optional<std::string> MergeKeepingUnicode(std::string_view region, std::string_view old_text,
                                               std::string_view new_text) {
  NormView rv = UnicodeView(region);
  const std::string norm_old = UnicodeNormalize(old_text);
  if (rv.text != norm_old) return std::nullopt;
  std::vector<uint32_t> a(norm_old.begin(), norm_old.end());
  std::vector<uint32_t> b(new_text.begin(), new_text.end());
  for (auto& x : a) x &= 0xFF;
  for (auto& x : b) x &= 0xFF;
  std::string out;
  for (const DiffRun& run : DiffSequences(a, b)) {
    switch (run.kind) {
      case DiffRun::Kind::kEqual: {
        // Bytes outside segments are the file's own; a segment wholly inside the span keeps
        // its original bytes; a segment cut by the span edge gives its ASCII stand-in.
        size_t k = run.a_begin;
        while (k < run.a_end) {
          const NormView::Segment* seg = rv.SegmentBefore(k);
          if (seg != nullptr && k < seg->norm_end()) {
            if (k == seg->norm_begin && seg->norm_end() <= run.a_end) {
              out.append(region.substr(seg->orig_begin, seg->orig_len));
              k = seg->norm_end();
            } else {
              out.push_back(rv.text[k]);
              ++k;
            }
          } else {
            out.push_back(rv.text[k]);
            ++k;
          }
        }
        break;
      }
      case DiffRun::Kind::kDelete:
        break;
      case DiffRun::Kind::kInsert:
        out.append(new_text.substr(run.b_begin, run.b_end - run.b_begin));
        break;
    }
  }
  return out;
}

// CRLF when the region uses it, LF when it has bare newlines, else the file's majority.
bool UsesCrlf(std::string_view content, std::string_view region) {
  if (region.find("\r\n") != region.npos) return true;
  if (region.find('\n') != region.npos) return false;
  size_t crlf = 0, lf = 0;
  for (size_t i = 0; i < content.size(); ++i) {
    if (content[i] != '\n') continue;
    ++lf;
    if (i > 0 && content[i - 1] == '\r') ++crlf;
  }
  return crlf * 2 > lf;
}

std::string ToCrlf(std::string_view s) {
  std::string out;
  out.reserve(s.size() + s.size() / 16);
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\n' && (i == 0 || s[i - 1] != '\r')) out.push_back('\r');
    out.push_back(s[i]);
  }
  return out;
}

// Whether `needle` occurs in `content`, reading CRLF as LF when the needle has no CR.
bool ContainsText(std::string_view content, std::string_view needle) {
  if (content.find(needle) != content.npos) return true;
  if (needle.find('\r') != needle.npos || content.find("\r\n") == content.npos) return false;
  return CrlfToLf(content).find(needle) != std::string::npos;
}

std::string LineRangeLabel(size_t first, size_t last) {
  return first == last ? "line " + std::to_string(first)
                       : "lines " + std::to_string(first) + "-" + std::to_string(last);
}

// Numbered lines [first, last] (1-based) of `content`, at most `cap` of them.
std::string NumberedLines(const std::vector<std::string_view>& lines, size_t first, size_t last,
                          size_t cap) {
  std::string out;
  size_t shown = 0;
  for (size_t n = first; n <= last && n <= lines.size(); ++n) {
    if (shown == cap) {
      out += "  ... (" + std::to_string(last - n + 1) + " more lines)\n";
      break;
    }
    char num[32];
    std::snprintf(num, sizeof num, "%4zu| ", n);
    std::string_view line = lines[n - 1];
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    out += num + Clip(line, 300) + "\n";
    ++shown;
  }
  if (!out.empty()) out.pop_back();
  return out;
}

std::string ShowWhitespace(std::string_view line) {
  std::string out;
  size_t i = 0;
  for (; i < line.size() && (line[i] == ' ' || line[i] == '\t'); ++i) {
    out += line[i] == '\t' ? "\xE2\x86\x92" : "\xC2\xB7";  // "→" / "·"
  }
  out += Clip(line.substr(i), 200);
  return out;
}

}  // namespace

// -----------------------------------------------------------------------------------------------

std::string_view MatchStrategyName(MatchStrategy strategy) {
  switch (strategy) {
    case MatchStrategy::kExact:
      return "exact";
    case MatchStrategy::kLineTrimmed:
      return "line_trimmed";
    case MatchStrategy::kWhitespaceNormalized:
      return "whitespace_normalized";
    case MatchStrategy::kIndentationFlexible:
      return "indentation_flexible";
    case MatchStrategy::kEscapeNormalized:
      return "escape_normalized";
    case MatchStrategy::kTrimmedBoundary:
      return "trimmed_boundary";
    case MatchStrategy::kUnicodeNormalized:
      return "unicode_normalized";
    case MatchStrategy::kBlockAnchor:
      return "block_anchor";
    case MatchStrategy::kContextAware:
      return "context_aware";
  }
  return "unknown";
}

bool IsSimilarityStrategy(MatchStrategy strategy) {
  return strategy == MatchStrategy::kBlockAnchor || strategy == MatchStrategy::kContextAware;
}

double SimilarityRatio(std::string_view a, std::string_view b) { return LcsPattern(a).Ratio(b); }

size_t LineNumberAt(std::string_view content, size_t offset) {
  offset = std::min(offset, content.size());
  return static_cast<size_t>(std::count(content.begin(), content.begin() + offset, '\n')) + 1;
}

MatchSet FindMatches(std::string_view content, std::string_view old_string) {
  MatchSet result;
  if (old_string.empty()) return result;
  // CRLF files against an LF old_string: match on an LF view and map back.
  const NormView base = old_string.find('\r') == old_string.npos
                            ? CrlfView(content)
                            : NormView{std::string(content), {}};
  const std::string_view text = base.text;
  std::optional<std::vector<LineSpan>> spans;
  auto line_spans = [&]() -> const std::vector<LineSpan>& {
    if (!spans) spans = SplitLineSpans(text);
    return *spans;
  };
  std::optional<NormView> uview;
  std::optional<std::vector<LineSpan>> uspans;
  auto unicode = [&]() -> const NormView& {
    if (!uview) {
      uview = UnicodeView(text);
      uspans = SplitLineSpans(uview->text);
    }
    return *uview;
  };

  auto finish = [&](MatchStrategy s, std::vector<Range> ranges) -> bool {
    ranges = MapRanges(base, std::move(ranges));
    if (ranges.empty()) return false;
    result.strategy = s;
    for (const Range& r : ranges) result.matches.push_back({r.begin, r.end, r.similarity});
    return true;
  };

  if (finish(MatchStrategy::kExact, FindExact(text, old_string))) return result;
  if (finish(MatchStrategy::kLineTrimmed, MatchLineTrimmed(text, line_spans(), old_string))) {
    return result;
  }
  if (finish(MatchStrategy::kWhitespaceNormalized, MatchWhitespaceNormalized(text, old_string))) {
    return result;
  }
  if (finish(MatchStrategy::kIndentationFlexible,
             MatchIndentationFlexible(text, line_spans(), old_string))) {
    return result;
  }
  if (finish(MatchStrategy::kEscapeNormalized, MatchEscapeNormalized(text, old_string))) {
    return result;
  }
  if (finish(MatchStrategy::kTrimmedBoundary,
             MatchTrimmedBoundary(text, line_spans(), old_string))) {
    return result;
  }
  {
    const NormView& uv = unicode();
    const std::string norm_pattern = UnicodeNormalize(old_string);
    if (!uv.identity() || norm_pattern != old_string) {
      std::vector<Range> found = FindExact(uv.text, norm_pattern);
      if (found.empty()) found = MatchLineTrimmedAnyIndent(uv.text, *uspans, norm_pattern);
      if (finish(MatchStrategy::kUnicodeNormalized, MapRanges(uv, std::move(found)))) {
        return result;
      }
    }
  }
  if (old_string.size() > kMaxSimilarityPatternBytes) return result;
  const NormView& uv = unicode();
  if (finish(MatchStrategy::kBlockAnchor, MatchBlockAnchor(uv, *uspans, old_string))) {
    return result;
  }
  finish(MatchStrategy::kContextAware, MatchContextAware(uv, *uspans, old_string));
  return result;
}

std::string BuildReplacement(std::string_view content, const TextMatch& match,
                             MatchStrategy strategy, std::string_view old_string,
                             std::string_view new_string, std::vector<std::string>* notes) {
  auto note = [&](std::string text) {
    if (notes != nullptr && std::find(notes->begin(), notes->end(), text) == notes->end()) {
      notes->push_back(std::move(text));
    }
  };
  const std::string_view region = content.substr(match.begin, match.end - match.begin);
  const bool lf_view = old_string.find('\r') == old_string.npos;
  const std::string region_lf = lf_view ? CrlfToLf(region) : std::string(region);
  std::string replacement;

  if (strategy == MatchStrategy::kExact) {
    replacement = std::string(new_string);
  } else if (strategy == MatchStrategy::kEscapeNormalized) {
    // old_string only matched once its literal escapes were read as control characters; the
    // same transport escaped new_string, so unescape the kinds old_string had — unless
    // new_string also holds the real character (then its escapes are meant literally).
    replacement = std::string(new_string);
    const std::pair<std::string_view, std::string_view> kinds[] = {
        {"\\n", "\n"}, {"\\t", "\t"}, {"\\r", "\r"}};
    for (const auto& [escaped, real] : kinds) {
      if (old_string.find(escaped) != old_string.npos &&
          replacement.find(escaped) != std::string::npos &&
          new_string.find(real) == new_string.npos) {
        replacement = ReplaceAllOf(replacement, escaped, real);
        note("new_string's literal escape sequences were unescaped like old_string's");
      }
    }
  } else {
    std::optional<std::string> merged;
    if (strategy == MatchStrategy::kUnicodeNormalized) {
      merged = MergeKeepingUnicode(region_lf, old_string, new_string);
      if (merged) note("the file's Unicode punctuation was kept where the edit did not touch it");
    }
    if (merged) {
      replacement = std::move(*merged);
    } else {
      std::string_view old_body = old_string;
      std::string_view new_body = new_string;
      std::string_view region_body = region_lf;
      const bool old_nl = !old_body.empty() && old_body.back() == '\n';
      if (old_nl) {
        old_body.remove_suffix(1);
        if (!region_body.empty() && region_body.back() == '\n') region_body.remove_suffix(1);
      }
      const bool new_nl = !new_body.empty() && new_body.back() == '\n';
      if (new_nl) new_body.remove_suffix(1);
      std::vector<std::string_view> old_lines = SplitOn(old_body, '\n');
      std::vector<std::string_view> new_lines =
          new_string.empty() ? std::vector<std::string_view>{} : SplitOn(new_body, '\n');
      std::vector<std::string_view> region_lines = SplitOn(region_body, '\n');
      const bool aligned = old_lines.size() == region_lines.size();

      // Re-indent from old_string's indentation to the file's: per line pair when the region
      // lines up with old_string, else from the first meaningful lines.
      IndentMap indents;
      if (aligned) {
        for (size_t i = 0; i < old_lines.size(); ++i) indents.Learn(region_lines[i], old_lines[i]);
      } else {
        indents.Learn(FirstMeaningfulLine(region_lf), FirstMeaningfulLine(old_string));
      }
      const bool reindent = indents.changes_anything();
      auto fit = [&](std::string_view line) {
        return reindent ? indents.Apply(line) : std::string(line);
      };

      std::vector<std::string> out_lines;
      size_t kept_from_file = 0;
      size_t reindented = 0;
      if (aligned && !new_lines.empty()) {
        // Lines the model left unchanged (old line == new line) keep the file's bytes.
        std::unordered_map<std::string_view, uint32_t> ids;
        auto intern = [&](const std::vector<std::string_view>& lines) {
          std::vector<uint32_t> out;
          for (auto l : lines) {
            out.push_back(ids.emplace(l, static_cast<uint32_t>(ids.size())).first->second);
          }
          return out;
        };
        std::vector<uint32_t> a = intern(old_lines);
        std::vector<uint32_t> b = intern(new_lines);
        for (const DiffRun& run : DiffSequences(a, b)) {
          if (run.kind == DiffRun::Kind::kEqual) {
            for (size_t i = run.a_begin; i < run.a_end; ++i) {
              out_lines.emplace_back(region_lines[i]);
              if (region_lines[i] != old_lines[i]) ++kept_from_file;
            }
          } else if (run.kind == DiffRun::Kind::kInsert) {
            for (size_t j = run.b_begin; j < run.b_end; ++j) {
              out_lines.push_back(fit(new_lines[j]));
              if (out_lines.back() != new_lines[j]) ++reindented;
            }
          }
        }
      } else {
        for (auto l : new_lines) {
          out_lines.push_back(fit(l));
          if (out_lines.back() != l) ++reindented;
        }
      }
      if (reindented > 0) note("new_string was re-indented to the file's indentation");
      if (kept_from_file > 0) {
        note("lines new_string leaves unchanged were kept exactly as they are in the file");
      }
      replacement = JoinLines(out_lines);
      if (new_nl) replacement.push_back('\n');
    }
  }

  if (UsesCrlf(content, region) && replacement.find('\n') != std::string::npos) {
    std::string converted = ToCrlf(replacement);
    if (converted != replacement) {
      note("line endings were written as CRLF to match the file");
      replacement = std::move(converted);
    }
  }
  return replacement;
}

std::string FitLineEndings(std::string_view content, std::string_view text) {
  return UsesCrlf(content, "") ? ToCrlf(text) : std::string(text);
}

Status CheckEscapeDrift(std::string_view content, const std::vector<TextMatch>& matches,
                        std::string_view old_string, std::string_view new_string) {
  for (std::string_view suspect : {std::string_view("\\'"), std::string_view("\\\"")}) {
    if (new_string.find(suspect) == new_string.npos) continue;
    if (old_string.find(suspect) == old_string.npos) continue;
    bool in_file = false;
    for (const TextMatch& m : matches) {
      if (content.substr(m.begin, m.end - m.begin).find(suspect) != std::string_view::npos) {
        in_file = true;
        break;
      }
    }
    if (in_file) continue;
    return FailedPreconditionError(
        "Escape drift: old_string and new_string both contain the literal sequence " +
        std::string(suspect) +
        " but the matched text in the file does not. A backslash was most likely added in "
        "transport before a quote; writing new_string would put it into the file. Re-send "
        "old_string and new_string with plain " +
        std::string(suspect.substr(1)) + " characters.");
  }
  return Status::Ok();
}

bool IsAlreadyApplied(std::string_view content, std::string_view old_string,
                      std::string_view new_string) {
  if (Trim(new_string).size() < 8) return false;
  if (!ContainsText(content, new_string)) return false;
  if (old_string == new_string) return true;
  return !ContainsText(content, old_string);
}

std::string FormatMatchLocations(std::string_view content, const std::vector<TextMatch>& matches,
                                 MatchStrategy strategy, size_t cap) {
  std::string out;
  const bool show_similarity = IsSimilarityStrategy(strategy);
  for (size_t i = 0; i < matches.size() && i < cap; ++i) {
    const size_t begin = matches[i].begin;
    const size_t line_start = content.rfind('\n', begin == 0 ? 0 : begin - 1);
    const size_t ls = (begin == 0 || line_start == content.npos) ? 0 : line_start + 1;
    size_t le = content.find('\n', ls);
    if (le == content.npos) le = content.size();
    std::string_view line = Trim(content.substr(ls, le - ls));
    if (i > 0) out += "\n";
    out += "  L" + std::to_string(LineNumberAt(content, begin)) + ": " + Clip(line, 80);
    if (show_similarity) out += "  (similarity " + FormatSimilarity(matches[i].similarity) + ")";
  }
  if (matches.size() > cap) out += "\n  ... and " + std::to_string(matches.size() - cap) + " more";
  return out;
}

std::string DescribeClosestRegions(std::string_view content, std::string_view old_string) {
  if (content.empty() || IsBlank(old_string)) return {};
  std::vector<std::string_view> old_lines = SplitOn(old_string, '\n');
  std::string_view anchor_raw;
  for (auto l : old_lines) {
    if (!IsBlank(l)) {
      anchor_raw = l;
      break;
    }
  }
  if (!anchor_raw.empty() && anchor_raw.back() == '\r') anchor_raw.remove_suffix(1);
  const std::string_view anchor = Trim(anchor_raw);
  std::vector<std::string_view> lines = SplitOn(content, '\n');
  if (!lines.empty() && lines.back().empty()) lines.pop_back();
  const LcsPattern lcs(anchor.substr(0, 2000));
  std::vector<std::pair<double, size_t>> scored;
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string_view t = Trim(lines[i]).substr(0, 2000);
    if (t.empty() || RatioBound(anchor.size(), t.size()) <= 0.5) continue;
    const double r = lcs.Ratio(t);
    if (r > 0.5) scored.emplace_back(r, i);
  }
  if (scored.empty()) return {};
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  const size_t span = old_lines.size() - (old_lines.back().empty() ? 1 : 0);
  std::string out;
  std::vector<std::pair<size_t, size_t>> shown;
  for (const auto& [ratio, idx] : scored) {
    if (shown.size() == 3) break;
    const size_t first = idx >= 2 ? idx - 1 : 1;  // 1-based, two lines of context before
    const size_t last = std::min(lines.size(), idx + span + 2);
    bool overlaps = false;
    for (auto [f, l] : shown) overlaps = overlaps || (first <= l && f <= last);
    if (overlaps) continue;
    shown.emplace_back(first, last);
    if (!out.empty()) out += "\n---\n";
    out += NumberedLines(lines, first, last, 20);
  }
  const std::string_view best = lines[scored.front().second];
  std::string_view best_line = best;
  if (!best_line.empty() && best_line.back() == '\r') best_line.remove_suffix(1);
  if (Trim(best_line) == anchor && best_line != anchor_raw) {
    out +=
        "\n\nThe closest line differs only in whitespace (\xC2\xB7 = space, \xE2\x86\x92 = tab):";
    out += "\n  in the file:    " + ShowWhitespace(best_line);
    out += "\n  in old_string:  " + ShowWhitespace(anchor_raw);
    out += "\nCopy the file's whitespace exactly.";
  }
  return out;
}

std::string DescribeRefusedCandidate(std::string_view content, const TextMatch& match,
                                     MatchStrategy strategy) {
  const size_t first = LineNumberAt(content, match.begin);
  size_t last_offset = match.end > match.begin ? match.end - 1 : match.begin;
  const size_t last = LineNumberAt(content, last_offset);
  std::vector<std::string_view> lines = SplitOn(content, '\n');
  return "The closest match for old_string (" + LineRangeLabel(first, last) + ", via " +
         std::string(MatchStrategyName(strategy)) + ", similarity " +
         FormatSimilarity(match.similarity) + ") is below the " +
         FormatSimilarity(kMinApplySimilarity) +
         " required for an approximate match, so nothing was changed. That region is:\n" +
         NumberedLines(lines, first, last, 15) +
         "\nRe-read the file and send old_string exactly as it appears there.";
}

Result<ReplaceOutcome> FuzzyReplace(std::string_view content, std::string_view old_string,
                                    std::string_view new_string, ReplaceAll replace_all) {
  if (old_string.empty()) return Err(InvalidArgumentError("old_string cannot be empty"));
  if (IsBlank(old_string)) {
    return Err(InvalidArgumentError(
        "old_string is only whitespace; give non-blank text that identifies the place to edit"));
  }
  if (old_string == new_string) {
    return Err(InvalidArgumentError("old_string and new_string are identical"));
  }

  ReplaceOutcome outcome;
  if (IsAlreadyApplied(content, old_string, new_string)) {
    outcome.content = std::string(content);
    outcome.no_change = true;
    outcome.notes.push_back(
        "File already contains the target text (new_string is present and old_string is not), "
        "so the edit was already applied and nothing was written; do not re-send this patch.");
    return outcome;
  }

  MatchSet set = FindMatches(content, old_string);
  if (set.matches.empty()) {
    std::string message = "Could not find a match for old_string in the file";
    std::string closest = DescribeClosestRegions(content, old_string);
    if (!closest.empty()) message += "\n\nDid you mean one of these sections?\n" + closest;
    return Err(NotFoundError(std::move(message)));
  }
  const size_t n = set.matches.size();
  const std::string strategy_name(MatchStrategyName(set.strategy));
  if (n > 1 && replace_all == ReplaceAll::kNo) {
    return Err(FailedPreconditionError(
        "Found " + std::to_string(n) + " matches for old_string (via " + strategy_name +
        "). Add surrounding context to make it unique, or set replace_all=true. Matches:\n" +
        FormatMatchLocations(content, set.matches, set.strategy)));
  }
  if (IsSimilarityStrategy(set.strategy)) {
    if (n > 1) {
      return Err(FailedPreconditionError(
          "Found " + std::to_string(n) + " approximate matches via " + strategy_name +
          "; replace_all only replaces text that matches precisely. Send old_string exactly as "
          "it appears in the file (whitespace included). Matches:\n" +
          FormatMatchLocations(content, set.matches, set.strategy)));
    }
    if (set.matches.front().similarity < kMinApplySimilarity) {
      return Err(FailedPreconditionError(
          DescribeRefusedCandidate(content, set.matches.front(), set.strategy)));
    }
  }
  if (set.strategy != MatchStrategy::kExact) {
    TALARIA_RETURN_IF_ERROR(CheckEscapeDrift(content, set.matches, old_string, new_string));
  }

  std::string out;
  out.reserve(content.size() + new_string.size());
  size_t cursor = 0;
  double similarity = 1.0;
  for (const TextMatch& m : set.matches) {
    out.append(content.substr(cursor, m.begin - cursor));
    out.append(BuildReplacement(content, m, set.strategy, old_string, new_string, &outcome.notes));
    cursor = m.end;
    similarity = std::min(similarity, m.similarity);
  }
  out.append(content.substr(cursor));
  outcome.strategy = set.strategy;
  outcome.similarity = similarity;
  outcome.replacements = n;
  if (out == content) {
    outcome.no_change = true;
    outcome.notes.push_back("The replacement leaves the file unchanged; nothing was written.");
  }
  outcome.content = std::move(out);
  return outcome;
}

}  // namespace talaria::editing
