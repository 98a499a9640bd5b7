// LineMatcher: finds the lines of a buffer that match a search_files content pattern.
//
// Three strategies, chosen once per pattern:
//   - literal: the pattern has no regex syntax once escapes like `\.` are undone; a SIMD scan
//     for two rare bytes of the needle (AVX2 when the CPU has it, SSE2 otherwise) + memcmp;
//   - prefiltered regex: the regex has a literal every match must contain; the literal scan
//     finds candidate lines and PCRE2 confirms each line on its own;
//   - plain regex: PCRE2 (JIT) over the whole buffer, each hit confirmed on its own line.
// A pattern that can match a newline (`\n` or a literal newline) runs in multiline mode: one
// match may cover several lines, all of which are reported (ripgrep's -U, which the original
// switches on automatically for such patterns).
// Every PCRE2 match runs with a match limit, a heap limit and a bounded JIT stack, so a
// catastrophic pattern fails with ResourceExhausted instead of running away.
// Thread-safety: a LineMatcher is immutable and shared; each thread uses its own Scratch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "talaria/base/status.h"

namespace talaria::search {

// Finds a fixed byte string with a SIMD scan. Immutable.
class LiteralFinder {
 public:
  LiteralFinder() = default;
  explicit LiteralFinder(std::string needle);
  // First occurrence of the needle in [hay, hay+n), or nullptr. An empty needle matches at hay.
  const char* Find(const char* hay, size_t n) const;
  const std::string& needle() const { return needle_; }

 private:
  std::string needle_;
  size_t i1_ = 0;  // offsets of the two rarest bytes of the needle
  size_t i2_ = 0;
};

// Number of '\n' bytes in [p, p+n) (SIMD).
size_t CountNewlines(const char* p, size_t n);

// The literal text of `pattern` when it contains no regex syntax (escaped punctuation such
// as `\.` counts as literal); false otherwise.
bool PatternAsLiteral(std::string_view pattern, std::string* literal);

// The longest literal every match of `pattern` must contain (conservative: empty when unsure,
// e.g. top-level alternation, `(?` groups, `\Q`).
std::string RequiredLiteral(std::string_view pattern);

// True when the pattern can match a line break: an unescaped newline character or a `\n`
// escape preceded by an even number of backslashes.
bool PatternMatchesNewline(std::string_view pattern);

class LineMatcher {
 public:
  class Scratch;
  struct ScratchDeleter {
    void operator()(Scratch* s) const;
  };
  using ScratchPtr = std::unique_ptr<Scratch, ScratchDeleter>;

  // InvalidArgument with PCRE2's message and the offset for a pattern that does not compile.
  static Result<std::unique_ptr<LineMatcher>> Create(std::string_view pattern,
                                                     uint32_t match_limit);
  ~LineMatcher();
  LineMatcher(const LineMatcher&) = delete;
  LineMatcher& operator=(const LineMatcher&) = delete;

  // Per-thread state (match data, match context, JIT stack).
  ScratchPtr NewScratch() const;

  bool multiline() const { return multiline_; }
  bool is_literal() const { return mode_ == Mode::kLiteral; }

  // Finds the first matching region at or after `pos` (which must be a line start) in
  // buf[0, len). On success sets [*start, *end): the start of the first matching line and the
  // end (the '\n' position, or len) of the last one — one line except in multiline mode.
  // Returns false when there is none. ResourceExhausted when PCRE2 hit a limit (the offending
  // line is [*start, *end)).
  Result<bool> Next(const char* buf, size_t len, size_t pos, size_t* start, size_t* end,
                    Scratch& scratch) const;

 private:
  enum class Mode : unsigned char { kLiteral, kPrefiltered, kRegex };
  struct Code;

  LineMatcher() = default;
  // Runs PCRE2 on subject[0, len) from `from`; 1 match (ovector in scratch), 0 none, or error.
  Result<bool> RunRegex(const char* subject, size_t len, size_t from, Scratch& scratch, size_t* ms,
                        size_t* me) const;

  Mode mode_ = Mode::kRegex;
  bool multiline_ = false;
  LiteralFinder literal_;
  std::unique_ptr<Code> code_;
  uint32_t match_limit_ = 0;
};

}  // namespace talaria::search
