#include "html/nesting_limit.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "talaria/base/ascii.h"

namespace talaria::html {
namespace {

// Void elements and those whose end tag the parser implies (a new <p> closes the open one):
// counting them would make an ordinary page of unclosed <p>s look deep. A switch on the length
// and a few compares: this runs once per tag, and a search of the whole list cost more than
// the rest of the scan.
bool IsUncounted(std::string_view n) {
  switch (n.size()) {
    case 1:
      return n == "p";
    case 2:
      return n == "br" || n == "hr" || n == "li" || n == "dt" || n == "dd" || n == "tr" ||
             n == "td" || n == "th" || n == "rb" || n == "rt" || n == "rp";
    case 3:
      return n == "col" || n == "img" || n == "wbr" || n == "rtc";
    case 4:
      return n == "area" || n == "base" || n == "link" || n == "meta" || n == "html" ||
             n == "head" || n == "body";
    case 5:
      return n == "embed" || n == "input" || n == "param" || n == "track" || n == "thead" ||
             n == "tbody" || n == "tfoot";
    case 6:
      return n == "source" || n == "keygen" || n == "option";
    case 7:
      return n == "caption";
    case 8:
      return n == "optgroup" || n == "colgroup";
    default:
      return false;
  }
}

// Elements whose content is text up to their end tag: tags inside do not nest.
bool IsRawText(std::string_view n) {
  switch (n.size()) {
    case 3:
      return n == "xmp";
    case 5:
      return n == "style" || n == "title";
    case 6:
      return n == "script" || n == "iframe";
    case 7:
      return n == "noembed";
    case 8:
      return n == "textarea" || n == "noframes" || n == "noscript";
    default:
      return false;
  }
}

// An open element's name as a 64-bit hash (FNV-1a of the lower-case name, at most 32 bytes):
// the scan follows names, and hashing once per tag is cheaper than keeping strings in a map.
uint64_t NameHash(std::string_view lower) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (const char c : lower) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
  return h;
}

bool IsNameByte(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == ':' || c == '_';
}

// Position of the first case-insensitive occurrence of `needle` (lower case) at or after `from`.
size_t FindIgnoringCase(std::string_view hay, std::string_view needle, size_t from) {
  for (size_t i = hay.find(needle[0], from); i != std::string_view::npos;
       i = hay.find(needle[0], i + 1)) {
    if (i + needle.size() > hay.size()) break;
    if (EqualsIgnoringAsciiCase(hay.substr(i, needle.size()), needle)) return i;
  }
  return std::string_view::npos;
}

// The end of the tag whose name ends at `i`: just past its '>' (quotes respected), or the end.
size_t SkipTag(std::string_view html, size_t i, bool* self_closing) {
  char quote = 0;
  char previous = 0;
  for (; i < html.size(); ++i) {
    const char c = html[i];
    if (quote != 0) {
      if (c == quote) quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '>') {
      *self_closing = previous == '/';
      return i + 1;
    }
    previous = c;
  }
  return html.size();
}

}  // namespace

size_t ParseablePrefixLength(std::string_view html, const NestingLimits& limits) {
  static const uint64_t kSvg = NameHash("svg");
  static const uint64_t kMath = NameHash("math");
  std::vector<uint64_t> open;
  std::unordered_map<uint64_t, size_t> open_count;
  size_t work = 0;
  size_t foreign = 0;  // open <svg>/<math>: there "<x/>" really is self-closing
  size_t i = 0;
  char lower[32];
  while (i < html.size()) {
    const size_t lt = html.find('<', i);
    if (lt == std::string_view::npos || lt + 1 >= html.size()) break;
    const char next = html[lt + 1];
    if (next == '!') {
      if (html.substr(lt, 4) == "<!--") {
        const size_t end = html.find("-->", lt + 4);
        i = end == std::string_view::npos ? html.size() : end + 3;
      } else {
        const size_t end = html.find('>', lt);
        i = end == std::string_view::npos ? html.size() : end + 1;
      }
      continue;
    }
    const bool is_end = next == '/';
    size_t name_begin = lt + (is_end ? 2 : 1);
    size_t name_end = name_begin;
    while (name_end < html.size() && IsNameByte(html[name_end])) ++name_end;
    if (name_end == name_begin ||
        !((html[name_begin] | 0x20) >= 'a' && (html[name_begin] | 0x20) <= 'z')) {
      i = lt + 1;  // "<" followed by something else is text
      continue;
    }
    const size_t length = std::min<size_t>(name_end - name_begin, sizeof lower);
    for (size_t k = 0; k < length; ++k) lower[k] = AsciiLower(html[name_begin + k]);
    const std::string_view name(lower, length);
    const uint64_t hash = NameHash(name);
    bool self_closing = false;
    const size_t after = SkipTag(html, name_end, &self_closing);
    if (is_end) {
      auto found = open_count.find(hash);
      if (found != open_count.end() && found->second > 0) {
        while (!open.empty()) {
          const uint64_t top = open.back();
          open.pop_back();
          --open_count[top];
          if (top == kSvg || top == kMath) --foreign;
          if (top == hash) break;
        }
      }
      i = after;
      continue;
    }
    if (IsRawText(name)) {
      const size_t close = FindIgnoringCase(html, "</" + std::string(name), after);
      i = close == std::string_view::npos ? html.size() : close;
      continue;
    }
    if (name == "plaintext") return html.size();  // the rest is text
    if (IsUncounted(name) || (self_closing && foreign > 0)) {
      i = after;
      continue;
    }
    work += open.size();
    if (open.size() + 1 > limits.max_depth || work > limits.max_work) return lt;
    if (hash == kSvg || hash == kMath) ++foreign;
    ++open_count[hash];
    open.push_back(hash);
    i = after;
  }
  return html.size();
}

}  // namespace talaria::html
