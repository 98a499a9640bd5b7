// The text engine behind `patch`: find where an old_string sits in a file through a chain of
// increasingly tolerant matchers, and build the replacement so it fits the file (indentation,
// line endings, Unicode punctuation, unchanged lines kept byte for byte).
//
// The chain, tried in order, stops at the first matcher that finds anything:
//   exact                  byte equality (CRLF in the file read as LF when old_string has no CR)
//   line_trimmed           whole lines equal once trimmed, indented like old_string up to one
//                          uniform shift (a block moved in or out, trailing blanks differing)
//   whitespace_normalized  runs of spaces/tabs read as one space
//   indentation_flexible   whole lines equal once their indentation is dropped (non-uniform
//                          indentation differences; trailing whitespace must agree)
//   escape_normalized      literal \n \t \r in old_string read as the control characters
//   trimmed_boundary       first and last lines trimmed, the lines between exact
//   unicode_normalized     smart quotes, dashes, minus, ellipsis, NBSP and other Zs spaces read
//                          as ASCII, then exact or trimmed-line equality
//   block_anchor           first and last lines equal (trimmed, Unicode-normalized); similarity
//                          of the lines between; 3+ lines
//   context_aware          same line count, at least half the lines >= 0.8 similar; similarity
//                          of the aligned lines as a whole; 2+ non-blank lines
// The first seven are exact-ish (similarity 1.0); the last two are similarity-based. Unlike the
// original, every match names its matcher and similarity, and a similarity-based match below
// kMinApplySimilarity is refused (the best candidate is shown), never applied.
//
// Pure functions over strings: no I/O, no shared state; thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "talaria/base/status.h"

namespace talaria::editing {

enum class MatchStrategy : unsigned char {
  kExact,
  kLineTrimmed,
  kWhitespaceNormalized,
  kIndentationFlexible,
  kEscapeNormalized,
  kTrimmedBoundary,
  kUnicodeNormalized,
  kBlockAnchor,
  kContextAware,
};

// The wire name ("exact", "line_trimmed", ...).
std::string_view MatchStrategyName(MatchStrategy strategy);

// block_anchor and context_aware: they accept regions that only resemble old_string.
bool IsSimilarityStrategy(MatchStrategy strategy);

// Similarity-based matches below this are refused, never applied.
inline constexpr double kMinApplySimilarity = 0.9;

// One place old_string was found: a byte range of the content.
struct TextMatch {
  size_t begin = 0;
  size_t end = 0;
  double similarity = 1.0;  // 1.0 for the exact-ish matchers
};

// What the chain found: the first matcher that found anything and its matches (in file order,
// non-overlapping). `matches` is empty when nothing matched.
struct MatchSet {
  MatchStrategy strategy = MatchStrategy::kExact;
  std::vector<TextMatch> matches;
};

// Runs the matcher chain for `old_string` over `content`. When old_string holds no '\r', CRLF
// line endings in the content are matched as "\n" (ranges still refer to the original bytes and
// never split a "\r\n"). Similarity-based candidates are returned whatever their similarity;
// callers apply kMinApplySimilarity (FuzzyReplace and the V4A planner do).
// REQUIRES: old_string is not empty.
MatchSet FindMatches(std::string_view content, std::string_view old_string);

// The replacement text for one match, fitted to the file:
//  - escape_normalized: literal \n \t \r in new_string are unescaped like old_string's were;
//  - non-exact: new_string is re-indented from old_string's base indentation to the file's;
//    lines new_string leaves unchanged from old_string keep the file's bytes (Unicode
//    punctuation, trailing whitespace); unicode_normalized keeps the file's characters in
//    unchanged spans of changed lines too;
//  - line endings follow the matched region (or the file's majority when the region is a single
//    line): "\n" becomes "\r\n" in a CRLF region.
// `notes` (optional) receives one line per adjustment made.
std::string BuildReplacement(std::string_view content, const TextMatch& match,
                             MatchStrategy strategy, std::string_view old_string,
                             std::string_view new_string,
                             std::vector<std::string>* notes = nullptr);

// `text` with its bare "\n" turned into "\r\n" when most of `content`'s lines end in CRLF.
std::string FitLineEndings(std::string_view content, std::string_view text);

// Refuses new_string carrying \' or \" that old_string also carries but the matched regions do
// not: a transport escaping artifact that would be written literally. FailedPrecondition.
Status CheckEscapeDrift(std::string_view content, const std::vector<TextMatch>& matches,
                        std::string_view old_string, std::string_view new_string);

// True when the edit already landed: new_string (>= 8 non-space chars) is present exactly and
// old_string is not (line endings compared like FindMatches does).
bool IsAlreadyApplied(std::string_view content, std::string_view old_string,
                      std::string_view new_string);

enum class ReplaceAll : bool { kNo = false, kYes = true };

struct ReplaceOutcome {
  std::string content;  // the new content (equal to the input when no_change)
  MatchStrategy strategy = MatchStrategy::kExact;
  double similarity = 1.0;  // the lowest over the applied matches
  size_t replacements = 0;
  bool no_change = false;  // the edit was already applied; nothing to write
  std::vector<std::string> notes;
};

// Replaces old_string with new_string in `content`.
// Errors (the message is what the model sees):
//  InvalidArgument      empty or whitespace-only old_string; old_string == new_string.
//  NotFound             "Could not find a match for old_string in the file" plus a
//                       "Did you mean one of these sections?" snippet when one is close.
//  FailedPrecondition   several matches without replace_all (up to 5 "L<n>: snippet" rows);
//                       replace_all over several similarity-based matches; a similarity-based
//                       match below kMinApplySimilarity (best candidate shown); escape drift.
// An already-applied edit (see IsAlreadyApplied, checked when old_string is not found exactly)
// succeeds with no_change set and a note telling the model not to re-send it.
Result<ReplaceOutcome> FuzzyReplace(std::string_view content, std::string_view old_string,
                                    std::string_view new_string, ReplaceAll replace_all);

// Error text builders shared with the V4A planner.
// "  L<line>: <snippet>" rows for up to `cap` matches, then "  ... and N more".
std::string FormatMatchLocations(std::string_view content, const std::vector<TextMatch>& matches,
                                 MatchStrategy strategy, size_t cap = 5);
// "Did you mean one of these sections?" body: numbered snippets of the regions closest to
// old_string, plus a whitespace diagnosis when the best line differs only in whitespace.
// Empty when nothing is close.
std::string DescribeClosestRegions(std::string_view content, std::string_view old_string);
// Refusal text for a similarity-based candidate below kMinApplySimilarity.
std::string DescribeRefusedCandidate(std::string_view content, const TextMatch& match,
                                     MatchStrategy strategy);

// 2 * LCS(a, b) / (|a| + |b|) over bytes; 1.0 for two empty strings.
double SimilarityRatio(std::string_view a, std::string_view b);

// 1-based line number of byte `offset`.
size_t LineNumberAt(std::string_view content, size_t offset);

}  // namespace talaria::editing
