#include "html/text_runs.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>

#include "talaria/base/ascii.h"

namespace talaria::html {
namespace {

constexpr char32_t kFirstMarker = 0xE000;
constexpr size_t kBmpMarkers = 0xF900 - 0xE000;  // the BMP's private use area
constexpr char32_t kFirstPlaneMarker = 0xF0000;  // then plane 15's (4 bytes each)
constexpr size_t kMaxMarkers = kBmpMarkers + (0xFFFFE - 0xF0000);
// A shorter core saves libgumbo less than the marker and its restoring cost.
constexpr size_t kMinCore = 6;
// An attribute value costs libgumbo less per byte than text, and its marker more to check.
constexpr size_t kMinAttributeValue = 16;

// Whitespace as the tokenizer sees it (CR is normalized to LF before it).
constexpr bool IsTagSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r';
}

constexpr bool IsAsciiAlpha(char c) { return ((c | 0x20) >= 'a' && (c | 0x20) <= 'z'); }

// ASCII bytes a marked core may hold: printable plus tab, LF and FF, but for text '&', '<'
// and '>' (markup and references), for an attribute value '&' (references). Raw text reads
// all three as text.
using AsciiTable = std::array<bool, 128>;
constexpr AsciiTable PlainAsciiWithout(std::string_view excluded) {
  AsciiTable t{};
  for (int c = 0x20; c < 0x7F; ++c) t[c] = excluded.find(static_cast<char>(c)) == excluded.npos;
  t['\t'] = t['\n'] = t['\f'] = true;
  return t;
}
constexpr AsciiTable kTextAscii = PlainAsciiWithout("&<>");
constexpr AsciiTable kAttributeAscii = PlainAsciiWithout("&");
constexpr AsciiTable kRawTextAscii = PlainAsciiWithout("");

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

// Whether every byte of `core` is read by libgumbo as one plain character: no markup or
// reference characters (those `ascii` leaves out), no CR/NUL/controls it rewrites, valid
// UTF-8 without C1 controls, surrogates, noncharacters or private use.
bool IsPlainText(std::string_view core, const AsciiTable& ascii = kTextAscii) {
  const size_t n = core.size();
  size_t i = 0;
  while (i < n) {
    const auto c = static_cast<unsigned char>(core[i]);
    if (c < 0x80) {
      if (!ascii[c]) return false;
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

// An attribute as the scan read it: its name, and its value when quoted (value_end 0 when not).
struct AttributeSpan {
  std::string_view name;
  size_t value_begin = 0;
  size_t value_end = 0;
};

// Just past the '>' ending the tag whose name starts at `i`, read by the HTML5 tokenizer's
// rules (a quote counts only where an attribute value starts); s.size() when the input ends
// inside the tag. Its attributes go to `attributes` when given.
size_t EndOfTag(std::string_view s, size_t i, std::vector<AttributeSpan>* attributes = nullptr) {
  const size_t n = s.size();
  while (i < n && !IsTagSpace(s[i]) && s[i] != '/' && s[i] != '>') ++i;
  for (;;) {
    while (i < n && (IsTagSpace(s[i]) || s[i] == '/')) ++i;
    if (i >= n) return n;
    if (s[i] == '>') return i + 1;
    const size_t name_begin = i;
    ++i;  // an attribute name's first character may be '='
    while (i < n && !IsTagSpace(s[i]) && s[i] != '/' && s[i] != '>' && s[i] != '=') ++i;
    AttributeSpan attribute{s.substr(name_begin, i - name_begin)};
    while (i < n && IsTagSpace(s[i])) ++i;
    if (i >= n) return n;
    if (s[i] != '=') {
      if (attributes != nullptr) attributes->push_back(attribute);
      continue;
    }
    ++i;
    while (i < n && IsTagSpace(s[i])) ++i;
    if (i >= n) return n;
    const char quote = s[i];
    if (quote == '"' || quote == '\'') {
      const size_t close = s.find(quote, i + 1);
      if (close == std::string_view::npos) return n;
      attribute.value_begin = i + 1;
      attribute.value_end = close;
      i = close + 1;
    } else if (quote == '>') {
      return i + 1;
    } else {
      while (i < n && !IsTagSpace(s[i]) && s[i] != '>') ++i;
    }
    if (attributes != nullptr) attributes->push_back(attribute);
  }
}

// Elements whose content the tokenizer reads as text up to their end tag (noscript: not in
// libgumbo, which parses as if scripting were off, but the scan leaves it alone either way).
bool IsRawTextElement(std::string_view lower_name) {
  static constexpr std::array<std::string_view, 9> kNames = {
      "script", "style", "textarea", "title", "xmp", "iframe", "noembed", "noframes", "noscript"};
  for (std::string_view name : kNames) {
    if (name == lower_name) return true;
  }
  return false;
}

// The raw-text elements whose content can be marked (the tokenizer reads no references in
// them), by tag; GUMBO_TAG_UNKNOWN for the others (title and textarea read references).
GumboTag MarkableRawTextTag(std::string_view lower_name) {
  if (lower_name == "script") return GUMBO_TAG_SCRIPT;
  if (lower_name == "style") return GUMBO_TAG_STYLE;
  if (lower_name == "iframe") return GUMBO_TAG_IFRAME;
  if (lower_name == "xmp") return GUMBO_TAG_XMP;
  if (lower_name == "noembed") return GUMBO_TAG_NOEMBED;
  if (lower_name == "noframes") return GUMBO_TAG_NOFRAMES;
  return GUMBO_TAG_UNKNOWN;
}

// Attributes whose value the tree builder reads (<input type=hidden> in a table, <font color>
// in foreign content, <annotation-xml encoding>): never marked.
bool IsReadByTreeBuilder(std::string_view name) {
  for (const std::string_view read : {"type", "encoding", "color", "face", "size"}) {
    if (EqualsIgnoringAsciiCase(name, read)) return true;
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

// What the scan learned of one piece of markup, besides where it ends.
struct Markup {
  std::vector<AttributeSpan> attributes;  // a start tag's whose values may be marked
  size_t raw_begin = 0;                   // a raw-text element's content [raw_begin, raw_end)
  size_t raw_end = 0;
  GumboTag raw_tag = GUMBO_TAG_UNKNOWN;  // its tag, when its content may be marked
  // A <pre> or <listing> start (+1) or end tag (-1), where whitespace is content.
  int pre = 0;
  int listing = 0;
};

// Counts the start (+1) or end tag (-1) named `name` in `markup` when it is <pre> or <listing>.
void NotePreformatted(std::string_view name, int change, Markup& markup) {
  if (EqualsIgnoringAsciiCase(name, "pre")) markup.pre = change;
  if (EqualsIgnoringAsciiCase(name, "listing")) markup.listing = change;
}

// The end of the markup that starts with the '<' at `lt` (a tag with, for raw-text elements,
// their text; a comment, doctype, CDATA section or bogus comment), or lt + 1 when that '<' is
// text. Everything up to the returned position is left as written but what `markup` names.
size_t EndOfMarkup(std::string_view s, size_t lt, Markup& markup) {
  markup.attributes.clear();
  markup.raw_tag = GUMBO_TAG_UNKNOWN;
  markup.pre = 0;
  markup.listing = 0;
  const size_t n = s.size();
  if (lt + 1 >= n) return n;
  const char next = s[lt + 1];
  if (IsAsciiAlpha(next)) {
    size_t name_end = lt + 1;
    while (name_end < n && !IsTagSpace(s[name_end]) && s[name_end] != '/' && s[name_end] != '>')
      ++name_end;
    const std::string_view name = s.substr(lt + 1, name_end - lt - 1);
    char lower[9];
    const size_t lower_size = std::min(name.size(), sizeof lower);
    for (size_t k = 0; k < lower_size; ++k) lower[k] = AsciiLower(name[k]);
    const std::string_view lower_name =
        name.size() > sizeof lower ? std::string_view() : std::string_view(lower, lower_size);
    // The tree builder merges a repeated <html> or <body>'s attributes into the first.
    const bool merged = lower_name == "html" || lower_name == "head" || lower_name == "body";
    const size_t end = EndOfTag(s, lt + 1, merged ? nullptr : &markup.attributes);
    if (lower_name == "plaintext") return n;
    NotePreformatted(lower_name, 1, markup);
    if (!IsRawTextElement(lower_name) || end >= n) return end;
    const size_t close = FindEndTag(s, lower_name, end);
    if (close == std::string_view::npos) return n;
    // A script holding "<!--" may not end at the first "</script>" (the escaped states).
    const GumboTag tag = MarkableRawTextTag(lower_name);
    if (tag != GUMBO_TAG_UNKNOWN &&
        (tag != GUMBO_TAG_SCRIPT || s.substr(end, close - end).find("<!--") == s.npos)) {
      markup.raw_begin = end;
      markup.raw_end = close;
      markup.raw_tag = tag;
    }
    return close;
  }
  if (next == '/') {
    if (lt + 2 < n && IsAsciiAlpha(s[lt + 2])) {
      size_t name_end = lt + 2;
      while (name_end < n && !IsTagSpace(s[name_end]) && s[name_end] != '/' && s[name_end] != '>')
        ++name_end;
      NotePreformatted(s.substr(lt + 2, name_end - lt - 2), -1, markup);
      return EndOfTag(s, lt + 2);
    }
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
  const auto cp = static_cast<uint32_t>(MarkerCodePoint(k));
  if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
  }
  out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
  out += static_cast<char>(0x80 | (cp & 0x3F));
}

// Whether a marker may start at the byte `c` (the lead byte of U+E000..U+FFFF or of plane 15).
constexpr bool MayLeadMarker(unsigned char c) { return c == 0xEE || c == 0xEF || c == 0xF3; }

// The marker index at `p` (its `left` bytes readable) and its length, or -1 when none starts
// there.
long MarkerAt(const unsigned char* p, size_t left, size_t* length) {
  if (left >= 3 && (p[0] & 0xFE) == 0xEE && (p[1] & 0xC0) == 0x80 && (p[2] & 0xC0) == 0x80) {
    const uint32_t cp = ((p[0] & 0x0Fu) << 12) | ((p[1] & 0x3Fu) << 6) | (p[2] & 0x3Fu);
    if (cp < kFirstMarker || cp >= kFirstMarker + kBmpMarkers) return -1;
    *length = 3;
    return static_cast<long>(cp - kFirstMarker);
  }
  if (left >= 4 && p[0] == 0xF3 && p[1] >= 0xB0 && p[1] <= 0xBF && (p[2] & 0xC0) == 0x80 &&
      (p[3] & 0xC0) == 0x80) {
    const uint32_t cp =
        (3u << 18) | ((p[1] & 0x3Fu) << 12) | ((p[2] & 0x3Fu) << 6) | (p[3] & 0x3Fu);
    if (cp >= kFirstPlaneMarker + (kMaxMarkers - kBmpMarkers)) return -1;
    *length = 4;
    return static_cast<long>(cp - kFirstPlaneMarker + kBmpMarkers);
  }
  return -1;
}

// Appends a marker for html[b, e) in place of those bytes.
struct Marker {
  std::string_view html;
  MarkedHtml& marked;
  size_t flushed = 0;  // html[flushed, ...) is still to be copied as written

  bool Full() const { return marked.runs.size() >= kMaxMarkers; }
  void Mark(size_t b, size_t e, RunPlace place, GumboTag tag = GUMBO_TAG_UNKNOWN) {
    marked.html.append(html, flushed, b - flushed);
    AppendMarker(marked.html, marked.runs.size());
    marked.runs.push_back({html.substr(b, e - b), place, tag});
    flushed = e;
  }
  // html[b, e), all whitespace, as its first character alone.
  void Collapse(size_t b, size_t e) {
    marked.html.append(html, flushed, b + 1 - flushed);
    flushed = e;
  }
};

// Whether two of a tag's attributes have the same name. libgumbo keeps the first, and what it
// names the attribute after the repeated one depends on its buffers (seen on a real page:
// `we="" ... we 'll=""` gave "'ll" or "we'll" with the tag's other values marked or not).
bool HasRepeatedName(const std::vector<AttributeSpan>& attributes) {
  for (size_t a = 0; a < attributes.size(); ++a) {
    for (size_t o = a + 1; o < attributes.size(); ++o) {
      if (EqualsIgnoringAsciiCase(attributes[o].name, attributes[a].name)) return true;
    }
  }
  return false;
}

// The quoted attribute values of one start tag that are worth marking and safe to.
void MarkAttributes(const std::vector<AttributeSpan>& attributes, Marker& marker) {
  if (attributes.empty() || HasRepeatedName(attributes)) return;
  for (size_t a = 0; a < attributes.size() && !marker.Full(); ++a) {
    const AttributeSpan& attribute = attributes[a];
    if (attribute.value_end - attribute.value_begin < kMinAttributeValue) continue;
    if (IsReadByTreeBuilder(attribute.name)) continue;
    const std::string_view value =
        marker.html.substr(attribute.value_begin, attribute.value_end - attribute.value_begin);
    if (!IsPlainText(value, kAttributeAscii)) continue;
    marker.Mark(attribute.value_begin, attribute.value_end, RunPlace::kAttribute);
  }
}

// A raw-text element's content, without its leading and trailing whitespace: a text run when
// plain text anywhere (then it does not matter whether the element really is raw text, as in
// <svg>), else a raw-text run that must come back inside an HTML element of its tag.
void MarkRawText(const Markup& markup, Marker& marker) {
  size_t b = markup.raw_begin;
  size_t e = markup.raw_end;
  while (b < e && IsTagSpace(marker.html[b])) ++b;
  while (e > b && IsTagSpace(marker.html[e - 1])) --e;
  if (e - b < kMinCore || marker.Full()) return;
  const std::string_view core = marker.html.substr(b, e - b);
  if (IsPlainText(core)) {
    marker.Mark(b, e, RunPlace::kText);
  } else if (IsPlainText(core, kRawTextAscii)) {
    marker.Mark(b, e, RunPlace::kRawText, markup.raw_tag);
  }
}

}  // namespace

char32_t MarkerCodePoint(size_t k) {
  return k < kBmpMarkers ? kFirstMarker + static_cast<char32_t>(k)
                         : kFirstPlaneMarker + static_cast<char32_t>(k - kBmpMarkers);
}

MarkedHtml MarkTextRuns(std::string_view html) {
  MarkedHtml marked;
  if (html.size() < 2 * kMinCore || HoldsPrivateUse(html)) return marked;
  marked.html.reserve(html.size());
  Marker marker{html, marked};
  Markup markup;
  const size_t n = html.size();
  size_t i = 0;
  // Open <pre>s and <listing>s, where whitespace is content (an end tag closes its own kind).
  size_t open_pre = 0;
  size_t open_listing = 0;
  while (i < n && !marker.Full()) {
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
      marker.Mark(b, e, RunPlace::kText);
    } else if (b == e && lt - i > 1 && open_pre == 0 && open_listing == 0 &&
               std::all_of(html.begin() + static_cast<std::ptrdiff_t>(i),
                           html.begin() + static_cast<std::ptrdiff_t>(lt), IsTagSpace)) {
      // Indentation between tags: the tree builder handles every whitespace character alike
      // and one at a time, and outside <pre> a run of them reads as one space.
      marker.Collapse(i, lt);
    }
    if (lt >= n) break;
    i = EndOfMarkup(html, lt, markup);
    if (markup.pre > 0) ++open_pre;
    if (markup.pre < 0 && open_pre > 0) --open_pre;
    if (markup.listing > 0) ++open_listing;
    if (markup.listing < 0 && open_listing > 0) --open_listing;
    MarkAttributes(markup.attributes, marker);
    if (markup.raw_tag != GUMBO_TAG_UNKNOWN) MarkRawText(markup, marker);
  }
  if (marked.runs.empty()) {
    marked.html.clear();
    return marked;
  }
  marked.html.append(html, marker.flushed);
  return marked;
}

namespace {

// Puts the runs back into one string libgumbo built (a text node's text or an attribute's
// value) where `accept` allows each marker found; counts them in `seen`. The new string comes
// from `arena`; `*replaced` is left alone when the string holds no marker.
template <typename Accept>
bool RestoreString(const char* s, std::span<const MarkedRun> runs, std::vector<unsigned>& seen,
                   std::string& text, GumboArena& arena, const char** replaced, Accept accept) {
  const auto* p = reinterpret_cast<const unsigned char*>(s);
  const size_t length = std::strlen(s);
  size_t copied = 0;
  text.clear();
  for (size_t k = 0; k + 2 < length; ++k) {
    if (!MayLeadMarker(p[k])) continue;
    size_t marker_length = 0;
    const long m = MarkerAt(p + k, length - k, &marker_length);
    if (m < 0) continue;  // other text in U+E000..U+FFFF (CJK punctuation, fullwidth forms)
    if (static_cast<size_t>(m) >= runs.size()) return false;
    const MarkedRun& run = runs[static_cast<size_t>(m)];
    if (!accept(run, k, marker_length, length)) return false;
    // A cloned formatting element (the adoption agency) copies its attributes: the original's
    // would be copied just the same.
    if (seen[static_cast<size_t>(m)]++ != 0 && run.place != RunPlace::kAttribute) return false;
    text.append(s + copied, k - copied);
    text += run.text;
    copied = k + marker_length;
    k += marker_length - 1;
  }
  if (copied == 0) return true;
  text.append(s + copied, length - copied);
  auto* restored = static_cast<char*>(GumboArena::Allocate(&arena, text.size() + 1));
  std::memcpy(restored, text.data(), text.size());
  restored[text.size()] = '\0';
  *replaced = restored;
  return true;
}

}  // namespace

bool RestoreTextRuns(GumboNode* root, std::span<const MarkedRun> runs, GumboArena& arena) {
  std::vector<unsigned> seen(runs.size());
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
      if (node->type == GUMBO_NODE_DOCUMENT) continue;
      const GumboVector& attributes = node->v.element.attributes;
      for (unsigned k = 0; k < attributes.length; ++k) {
        auto* attribute = static_cast<GumboAttribute*>(attributes.data[k]);
        if (attribute->value == nullptr) continue;
        const auto whole_value = [](const MarkedRun& run, size_t at, size_t len, size_t total) {
          return run.place == RunPlace::kAttribute && at == 0 && len == total;
        };
        if (!RestoreString(attribute->value, runs, seen, text, arena, &attribute->value,
                           whole_value)) {
          return false;
        }
      }
      continue;
    }
    if (node->v.text.text == nullptr) continue;
    const GumboNode* parent = node->parent;
    const auto in_text = [node, parent](const MarkedRun& run, size_t, size_t, size_t) {
      if (run.place == RunPlace::kText) return true;
      return run.place == RunPlace::kRawText && node->type == GUMBO_NODE_TEXT &&
             parent != nullptr && parent->type == GUMBO_NODE_ELEMENT &&
             parent->v.element.tag_namespace == GUMBO_NAMESPACE_HTML &&
             parent->v.element.tag == run.tag;
    };
    if (!RestoreString(node->v.text.text, runs, seen, text, arena, &node->v.text.text, in_text)) {
      return false;
    }
  }
  return std::find(seen.begin(), seen.end(), 0u) == seen.end();
}

}  // namespace talaria::html
