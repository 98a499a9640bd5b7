// Turns the text a user or model typed into FTS5 MATCH expressions that cannot fail to parse:
// every term becomes a quoted FTS5 string (so AND, OR, NOT, NEAR, parentheses, colons and
// stray quotes are just text), implicitly ANDed. Kept from the input: balanced "quoted phrases"
// and a trailing * on a word of three or more characters (prefix search).
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

  bool empty() const { return match.empty() && substrings.empty(); }
};

// At most this many terms are used; the rest of a longer query is ignored.
inline constexpr size_t kMaxQueryTerms = 16;

FtsQuery BuildFtsQuery(std::string_view query);

}  // namespace talaria::store
