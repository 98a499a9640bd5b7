#include "store/fts_query.h"

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

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }

struct Term {
  std::string text;
  bool prefix = false;  // a bare word that ended in '*'
};

std::vector<Term> SplitTerms(std::string_view query) {
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
    out += c;
  }
  out += '"';
  if (prefix) out += '*';
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

FtsQuery BuildFtsQuery(std::string_view query) {
  FtsQuery out;
  std::vector<Term> terms = SplitTerms(query);
  if (terms.empty()) return out;
  out.first_term = terms.front().text;
  for (const Term& t : terms) out.cjk = out.cjk || ContainsCjk(t.text);
  for (const Term& t : terms) {
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
  return out;
}

}  // namespace talaria::store
