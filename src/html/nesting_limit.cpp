#include "html/nesting_limit.h"

#include <algorithm>
#include <array>
#include <string>
#include <unordered_map>
#include <vector>

#include "talaria/base/ascii.h"

namespace talaria::html {
namespace {

// Void elements and those whose end tag the parser implies (a new <p> closes the open one):
// counting them would make an ordinary page of unclosed <p>s look deep.
bool IsUncounted(std::string_view name) {
  static constexpr std::array<std::string_view, 36> kNames = {
      "area", "base",  "br",     "col",   "embed",    "hr",       "img",  "input", "link",
      "meta", "param", "source", "track", "wbr",      "keygen",   "p",    "li",    "dt",
      "dd",   "tr",    "td",     "th",    "option",   "optgroup", "rb",   "rt",    "rp",
      "rtc",  "thead", "tbody",  "tfoot", "colgroup", "caption",  "html", "head",  "body"};
  return std::find(kNames.begin(), kNames.end(), name) != kNames.end();
}

// Elements whose content is text up to their end tag: tags inside do not nest.
bool IsRawText(std::string_view name) {
  static constexpr std::array<std::string_view, 9> kNames = {
      "script", "style", "textarea", "title", "xmp", "iframe", "noembed", "noframes", "noscript"};
  return std::find(kNames.begin(), kNames.end(), name) != kNames.end();
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
  std::vector<std::string> open;
  std::unordered_map<std::string, size_t> open_count;
  size_t work = 0;
  size_t foreign = 0;  // open <svg>/<math>: there "<x/>" really is self-closing
  size_t i = 0;
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
    std::string name =
        AsciiLower(html.substr(name_begin, std::min<size_t>(name_end - name_begin, 32)));
    bool self_closing = false;
    const size_t after = SkipTag(html, name_end, &self_closing);
    if (is_end) {
      auto found = open_count.find(name);
      if (found != open_count.end() && found->second > 0) {
        while (!open.empty()) {
          std::string top = std::move(open.back());
          open.pop_back();
          --open_count[top];
          if (top == "svg" || top == "math") --foreign;
          if (top == name) break;
        }
      }
      i = after;
      continue;
    }
    if (IsRawText(name)) {
      const size_t close = FindIgnoringCase(html, "</" + name, after);
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
    if (name == "svg" || name == "math") ++foreign;
    ++open_count[name];
    open.push_back(std::move(name));
    i = after;
  }
  return html.size();
}

}  // namespace talaria::html
