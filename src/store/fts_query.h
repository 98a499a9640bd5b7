// Turns the text a user or model typed into FTS5 MATCH expressions that cannot fail to parse:
// every term becomes a quoted FTS5 string (so AND, OR, NOT, NEAR, parentheses, colons and
// stray quotes are just text), implicitly ANDed. Kept from the input: balanced "quoted phrases"
// and a trailing * on a word of three or more characters (prefix search). In operator mode
// (session_search) the bare words AND, OR and NOT stay operators, sanitized so the expression
// always parses: one at the start or end is dropped, of a run of them the last is kept.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace talaria::store {

// True when `text` holds a character of a script written without spaces between words (Han,
// Hiragana, Katakana) or Hangul: text the unicode61 tokenizer cannot split into words, which the
// trigram index covers instead.
bool ContainsCjk(std::string_view text);

struct FtsQuery {
  // A query with CJK text is answered from the trigram index (over the messages holding CJK);
  // otherwise from the word index.
  bool cjk = false;
  // The MATCH expression: for the word index, or (cjk) the terms of three or more characters
  // for the trigram index. Empty when there is none.
  std::string match;
  // cjk only: terms shorter than a trigram, checked as plain substrings of the CJK messages.
  std::vector<std::string> substrings;
  // The first term as typed (unquoted), to place a snippet when no MATCH expression exists.
  std::string first_term;
  // Operator mode: how the query was read when not as typed (operators dropped), else empty.
  std::string note;

  bool empty() const { return match.empty() && substrings.empty(); }
};

// At most this many terms are used; the rest of a longer query is ignored.
inline constexpr size_t kMaxQueryTerms = 16;

struct FtsQueryOptions {
  bool operators = false;  // AND, OR, NOT (upper case, bare) are FTS5 operators
};

FtsQuery BuildFtsQuery(std::string_view query, const FtsQueryOptions& options = {});

// The text around the first occurrence of `term` (`context` bytes each side), the term marked
// >>>like this<<<, never splitting a UTF-8 character: the snippet of a substring match, which
// FTS5's snippet() cannot place.
std::string SubstringSnippet(std::string_view text, std::string_view term, size_t context);

}  // namespace talaria::store
