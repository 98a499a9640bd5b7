#include "html/text_runs.h"

#include <array>
#include <cstdint>
#include <cstring>

#include "talaria/base/ascii.h"

namespace talaria::html {
namespace {

constexpr char32_t kFirstMarker = 0xE000;
constexpr size_t kMaxMarkers = 0xF900 - 0xE000;  // the BMP's private use area
// A shorter core saves libgumbo less than the marker and its restoring cost.
constexpr size_t kMinCore = 6;

// Whitespace as the tokenizer sees it (CR is normalized to LF before it).
constexpr bool IsTagSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r';
}

constexpr bool IsAsciiAlpha(char c) { return ((c | 0x20) >= 'a' && (c | 0x20) <= 'z'); }

// ASCII bytes a marked core may hold: printable but '&', '<', '>', plus tab, LF and FF.
constexpr std::array<bool, 128> kPlainAscii = [] {
  std::array<bool, 128> t{};
  for (int c = 0x20; c < 0x7F; ++c) t[c] = c != '&' && c != '<' && c != '>';
  t['\t'] = t['\n'] = t['\f'] = true;
  return t;
}();

// A code point in a private use area: the markers' own, or any a marker could be mistaken for.
constexpr bool IsPrivateUse(uint32_t cp) { return (cp >= 0xE000 && cp <= 0xF8FF) || cp >= 0xF0000; }

// Whether the document holds private-use characters, raw or as numeric character references:
// then a marker could not be told from the page's own text.
bool HoldsPrivateUse(std::string_view s) {
  constexpr uint64_t kOnes = 0x0101010101010101ULL;
  constexpr uint64_t kHighs = 0x8080808080808080ULL;
  const size_t n = s.size();
  size_t i = 0;
  while (i < n) {
    // Eight ASCII bytes without '&' at a time: most of a page.
    if (i + 8 <= n) {
      uint64_t word = 0;
      std::memcpy(&word, s.data() + i, sizeof word);
      const uint64_t amp = word ^ (kOnes * '&');
      if (((word | ((amp - kOnes) & ~amp)) & kHighs) == 0) {
        i += 8;
        continue;
      }
    }
    const auto c = static_cast<unsigned char>(s[i]);
    const auto next = i + 1 < n ? static_cast<unsigned char>(s[i + 1]) : 0;
    ++i;
    if (c == '&') {
      if (next != '#') continue;
      size_t j = i + 1;
      const bool hex = j < n && (s[j] == 'x' || s[j] == 'X');
      if (hex) ++j;
      uint32_t value = 0;
      for (; j < n; ++j) {
        const char d = s[j];
        uint32_t digit = 0;
        if (d >= '0' && d <= '9') {
          digit = static_cast<uint32_t>(d - '0');
        } else if (hex && (d | 0x20) >= 'a' && (d | 0x20) <= 'f') {
          digit = static_cast<uint32_t>((d | 0x20) - 'a' + 10);
        } else {
          break;
        }
        value = value * (hex ? 16 : 10) + digit;
        if (value > 0x10FFFF) break;  // out of range: the parser turns it into U+FFFD
      }
      if (value <= 0x10FFFF && IsPrivateUse(value)) return true;
      continue;
    }
    if (c == 0xEE) return true;                                  // U+E000..U+EFFF
    if (c == 0xEF && next >= 0x80 && next <= 0xA3) return true;  // U+F000..U+F8FF
    if (c == 0xF3 && next >= 0xB0) return true;                  // U+F0000..
    if (c == 0xF4) return true;                                  // U+100000..
  }
  return false;
}

// Whether every byte of `core` is read by libgumbo as one plain character of text: no markup
// or reference characters, no CR/NUL/controls it rewrites, valid UTF-8 without C1 controls,
// surrogates, noncharacters or private use.
bool IsPlainText(std::string_view core) {
  const size_t n = core.size();
  size_t i = 0;
  while (i < n) {
    const auto c = static_cast<unsigned char>(core[i]);
    if (c < 0x80) {
      if (!kPlainAscii[c]) return false;
      ++i;
      continue;
    }
    auto cont = [&](size_t k) {
      return i + k < n && (static_cast<unsigned char>(core[i + k]) & 0xC0) == 0x80;
    };
    auto byte = [&](size_t k) { return static_cast<uint32_t>(core[i + k]) & 0x3F; };
    uint32_t cp = 0;
    if (c >= 0xC2 && c <= 0xDF) {
      if (!cont(1)) return false;
      cp = ((c & 0x1Fu) << 6) | byte(1);
      if (cp < 0xA0) return false;  // C1 controls
      i += 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      if (!cont(1) || !cont(2)) return false;
      cp = ((c & 0x0Fu) << 12) | (byte(1) << 6) | byte(2);
      if (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
      i += 3;
    } else if (c >= 0xF0 && c <= 0xF4) {
      if (!cont(1) || !cont(2) || !cont(3)) return false;
      cp = ((c & 0x07u) << 18) | (byte(1) << 12) | (byte(2) << 6) | byte(3);
      if (cp < 0x10000 || cp > 0x10FFFF) return false;
      i += 4;
    } else {
      return false;
    }
    if (IsPrivateUse(cp) || (cp >= 0xFDD0 && cp <= 0xFDEF) || (cp & 0xFFFE) == 0xFFFE) {
      return false;
    }
  }
  return true;
}

// Just past the '>' ending the tag whose name starts at `i`, read by the HTML5 tokenizer's
// rules (a quote counts only where an attribute value starts); s.size() when the input ends
// inside the tag.
size_t EndOfTag(std::string_view s, size_t i) {
  const size_t n = s.size();
  while (i < n && !IsTagSpace(s[i]) && s[i] != '/' && s[i] != '>') ++i;
  for (;;) {
    while (i < n && (IsTagSpace(s[i]) || s[i] == '/')) ++i;
    if (i >= n) return n;
    if (s[i] == '>') return i + 1;
    ++i;  // an attribute name's first character may be '='
    while (i < n && !IsTagSpace(s[i]) && s[i] != '/' && s[i] != '>' && s[i] != '=') ++i;
    while (i < n && IsTagSpace(s[i])) ++i;
    if (i >= n) return n;
    if (s[i] != '=') continue;
    ++i;
    while (i < n && IsTagSpace(s[i])) ++i;
    if (i >= n) return n;
    const char quote = s[i];
    if (quote == '"' || quote == '\'') {
      const size_t close = s.find(quote, i + 1);
      if (close == std::string_view::npos) return n;
      i = close + 1;
    } else if (quote == '>') {
      return i + 1;
    } else {
      while (i < n && !IsTagSpace(s[i]) && s[i] != '>') ++i;
    }
  }
}

// Elements whose content the tokenizer reads as text up to their end tag.
bool IsRawTextElement(std::string_view lower_name) {
  static constexpr std::array<std::string_view, 9> kNames = {
      "script", "style", "textarea", "title", "xmp", "iframe", "noembed", "noframes", "noscript"};
  for (std::string_view name : kNames) {
    if (name == lower_name) return true;
  }
  return false;
}

// Where the end tag "</name" (followed by whitespace, '/' or '>') starts at or after `from`.
size_t FindEndTag(std::string_view s, std::string_view lower_name, size_t from) {
  for (size_t i = s.find("</", from); i != std::string_view::npos; i = s.find("</", i + 2)) {
    const size_t after = i + 2 + lower_name.size();
    if (after >= s.size()) return std::string_view::npos;
    if (EqualsIgnoringAsciiCase(s.substr(i + 2, lower_name.size()), lower_name) &&
        (IsTagSpace(s[after]) || s[after] == '/' || s[after] == '>')) {
      return i;
    }
  }
  return std::string_view::npos;
}

size_t PastNext(std::string_view s, std::string_view what, size_t from) {
  const size_t at = s.find(what, from);
  return at == std::string_view::npos ? s.size() : at + what.size();
}

// The end of the markup that starts with the '<' at `lt` (a tag with, for raw-text elements,
// their text; a comment, doctype, CDATA section or bogus comment), or lt + 1 when that '<' is
// text. Everything up to the returned position is left as written.
size_t EndOfMarkup(std::string_view s, size_t lt) {
  const size_t n = s.size();
  if (lt + 1 >= n) return n;
  const char next = s[lt + 1];
  if (IsAsciiAlpha(next)) {
    size_t name_end = lt + 1;
    while (name_end < n && !IsTagSpace(s[name_end]) && s[name_end] != '/' && s[name_end] != '>')
      ++name_end;
    const size_t end = EndOfTag(s, lt + 1);
    const std::string_view name = s.substr(lt + 1, name_end - lt - 1);
    if (name.size() > 9) return end;
    char lower[9];
    for (size_t k = 0; k < name.size(); ++k) lower[k] = AsciiLower(name[k]);
    const std::string_view lower_name(lower, name.size());
    if (lower_name == "plaintext") return n;
    if (!IsRawTextElement(lower_name) || end >= n) return end;
    const size_t close = FindEndTag(s, lower_name, end);
    return close == std::string_view::npos ? n : close;
  }
  if (next == '/') {
    if (lt + 2 < n && IsAsciiAlpha(s[lt + 2])) return EndOfTag(s, lt + 2);
    return PastNext(s, ">", lt + 2);  // "</>" or a bogus comment
  }
  if (next == '!') {
    const std::string_view rest = s.substr(lt);
    if (rest.starts_with("<!--")) {
      if (rest.substr(4).starts_with(">")) return lt + 5;
      if (rest.substr(4).starts_with("->")) return lt + 6;
      const size_t a = s.find("-->", lt + 4);
      const size_t b = s.find("--!>", lt + 4);
      if (a == std::string_view::npos && b == std::string_view::npos) return n;
      return a < b ? a + 3 : b + 4;
    }
    if (rest.starts_with("<![CDATA[")) return PastNext(s, "]]>", lt + 9);
    return PastNext(s, ">", lt + 2);  // doctype or bogus comment
  }
  if (next == '?') return PastNext(s, ">", lt + 2);
  return lt + 1;
}

void AppendMarker(std::string& out, size_t k) {
  const auto cp = static_cast<uint32_t>(kFirstMarker + k);
  out += static_cast<char>(0xE0 | (cp >> 12));
  out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
  out += static_cast<char>(0x80 | (cp & 0x3F));
}

// The marker index at `p` (3 bytes), or -1 when none starts there.
long MarkerAt(const unsigned char* p) {
  if ((p[0] & 0xFE) != 0xEE || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80) return -1;
  const uint32_t cp = ((p[0] & 0x0Fu) << 12) | ((p[1] & 0x3Fu) << 6) | (p[2] & 0x3Fu);
  if (cp < kFirstMarker || cp >= kFirstMarker + kMaxMarkers) return -1;
  return static_cast<long>(cp - kFirstMarker);
}

}  // namespace

MarkedHtml MarkTextRuns(std::string_view html) {
  MarkedHtml marked;
  if (html.size() < 2 * kMinCore || HoldsPrivateUse(html)) return marked;
  std::string& out = marked.html;
  out.reserve(html.size());
  const size_t n = html.size();
  size_t flushed = 0;  // html[flushed, i) is still to be copied as written
  size_t i = 0;
  while (i < n && marked.runs.size() < kMaxMarkers) {
    const void* found = std::memchr(html.data() + i, '<', n - i);
    const size_t lt =
        found ? static_cast<size_t>(static_cast<const char*>(found) - html.data()) : n;
    // The run html[i, lt): its core without whitespace and, at the end, without the
    // characters that leave a comment or CDATA section half-closed.
    size_t b = i;
    size_t e = lt;
    while (b < e && (IsTagSpace(html[b]) || html[b] == '-')) ++b;
    while (e > b && (IsTagSpace(html[e - 1]) || html[e - 1] == '-' || html[e - 1] == '!' ||
                     html[e - 1] == ']')) {
      --e;
    }
    if (e - b >= kMinCore && IsPlainText(html.substr(b, e - b))) {
      out.append(html, flushed, b - flushed);
      AppendMarker(out, marked.runs.size());
      marked.runs.push_back(html.substr(b, e - b));
      flushed = e;
    }
    if (lt >= n) break;
    i = EndOfMarkup(html, lt);
  }
  if (marked.runs.empty()) {
    out.clear();
    return marked;
  }
  out.append(html, flushed);
  return marked;
}

bool RestoreTextRuns(GumboNode* root, std::span<const std::string_view> runs, GumboArena& arena) {
  std::vector<unsigned char> seen(runs.size());
  size_t found = 0;
  std::string text;
  std::vector<GumboNode*> stack{root};
  while (!stack.empty()) {
    GumboNode* node = stack.back();
    stack.pop_back();
    if (node->type == GUMBO_NODE_DOCUMENT || node->type == GUMBO_NODE_ELEMENT ||
        node->type == GUMBO_NODE_TEMPLATE) {
      const GumboVector& children =
          node->type == GUMBO_NODE_DOCUMENT ? node->v.document.children : node->v.element.children;
      for (unsigned k = 0; k < children.length; ++k) {
        stack.push_back(static_cast<GumboNode*>(children.data[k]));
      }
      continue;
    }
    const auto* p = reinterpret_cast<const unsigned char*>(node->v.text.text);
    if (p == nullptr) continue;
    const size_t length = std::strlen(node->v.text.text);
    size_t copied = 0;
    text.clear();
    for (size_t k = 0; k + 2 < length; ++k) {
      if ((p[k] & 0xFE) != 0xEE) continue;
      const long m = MarkerAt(p + k);
      if (m < 0) continue;  // other text in U+E000..U+FFFF (CJK punctuation, fullwidth forms)
      if (static_cast<size_t>(m) >= runs.size()) return false;
      if (seen[m]++ != 0) return false;
      ++found;
      text.append(reinterpret_cast<const char*>(p) + copied, k - copied);
      text += runs[m];
      copied = k + 3;
      k += 2;
    }
    if (copied == 0) continue;
    text.append(reinterpret_cast<const char*>(p) + copied, length - copied);
    auto* restored = static_cast<char*>(GumboArena::Allocate(&arena, text.size() + 1));
    std::memcpy(restored, text.data(), text.size());
    restored[text.size()] = '\0';
    node->v.text.text = restored;
  }
  return found == runs.size();
}

}  // namespace talaria::html
