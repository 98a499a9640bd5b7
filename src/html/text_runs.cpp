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
// Past this many attributes in one tag, repeats are not looked for (nor values marked).
// Attributes of one tag past this many are left out: libgumbo compares each new name with
// every one before it, so a tag of 200,000 attributes would take minutes.
constexpr size_t kMaxAttributes = 256;

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

// An attribute as the scan read it: its name, its value when quoted (value_end 0 when not),
// and the whole of it [begin, end) from its name's first byte to its value's last (its closing
// quote included).
struct AttributeSpan {
  std::string_view name;
  size_t value_begin = 0;
  size_t value_end = 0;
  size_t begin = 0;
  size_t end = 0;
};

// A tag's attributes as the scan read them: the first kMaxAttributes, then the span of the
// rest [excess_begin, excess_end) (excess_end 0 when there are no more).
struct TagAttributes {
  std::vector<AttributeSpan> spans;
  size_t excess_begin = 0;
  size_t excess_end = 0;

  void Clear() {
    spans.clear();
    excess_begin = excess_end = 0;
  }
  void Add(const AttributeSpan& attribute) {
    if (spans.size() < kMaxAttributes) {
      spans.push_back(attribute);
      return;
    }
    if (excess_end == 0) excess_begin = attribute.begin;
    excess_end = attribute.end;
  }
};

// Just past the '>' ending the tag whose name starts at `i`, read by the HTML5 tokenizer's
// rules (a quote counts only where an attribute value starts); s.size() when the input ends
// inside the tag (which the tokenizer then drops). Its attributes go to `attributes`.
size_t EndOfTag(std::string_view s, size_t i, TagAttributes& attributes) {
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
    attribute.begin = name_begin;
    attribute.end = i;
    while (i < n && IsTagSpace(s[i])) ++i;
    if (i >= n) return n;
    if (s[i] != '=') {
      attributes.Add(attribute);
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
      attribute.end = i;  // "name=>": an empty value, and the tag ends
      attributes.Add(attribute);
      return i + 1;
    } else {
      while (i < n && !IsTagSpace(s[i]) && s[i] != '>') ++i;
    }
    attribute.end = i;
    attributes.Add(attribute);
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

// The start tags whose attribute values are not marked (see Markup::values_as_written), by
// lower-case name.
bool KeepsAttributeValuesAsWritten(std::string_view lower_name) {
  static constexpr std::array<std::string_view, 16> kNames = {
      "html", "head", "body", "b",     "big",    "code",   "em", "font",
      "i",    "nobr", "s",    "small", "strike", "strong", "tt", "u"};
  for (std::string_view name : kNames) {
    if (name == lower_name) return true;
  }
  return false;
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

// Whether s[i...] is "script" (any case) followed by whitespace, '/' or '>'.
bool IsScriptNameAt(std::string_view s, size_t i) {
  if (i + 6 >= s.size() || !EqualsIgnoringAsciiCase(s.substr(i, 6), "script")) return false;
  const char after = s[i + 6];
  return IsTagSpace(after) || after == '/' || after == '>';
}

// Where the "</script" ending a script's content (from `from`) starts, by the tokenizer's
// script data states: after "<!--" (escaped) a "<script" starts a part (double escaped) where
// "</script" does not end the script but goes back to escaped; "-->" goes back to plain
// script data. npos when the input ends first.
size_t ScriptEnd(std::string_view s, size_t from) {
  const size_t first = FindEndTag(s, "script", from);
  if (first == std::string_view::npos || s.substr(from, first - from).find("<!--") == s.npos) {
    return first;  // no escape before the first end tag: that one ends it
  }
  enum class State { kData, kEscaped, kDoubleEscaped };
  State state = State::kData;
  size_t dashes = 0;  // '-' read in a row in an escaped state: "-->" leaves it
  const size_t n = s.size();
  size_t i = from;
  while (i < n) {
    const char c = s[i];
    if (state == State::kData) {
      if (c == '<' && i + 1 < n && s[i + 1] == '/' && IsScriptNameAt(s, i + 2)) return i;
      if (c == '<' && s.compare(i, 4, "<!--") == 0) {
        state = State::kEscaped;
        dashes = 2;
        i += 4;
      } else {
        ++i;
      }
      continue;
    }
    if (c == '-') {
      ++dashes;
      ++i;
      continue;
    }
    if (c == '>' && dashes >= 2) {
      state = State::kData;
      dashes = 0;
      ++i;
      continue;
    }
    dashes = 0;
    if (c == '<' && i + 1 < n) {
      if (state == State::kEscaped) {
        if (s[i + 1] == '/' && IsScriptNameAt(s, i + 2)) return i;
        if (IsScriptNameAt(s, i + 1)) {
          state = State::kDoubleEscaped;
          i += 8;  // "<script" and the character after it
          continue;
        }
      } else if (s[i + 1] == '/' && IsScriptNameAt(s, i + 2)) {
        state = State::kEscaped;
        i += 9;  // "</script" and the character after it
        continue;
      }
    }
    ++i;
  }
  return std::string_view::npos;
}

size_t PastNext(std::string_view s, std::string_view what, size_t from) {
  const size_t at = s.find(what, from);
  return at == std::string_view::npos ? s.size() : at + what.size();
}

// What the scan learned of one piece of markup, besides where it ends.
struct Markup {
  TagAttributes attributes;  // a start or end tag's
  bool end_tag = false;
  // Attribute values left as written: an end tag's (dropped by the tokenizer); html, head or
  // body's (the tree builder merges them); a formatting element's but <a>'s (the tree builder
  // compares them: of four alike in the list of active formatting elements it forgets the
  // first, and distinct markers would make them differ).
  bool values_as_written = false;
  size_t raw_begin = 0;  // a raw-text element's content [raw_begin, raw_end)
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
  markup.attributes.Clear();
  markup.values_as_written = false;
  markup.end_tag = false;
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
    markup.values_as_written = KeepsAttributeValuesAsWritten(lower_name);
    const size_t end = EndOfTag(s, lt + 1, markup.attributes);
    if (lower_name == "plaintext") return n;
    NotePreformatted(lower_name, 1, markup);
    if (!IsRawTextElement(lower_name) || end >= n) return end;
    const size_t close =
        lower_name == "script" ? ScriptEnd(s, end) : FindEndTag(s, lower_name, end);
    if (close == std::string_view::npos) return n;
    const GumboTag tag = MarkableRawTextTag(lower_name);
    if (tag != GUMBO_TAG_UNKNOWN) {
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
      markup.values_as_written = true;
      markup.end_tag = true;
      return EndOfTag(s, lt + 2, markup.attributes);
    }
    return PastNext(s, ">", lt + 2);  // "</>" or a bogus comment
  }
  if (next == '!') {
    const std::string_view rest = s.substr(lt);
    if (rest.starts_with("<!--")) {
      if (rest.substr(4).starts_with(">")) return lt + 5;
      if (rest.substr(4).starts_with("->")) return lt + 6;
      // The first "-->" or "--!>": the second is looked for only before the first (searched
      // to the end for every comment, it made a page of many comments quadratic).
      const size_t a = s.find("-->", lt + 4);
      const size_t b = s.substr(0, a == std::string_view::npos ? n : a).find("--!>", lt + 4);
      if (b != std::string_view::npos) return b + 4;
      return a == std::string_view::npos ? n : a + 3;
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
  size_t flushed = 0;   // html[flushed, ...) is still to be copied as written
  bool markers = true;  // false: repeated attributes are left out without a marker

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
  // The attributes html[b, e) left out: a marker stands in their place as an attribute name
  // without a value, which RestoreTextRuns removes (after a space: a '/' before it is then
  // read as it was, not as the end of a self-closing tag).
  // On a page holding private-use characters, where a marker could not be told from the
  // page's own text, nothing stands in their place (`markers` false).
  void Drop(size_t b, size_t e, bool with_marker = true) {
    with_marker = with_marker && markers;
    if (with_marker && Full()) return;
    marked.html.append(html, flushed, b - flushed);
    marked.html += ' ';
    if (with_marker) {
      AppendMarker(marked.html, marked.runs.size());
      marked.runs.push_back({html.substr(b, e - b), RunPlace::kDroppedAttribute});
    }
    flushed = e;
    ++marked.dropped;
  }
};

// Whether attribute `a` of a start tag repeats the name of one before it. HTML keeps the
// first; libgumbo 0.10.1 drops the repeat too, but with no parse error recorded (max_errors =
// 0) leaves its name in the tag buffer, where it is prefixed to the next attribute's name
// (`class="a" class="b" id="x"` loses the id).
bool RepeatsAnEarlierName(const std::vector<AttributeSpan>& attributes, size_t a) {
  for (size_t o = 0; o < a; ++o) {
    if (EqualsIgnoringAsciiCase(attributes[o].name, attributes[a].name)) return true;
  }
  return false;
}

// One tag's attributes: a start tag's repeated one and those past kMaxAttributes left out; the
// quoted values worth marking and safe to mark replaced by markers when `mark` is set.
void MarkAttributes(const Markup& markup, bool mark, Marker& marker) {
  const std::vector<AttributeSpan>& attributes = markup.attributes.spans;
  // An end tag's attributes are dropped by the tokenizer: left as they are but for the excess
  // (without a marker, which would never come back).
  for (size_t a = 0; a < attributes.size() && !markup.end_tag; ++a) {
    const AttributeSpan& attribute = attributes[a];
    if (RepeatsAnEarlierName(attributes, a)) {
      marker.Drop(attribute.begin, attribute.end);
      continue;
    }
    if (!mark || markup.values_as_written || marker.Full()) continue;
    if (attribute.value_end - attribute.value_begin < kMinAttributeValue) continue;
    if (IsReadByTreeBuilder(attribute.name)) continue;
    const std::string_view value =
        marker.html.substr(attribute.value_begin, attribute.value_end - attribute.value_begin);
    if (!IsPlainText(value, kAttributeAscii)) continue;
    marker.Mark(attribute.value_begin, attribute.value_end, RunPlace::kAttribute);
  }
  if (markup.attributes.excess_end != 0) {
    marker.Drop(markup.attributes.excess_begin, markup.attributes.excess_end, !markup.end_tag);
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

namespace {

// The input with repeated attributes left out (marked when `markers` is set) and, when `mark`
// is set too, its runs marked.
MarkedHtml Preprocess(std::string_view html, bool mark, bool markers) {
  MarkedHtml marked;
  marked.html.reserve(html.size());
  Marker marker{html, marked};
  marker.markers = markers;
  mark = mark && markers;
  Markup markup;
  const size_t n = html.size();
  size_t i = 0;
  // Open <pre>s and <listing>s, where whitespace is content (an end tag closes its own kind).
  size_t open_pre = 0;
  size_t open_listing = 0;
  while (i < n) {
    // Past the last marker the scan goes on for repeated attributes alone.
    if (marker.Full()) mark = false;
    const void* found = std::memchr(html.data() + i, '<', n - i);
    const size_t lt =
        found ? static_cast<size_t>(static_cast<const char*>(found) - html.data()) : n;
    if (mark) {
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
        // Indentation between tags: the tree builder handles every whitespace character
        // alike and one at a time, and outside <pre> a run of them reads as one space.
        marker.Collapse(i, lt);
      }
    }
    if (lt >= n) break;
    i = EndOfMarkup(html, lt, markup);
    if (markup.pre > 0) ++open_pre;
    if (markup.pre < 0 && open_pre > 0) --open_pre;
    if (markup.listing > 0) ++open_listing;
    if (markup.listing < 0 && open_listing > 0) --open_listing;
    MarkAttributes(markup, mark, marker);
    if (mark && markup.raw_tag != GUMBO_TAG_UNKNOWN) MarkRawText(markup, marker);
  }
  if (marked.dropped == 0 && marked.runs.empty()) {
    marked.html.clear();
    return marked;
  }
  marked.html.append(html, marker.flushed);
  return marked;
}

}  // namespace

MarkedHtml MarkTextRuns(std::string_view html) {
  const bool markers = !HoldsPrivateUse(html);
  return Preprocess(html, html.size() >= 2 * kMinCore, markers);
}

MarkedHtml DropRepeatedAttributes(std::string_view html) { return Preprocess(html, false, true); }

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
      GumboVector& attributes = node->v.element.attributes;
      for (unsigned k = 0; k < attributes.length; ++k) {
        auto* attribute = static_cast<GumboAttribute*>(attributes.data[k]);
        const auto* name = reinterpret_cast<const unsigned char*>(attribute->name);
        if (MayLeadMarker(name[0])) {
          const size_t name_length = std::strlen(attribute->name);
          size_t marker_length = 0;
          const long m = MarkerAt(name, name_length, &marker_length);
          if (m >= 0) {
            // Left-out attributes: the marker must be the whole name. Cloned formatting
            // elements copy it, as they would copy the attributes it stands for.
            if (static_cast<size_t>(m) >= runs.size() || marker_length != name_length ||
                runs[static_cast<size_t>(m)].place != RunPlace::kDroppedAttribute) {
              return false;
            }
            ++seen[static_cast<size_t>(m)];
            for (unsigned o = k + 1; o < attributes.length; ++o) {
              attributes.data[o - 1] = attributes.data[o];
            }
            --attributes.length;
            --k;
            continue;
          }
        }
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
