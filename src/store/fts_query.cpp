#include "store/fts_query.h"

#include <algorithm>
#include <cstdint>

#include "talaria/base/utf8.h"

namespace talaria::store {
namespace {

// Decodes the code point at `text[i]` (well-formed or not: a bad byte counts as one character)
// and advances `i` past it.
char32_t NextCodePoint(std::string_view text, size_t& i) {
  size_t len = Utf8SequenceLength(text.substr(i));
  if (len == 0) {
    ++i;
    return 0xFFFD;
  }
  auto b = [&](size_t k) { return static_cast<uint8_t>(text[i + k]); };
  char32_t cp = 0;
  switch (len) {
    case 1:
      cp = b(0);
      break;
    case 2:
      cp = ((b(0) & 0x1Fu) << 6) | (b(1) & 0x3Fu);
      break;
    case 3:
      cp = ((b(0) & 0x0Fu) << 12) | ((b(1) & 0x3Fu) << 6) | (b(2) & 0x3Fu);
      break;
    default:
      cp = ((b(0) & 0x07u) << 18) | ((b(1) & 0x3Fu) << 12) | ((b(2) & 0x3Fu) << 6) | (b(3) & 0x3Fu);
      break;
  }
  i += len;
  return cp;
}

bool IsCjkCodePoint(char32_t cp) {
  return (cp >= 0x3040 && cp <= 0x30FF) ||  // Hiragana, Katakana
         (cp >= 0x3400 && cp <= 0x4DBF) ||  // Han extension A
         (cp >= 0x4E00 && cp <= 0x9FFF) ||  // Han
         (cp >= 0xAC00 && cp <= 0xD7AF) ||  // Hangul syllables
         (cp >= 0xF900 && cp <= 0xFAFF) ||  // Han compatibility
         (cp >= 0x20000 && cp <= 0x323AF);  // Han extensions B-H
}

size_t CodePointCount(std::string_view text) {
  size_t n = 0;
  for (size_t i = 0; i < text.size(); ++n) NextCodePoint(text, i);
  return n;
}

// True when the unicode61 tokenizer would find a token in `term`: some letter or digit (any
// non-ASCII character may be one). A term of punctuation only would make an empty phrase.
bool HasTokenCharacter(std::string_view term) {
  for (char c : term) {
    auto u = static_cast<unsigned char>(c);
    if (u >= 0x80 || (u >= '0' && u <= '9') || (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z'))
      return true;
  }
  return false;
}

// ASCII controls count as spaces: FTS5 reads its expression as a C string, so a NUL inside a
// quoted term would end it ("unterminated string").
bool IsSpace(char c) { return c == ' ' || (static_cast<unsigned char>(c) < 0x20 || c == 0x7f); }

struct Term {
  std::string text;
  bool prefix = false;       // a bare word that ended in '*'
  bool is_operator = false;  // operator mode: a bare AND, OR or NOT
};

bool IsOperatorWord(std::string_view word) {
  return word == "AND" || word == "OR" || word == "NOT";
}

std::vector<Term> SplitTerms(std::string_view query, bool operators) {
  std::vector<Term> terms;
  size_t i = 0;
  while (i < query.size() && terms.size() < kMaxQueryTerms) {
    if (IsSpace(query[i])) {
      ++i;
      continue;
    }
    Term term;
    if (query[i] == '"') {
      // A phrase up to the closing quote; an unclosed one runs to the end.
      size_t close = query.find('"', i + 1);
      if (close == std::string_view::npos) close = query.size();
      term.text = std::string(query.substr(i + 1, close - i - 1));
      i = close + 1;
    } else {
      size_t end = i;
      while (end < query.size() && !IsSpace(query[end]) && query[end] != '"') ++end;
      std::string_view word = query.substr(i, end - i);
      i = end;
      if (operators && IsOperatorWord(word)) {
        term.text = std::string(word);
        term.is_operator = true;
        terms.push_back(std::move(term));
        continue;
      }
      while (word.ends_with('*')) {
        word.remove_suffix(1);
        term.prefix = true;
      }
      term.text = std::string(word);
    }
    if (HasTokenCharacter(term.text)) terms.push_back(std::move(term));
  }
  return terms;
}

// `text` as an FTS5 string: inside double quotes nothing is syntax but the quote itself.
void AppendQuoted(std::string& out, std::string_view text, bool prefix) {
  if (!out.empty()) out += ' ';
  out += '"';
  for (char c : text) {
    if (c == '"') out += '"';
    out += IsSpace(c) ? ' ' : c;  // (a control character inside a "phrase")
  }
  out += '"';
  if (prefix) out += '*';
}

// Operator mode: drops an operator at the start or the end and all but the last of a run, so
// every operator stands between two terms.
std::vector<Term> SanitizeOperators(std::vector<Term> terms, bool& dropped) {
  std::vector<Term> out;
  for (Term& t : terms) {
    if (t.is_operator && (out.empty() || out.back().is_operator)) {
      if (!out.empty()) out.back() = std::move(t);  // of a run, the last
      dropped = true;
      continue;
    }
    out.push_back(std::move(t));
  }
  if (!out.empty() && out.back().is_operator) {
    out.pop_back();
    dropped = true;
  }
  return out;
}

}  // namespace

bool ContainsCjk(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    // ASCII and two-byte sequences can never be CJK: skip them without decoding.
    if (static_cast<unsigned char>(text[i]) < 0xE0) {
      ++i;
      continue;
    }
    if (IsCjkCodePoint(NextCodePoint(text, i))) return true;
  }
  return false;
}

FtsQuery BuildFtsQuery(std::string_view query, const FtsQueryOptions& options) {
  FtsQuery out;
  std::vector<Term> terms = SplitTerms(query, options.operators);
  bool dropped = false;
  if (options.operators) terms = SanitizeOperators(std::move(terms), dropped);
  // Strip a leading operator once more: sanitizing a leading run can leave one in front.
  while (!terms.empty() && terms.front().is_operator) {
    terms.erase(terms.begin());
    dropped = true;
  }
  if (terms.empty()) return out;
  for (const Term& t : terms) {
    if (t.is_operator) continue;
    if (out.first_term.empty()) out.first_term = t.text;
    out.cjk = out.cjk || ContainsCjk(t.text);
  }
  bool has_short = false;
  for (const Term& t : terms) {
    if (!t.is_operator && out.cjk && CodePointCount(t.text) < 3) has_short = true;
  }
  // A CJK query with terms too short for a trigram checks those as plain substrings, which
  // cannot take part in an FTS5 expression: its operators are dropped, and so is a term after
  // NOT (leaving it out widens the result; requiring it would invert it).
  const bool keep_operators = options.operators && !(out.cjk && has_short);
  bool skip_next = false;
  for (const Term& t : terms) {
    if (t.is_operator) {
      if (keep_operators) {
        out.match += ' ';
        out.match += t.text;
      } else {
        dropped = true;
        skip_next = t.text == "NOT";
      }
      continue;
    }
    if (skip_next) {
      skip_next = false;
      continue;
    }
    if (!out.cjk) {
      // A prefix of one or two characters matches so many words that FTS5 (which merges the
      // postings of every matching word before returning the first row) reads most of the
      // index: such a term is a word.
      AppendQuoted(out.match, t.text, t.prefix && CodePointCount(t.text) >= 3);
    } else if (CodePointCount(t.text) >= 3) {
      // The trigram tokenizer matches any substring of three or more characters, so a
      // prefix mark adds nothing.
      AppendQuoted(out.match, t.text, false);
    } else {
      out.substrings.push_back(t.text);
    }
  }
  if (!out.match.empty() && out.match.front() == ' ') out.match.erase(0, 1);
  if (dropped) {
    out.note = keep_operators || !options.operators
                   ? "operators at the start or end of the query, or repeated, were ignored"
                   : "AND/OR/NOT were ignored: the query has CJK terms of one or two characters";
  }
  return out;
}

namespace {
bool IsContinuationByte(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }
}  // namespace

std::string SubstringSnippet(std::string_view text, std::string_view term, size_t context) {
  size_t at = text.find(term);
  if (at == std::string_view::npos) at = 0;
  size_t begin = at > context ? at - context : 0;
  while (begin > 0 && IsContinuationByte(text[begin])) --begin;
  size_t end = std::min(text.size(), at + term.size() + context);
  while (end < text.size() && IsContinuationByte(text[end])) ++end;
  std::string out = begin > 0 ? "..." : "";
  out.append(text.substr(begin, at - begin));
  if (at < text.size() && text.substr(at, term.size()) == term) {
    out += ">>>";
    out.append(term);
    out += "<<<";
    out.append(text.substr(at + term.size(), end - at - term.size()));
  } else {
    out.append(text.substr(at, end - at));
  }
  if (end < text.size()) out += "...";
  return out;
}

}  // namespace talaria::store
