#include "talaria/search/line_matcher.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <immintrin.h>
#include <pcre2.h>

#include <algorithm>
#include <cstring>
#include <string>

namespace talaria::search {
namespace {

bool HasAvx2() {
  static const bool has = __builtin_cpu_supports("avx2") != 0;
  return has;
}

// --- newline counting -----------------------------------------------------------------------

__attribute__((target("avx2"))) size_t CountNewlinesAvx2(const char* p, size_t n) {
  const __m256i nl = _mm256_set1_epi8('\n');
  const __m256i zero = _mm256_setzero_si256();
  size_t count = 0;
  size_t i = 0;
  while (i + 32 <= n) {
    __m256i acc = zero;
    // cmpeq yields -1 per hit; at most 255 blocks before a byte lane could overflow.
    for (int block = 0; block < 255 && i + 32 <= n; ++block, i += 32) {
      const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i));
      acc = _mm256_sub_epi8(acc, _mm256_cmpeq_epi8(v, nl));
    }
    const __m256i sums = _mm256_sad_epu8(acc, zero);
    count += static_cast<size_t>(_mm256_extract_epi64(sums, 0)) +
             static_cast<size_t>(_mm256_extract_epi64(sums, 1)) +
             static_cast<size_t>(_mm256_extract_epi64(sums, 2)) +
             static_cast<size_t>(_mm256_extract_epi64(sums, 3));
  }
  for (; i < n; ++i) count += p[i] == '\n' ? 1 : 0;
  return count;
}

size_t CountNewlinesSse2(const char* p, size_t n) {
  const __m128i nl = _mm_set1_epi8('\n');
  const __m128i zero = _mm_setzero_si128();
  size_t count = 0;
  size_t i = 0;
  while (i + 16 <= n) {
    __m128i acc = zero;
    for (int block = 0; block < 255 && i + 16 <= n; ++block, i += 16) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
      acc = _mm_sub_epi8(acc, _mm_cmpeq_epi8(v, nl));
    }
    const __m128i sums = _mm_sad_epu8(acc, zero);
    count += static_cast<size_t>(_mm_cvtsi128_si64(sums)) +
             static_cast<size_t>(_mm_cvtsi128_si64(_mm_unpackhi_epi64(sums, sums)));
  }
  for (; i < n; ++i) count += p[i] == '\n' ? 1 : 0;
  return count;
}

// --- literal scan -----------------------------------------------------------------------------

// How common a byte is in source code and prose (higher = more common); the scan keys on the
// two rarest bytes of the needle so that few candidates need a memcmp.
int ByteRank(unsigned char c) {
  static constexpr std::string_view kCommon = " etaoinsrhldcumfpgwybvkxjqz\n\t,._()=;-\"'/:";
  const size_t at = kCommon.find(static_cast<char>(c));
  if (at != std::string_view::npos) return 255 - static_cast<int>(at) * 3;
  if (c >= '0' && c <= '9') return 120;
  if (c >= 'A' && c <= 'Z') return 110;
  if (c < 0x80) return 60;
  return 40;
}

__attribute__((target("avx2"))) const char* FindAvx2(const char* h, size_t n, const char* nd,
                                                     size_t m, size_t i1, size_t i2) {
  const __m256i b1 = _mm256_set1_epi8(nd[i1]);
  const __m256i b2 = _mm256_set1_epi8(nd[i2]);
  size_t i = 0;
  // Loads reach h[i + max(i1,i2) + 31] < h[i + m + 31] <= h[n]; every candidate i+j fits.
  while (i + m + 31 <= n) {
    const __m256i v1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(h + i + i1));
    const __m256i v2 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(h + i + i2));
    auto mask = static_cast<uint32_t>(_mm256_movemask_epi8(
        _mm256_and_si256(_mm256_cmpeq_epi8(v1, b1), _mm256_cmpeq_epi8(v2, b2))));
    while (mask != 0) {
      const size_t j = static_cast<size_t>(__builtin_ctz(mask));
      if (std::memcmp(h + i + j, nd, m) == 0) return h + i + j;
      mask &= mask - 1;
    }
    i += 32;
  }
  for (; i + m <= n; ++i) {
    if (h[i + i1] == nd[i1] && h[i + i2] == nd[i2] && std::memcmp(h + i, nd, m) == 0) return h + i;
  }
  return nullptr;
}

const char* FindSse2(const char* h, size_t n, const char* nd, size_t m, size_t i1, size_t i2) {
  const __m128i b1 = _mm_set1_epi8(nd[i1]);
  const __m128i b2 = _mm_set1_epi8(nd[i2]);
  size_t i = 0;
  while (i + m + 15 <= n) {
    const __m128i v1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(h + i + i1));
    const __m128i v2 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(h + i + i2));
    auto mask = static_cast<uint32_t>(
        _mm_movemask_epi8(_mm_and_si128(_mm_cmpeq_epi8(v1, b1), _mm_cmpeq_epi8(v2, b2))));
    while (mask != 0) {
      const size_t j = static_cast<size_t>(__builtin_ctz(mask));
      if (std::memcmp(h + i + j, nd, m) == 0) return h + i + j;
      mask &= mask - 1;
    }
    i += 16;
  }
  for (; i + m <= n; ++i) {
    if (h[i + i1] == nd[i1] && h[i + i2] == nd[i2] && std::memcmp(h + i, nd, m) == 0) return h + i;
  }
  return nullptr;
}

// --- pattern analysis -------------------------------------------------------------------------

constexpr std::string_view kRegexMeta = "\\^$.|?*+()[]{}";

bool IsAsciiAlnum(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

// Index just past the class starting at p[i] == '['; npos if unterminated.
size_t SkipClass(std::string_view p, size_t i) {
  size_t j = i + 1;
  if (j < p.size() && p[j] == '^') ++j;
  if (j < p.size() && p[j] == ']') ++j;  // a leading ']' is literal
  while (j < p.size()) {
    if (p[j] == '\\') {
      j += 2;
      continue;
    }
    if (p[j] == '[' && j + 1 < p.size() && p[j + 1] == ':') {  // [:alpha:]
      const size_t close = p.find(":]", j + 2);
      if (close == std::string_view::npos) return std::string_view::npos;
      j = close + 2;
      continue;
    }
    if (p[j] == ']') return j + 1;
    ++j;
  }
  return std::string_view::npos;
}

// Index just past the group starting at p[i] == '('; npos if unbalanced.
size_t SkipGroup(std::string_view p, size_t i) {
  int depth = 0;
  size_t j = i;
  while (j < p.size()) {
    const char c = p[j];
    if (c == '\\') {
      j += 2;
      continue;
    }
    if (c == '[') {
      j = SkipClass(p, j);
      if (j == std::string_view::npos) return j;
      continue;
    }
    if (c == '(') ++depth;
    if (c == ')' && --depth == 0) return j + 1;
    ++j;
  }
  return std::string_view::npos;
}

// Parses a quantifier at p[i]. Returns its length (0: none), and sets *min_zero when the
// quantified atom may occur zero times. *bad when p[i] is '{' but not a valid quantifier.
size_t QuantifierAt(std::string_view p, size_t i, bool* min_zero, bool* bad) {
  *min_zero = false;
  *bad = false;
  if (i >= p.size()) return 0;
  size_t len = 0;
  if (p[i] == '?' || p[i] == '*') {
    *min_zero = true;
    len = 1;
  } else if (p[i] == '+') {
    len = 1;
  } else if (p[i] == '{') {
    size_t j = i + 1;
    size_t digits = 0;
    uint64_t min = 0;
    while (j < p.size() && p[j] >= '0' && p[j] <= '9') {
      min = std::min<uint64_t>(min * 10 + static_cast<uint64_t>(p[j] - '0'), 1'000'000);
      ++j;
      ++digits;
    }
    if (j < p.size() && p[j] == ',') {
      ++j;
      while (j < p.size() && p[j] >= '0' && p[j] <= '9') ++j;
    }
    if (j >= p.size() || p[j] != '}' || digits == 0) {
      *bad = true;
      return 0;
    }
    *min_zero = min == 0;
    len = j + 1 - i;
  } else {
    return 0;
  }
  if (i + len < p.size() && (p[i + len] == '?' || p[i + len] == '+')) ++len;  // lazy/possessive
  return len;
}

}  // namespace

size_t CountNewlines(const char* p, size_t n) {
  return HasAvx2() ? CountNewlinesAvx2(p, n) : CountNewlinesSse2(p, n);
}

LiteralFinder::LiteralFinder(std::string needle) : needle_(std::move(needle)) {
  const size_t m = needle_.size();
  if (m < 2) return;
  size_t best = 0;
  for (size_t k = 1; k < m; ++k) {
    if (ByteRank(static_cast<unsigned char>(needle_[k])) <
        ByteRank(static_cast<unsigned char>(needle_[best]))) {
      best = k;
    }
  }
  size_t second = best == 0 ? 1 : 0;
  for (size_t k = 0; k < m; ++k) {
    if (k == best) continue;
    const bool distinct = needle_[k] != needle_[best];
    const bool second_distinct = needle_[second] != needle_[best];
    const int rk = ByteRank(static_cast<unsigned char>(needle_[k]));
    const int rs = ByteRank(static_cast<unsigned char>(needle_[second]));
    if ((distinct && !second_distinct) || (distinct == second_distinct && rk < rs)) second = k;
  }
  i1_ = best;
  i2_ = second;
}

const char* LiteralFinder::Find(const char* hay, size_t n) const {
  const size_t m = needle_.size();
  if (m == 0) return hay;
  if (m == 1) return static_cast<const char*>(std::memchr(hay, needle_[0], n));
  if (n < m) return nullptr;
  return HasAvx2() ? FindAvx2(hay, n, needle_.data(), m, i1_, i2_)
                   : FindSse2(hay, n, needle_.data(), m, i1_, i2_);
}

bool PatternAsLiteral(std::string_view pattern, std::string* literal) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '\\') {
      if (i + 1 >= pattern.size()) return false;
      const char d = pattern[i + 1];
      if (IsAsciiAlnum(d) || static_cast<unsigned char>(d) >= 0x80 || d == '\n') return false;
      out.push_back(d);
      ++i;
      continue;
    }
    if (kRegexMeta.find(c) != std::string_view::npos) return false;
    out.push_back(c);
  }
  *literal = std::move(out);
  return true;
}

std::string RequiredLiteral(std::string_view p) {
  if (p.find("(?") != std::string_view::npos || p.find("\\Q") != std::string_view::npos) return {};
  std::string best;
  std::string run;
  auto flush = [&] {
    if (run.size() > best.size()) best = run;
    run.clear();
  };
  size_t i = 0;
  while (i < p.size()) {
    const char c = p[i];
    bool min_zero = false;
    bool bad = false;
    if (c == '|') return {};  // top-level alternation: nothing is required
    if (c == '(' || c == '[' || c == '.' || c == '^' || c == '$') {
      size_t next = i + 1;
      if (c == '(') next = SkipGroup(p, i);
      if (c == '[') next = SkipClass(p, i);
      if (next == std::string_view::npos) return {};
      flush();
      next += QuantifierAt(p, next, &min_zero, &bad);
      if (bad) return {};
      i = next;
      continue;
    }
    if (c == '*' || c == '+' || c == '?' || c == '{' || c == ')' || c == ']' || c == '}') {
      return {};  // a quantifier without an atom, or a stray bracket: let PCRE2 judge
    }
    // One atom: an escape or a (possibly multi-byte) character.
    std::string atom;
    size_t next = i + 1;
    if (c == '\\') {
      if (i + 1 >= p.size()) return {};
      const char d = p[i + 1];
      next = i + 2;
      if (IsAsciiAlnum(d)) {
        if (std::string_view("dDwWsSbBAzZGhHvVRtnrfea").find(d) == std::string_view::npos) {
          return {};  // \x.. \p{..} \1 \k<..> \K ...: unsure how long or what it means
        }
        flush();
        next += QuantifierAt(p, next, &min_zero, &bad);
        if (bad) return {};
        i = next;
        continue;
      }
      atom.push_back(d);
    } else {
      atom.push_back(c);
      if (static_cast<unsigned char>(c) >= 0xC0) {
        while (next < p.size() && (static_cast<unsigned char>(p[next]) & 0xC0) == 0x80) {
          atom.push_back(p[next++]);
        }
      }
    }
    const size_t qlen = QuantifierAt(p, next, &min_zero, &bad);
    if (bad) return {};
    if (qlen == 0) {
      run += atom;
    } else if (min_zero) {
      flush();
    } else {
      run += atom;
      flush();
    }
    i = next + qlen;
  }
  flush();
  return best;
}

bool PatternMatchesNewline(std::string_view pattern) {
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '\n') return true;
    if (pattern[i] == '\\' && i + 1 < pattern.size()) {
      if (pattern[i + 1] == 'n') return true;
      ++i;  // skip the escaped character (so `\\n` is a backslash then 'n')
    }
  }
  return false;
}

// --- PCRE2 ------------------------------------------------------------------------------------

struct LineMatcher::Code {
  pcre2_code* code = nullptr;
  bool jit = false;
  ~Code() {
    if (code != nullptr) pcre2_code_free(code);
  }
};

class LineMatcher::Scratch {
 public:
  explicit Scratch(const pcre2_code* code, uint32_t match_limit) {
    match_data_ = pcre2_match_data_create(1, nullptr);
    context_ = pcre2_match_context_create(nullptr);
    if (code != nullptr) {
      pcre2_set_match_limit(context_, match_limit);
      pcre2_set_depth_limit(context_, 100'000);
      pcre2_set_heap_limit(context_, 64 * 1024);  // KiB
      jit_stack_ = pcre2_jit_stack_create(32 * 1024, 2 * 1024 * 1024, nullptr);
      if (jit_stack_ != nullptr) pcre2_jit_stack_assign(context_, nullptr, jit_stack_);
    }
  }
  ~Scratch() {
    if (jit_stack_ != nullptr) pcre2_jit_stack_free(jit_stack_);
    pcre2_match_context_free(context_);
    pcre2_match_data_free(match_data_);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;

  pcre2_match_data* match_data_ = nullptr;
  pcre2_match_context* context_ = nullptr;
  pcre2_jit_stack* jit_stack_ = nullptr;
};

LineMatcher::~LineMatcher() = default;

Result<std::unique_ptr<LineMatcher>> LineMatcher::Create(std::string_view pattern,
                                                         uint32_t match_limit) {
  std::unique_ptr<LineMatcher> m(new LineMatcher());
  m->match_limit_ = match_limit;
  m->multiline_ = PatternMatchesNewline(pattern);

  // Compile even a literal: the regex must be valid either way, and errors read the same.
  int error = 0;
  PCRE2_SIZE error_offset = 0;
  const uint32_t options =
      PCRE2_UTF | PCRE2_MATCH_INVALID_UTF | PCRE2_MULTILINE | PCRE2_NEVER_BACKSLASH_C;
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                   options, &error, &error_offset, nullptr);
  if (code == nullptr) {
    PCRE2_UCHAR buffer[256];
    pcre2_get_error_message(error, buffer, sizeof(buffer));
    return Err(InvalidArgumentError("regex parse error at offset " + std::to_string(error_offset) +
                                    ": " + reinterpret_cast<const char*>(buffer)));
  }
  m->code_ = std::make_unique<Code>();
  m->code_->code = code;

  std::string literal;
  if (!m->multiline_ && !pattern.empty() && PatternAsLiteral(pattern, &literal)) {
    m->mode_ = Mode::kLiteral;
    m->literal_ = LiteralFinder(std::move(literal));
    return m;
  }
  m->code_->jit = pcre2_jit_compile(code, PCRE2_JIT_COMPLETE) == 0;
  if (!m->multiline_) {
    std::string required = RequiredLiteral(pattern);
    if (required.size() >= 3) {
      m->mode_ = Mode::kPrefiltered;
      m->literal_ = LiteralFinder(std::move(required));
      return m;
    }
  }
  m->mode_ = Mode::kRegex;
  return m;
}

void LineMatcher::ScratchDeleter::operator()(Scratch* s) const { delete s; }

LineMatcher::ScratchPtr LineMatcher::NewScratch() const {
  return ScratchPtr(new Scratch(mode_ == Mode::kLiteral ? nullptr : code_->code, match_limit_));
}

Result<bool> LineMatcher::RunRegex(const char* subject, size_t len, size_t from, Scratch& s,
                                   size_t* ms, size_t* me) const {
  const auto* sub = reinterpret_cast<PCRE2_SPTR>(subject);
  const int rc = code_->jit
                     ? pcre2_jit_match(code_->code, sub, len, from, 0, s.match_data_, s.context_)
                     : pcre2_match(code_->code, sub, len, from, 0, s.match_data_, s.context_);
  if (rc == PCRE2_ERROR_NOMATCH) return false;
  if (rc >= 0) {
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(s.match_data_);
    *ms = ov[0];
    *me = std::max(ov[0], ov[1]);  // \K can put the end before the start
    return true;
  }
  if (rc == PCRE2_ERROR_MATCHLIMIT || rc == PCRE2_ERROR_DEPTHLIMIT || rc == PCRE2_ERROR_HEAPLIMIT ||
      rc == PCRE2_ERROR_JIT_STACKLIMIT) {
    return Err(ResourceExhaustedError(
        "the regex exceeded its backtracking limit (nested quantifiers such as (a+)+ backtrack "
        "catastrophically); simplify the pattern"));
  }
  PCRE2_UCHAR buffer[256];
  pcre2_get_error_message(rc, buffer, sizeof(buffer));
  return Err(
      InternalError(std::string("regex match failed: ") + reinterpret_cast<const char*>(buffer)));
}

Result<bool> LineMatcher::Next(const char* buf, size_t len, size_t pos, size_t* start, size_t* end,
                               Scratch& scratch) const {
  auto line_start = [&](size_t from, size_t at) {
    const void* nl = at > from ? memrchr(buf + from, '\n', at - from) : nullptr;
    return nl == nullptr ? from : static_cast<size_t>(static_cast<const char*>(nl) - buf) + 1;
  };
  auto line_end = [&](size_t at) {
    const void* nl = at < len ? std::memchr(buf + at, '\n', len - at) : nullptr;
    return nl == nullptr ? len : static_cast<size_t>(static_cast<const char*>(nl) - buf);
  };
  while (pos < len) {
    if (mode_ == Mode::kLiteral || mode_ == Mode::kPrefiltered) {
      const char* hit = literal_.Find(buf + pos, len - pos);
      if (hit == nullptr) return false;
      const auto at = static_cast<size_t>(hit - buf);
      *start = line_start(pos, at);
      *end = line_end(at);
      if (mode_ == Mode::kLiteral) return true;
      size_t ms = 0;
      size_t me = 0;
      if (TALARIA_TRY(RunRegex(buf + *start, *end - *start, 0, scratch, &ms, &me))) return true;
      pos = *end + 1;
      continue;
    }
    size_t ms = 0;
    size_t me = 0;
    auto found = RunRegex(buf, len, pos, scratch, &ms, &me);
    if (!found) {
      *start = line_start(pos, std::min(len, pos));
      *end = line_end(pos);
      return Err(found.error());
    }
    if (!*found) return false;
    // An empty match after the final newline is not on any line.
    if (ms >= len && buf[len - 1] == '\n') return false;
    *start = line_start(pos, ms);
    if (multiline_) {
      const size_t last = me > ms ? std::min(me - 1, len - 1) : std::min(ms, len - 1);
      *end = buf[last] == '\n' ? last : line_end(last);
      return true;
    }
    *end = line_end(ms);
    if (me <= *end) return true;
    // The match ran across a line break (e.g. [^x]* or \s); confirm on the line alone.
    if (TALARIA_TRY(RunRegex(buf + *start, *end - *start, 0, scratch, &ms, &me))) return true;
    pos = *end + 1;
  }
  return false;
}

}  // namespace talaria::search
