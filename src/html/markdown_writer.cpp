#include "html/markdown_writer.h"

#include <algorithm>
#include <utility>

#include "html/gumbo_util.h"
#include "talaria/base/ascii.h"
#include "talaria/base/strings.h"
#include "talaria/html/url_resolve.h"

namespace talaria::html {
namespace {

constexpr size_t kMaxTableColumns = 64;
constexpr size_t kMaxAltBytes = 500;

bool IsHtmlSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }

std::string CollapseSpace(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    if (IsHtmlSpace(c)) {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else {
      out += c;
    }
  }
  return std::string(Trim(out, " "));
}

// The language a <pre> or its <code> declares: class "language-x", "lang-x", "highlight-x",
// "sourceCode x" or a data-lang attribute.
std::string LanguageFromClasses(const GumboNode* node) {
  const std::string_view data_lang = AttributeOf(node, "data-lang");
  if (!data_lang.empty() && data_lang.size() < 32) return AsciiLower(data_lang);
  const std::string classes = AsciiLower(AttributeOf(node, "class").substr(0, 256));
  size_t i = 0;
  while (i < classes.size()) {
    const size_t end = std::min(classes.find(' ', i), classes.size());
    const std::string_view name = std::string_view(classes).substr(i, end - i);
    for (const std::string_view prefix :
         {"language-", "lang-", "highlight-source-", "highlight-"}) {
      if (name.size() > prefix.size() && name.substr(0, prefix.size()) == prefix) {
        const std::string_view language = name.substr(prefix.size());
        // Sphinx's "highlight-default" names no language.
        if (language != "default" && language != "none" && language.size() < 32) {
          return std::string(language);
        }
      }
    }
    i = end + 1;
  }
  return {};
}

// The language a <pre> declares: class "language-x", "lang-x", "highlight-x" or data-lang
// on the <pre>, on its <code>, or on the two elements around it (Sphinx and GitHub put it on
// a wrapper <div>).
std::string CodeLanguage(const GumboNode* pre) {
  std::string language = LanguageFromClasses(pre);
  const GumboVector& children = pre->v.element.children;
  for (unsigned k = 0; k < children.length && language.empty(); ++k) {
    const auto* child = static_cast<const GumboNode*>(children.data[k]);
    if (TagOf(child) == GUMBO_TAG_CODE) language = LanguageFromClasses(child);
  }
  const GumboNode* up = pre->parent;
  for (int hop = 0; hop < 2 && language.empty() && IsElement(up); ++hop, up = up->parent) {
    language = LanguageFromClasses(up);
  }
  return language;
}

// A permalink anchor's text ("¶", "#", "§"): short, no letters or digits.
bool IsAnchorSymbol(std::string_view text) {
  if (text.empty() || text.size() > 3) return false;
  return std::none_of(text.begin(), text.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
  });
}

std::string EscapeCell(std::string_view cell) {
  std::string out;
  for (const char c : cell) {
    if (c == '\n') {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else if (c == '|') {
      out += "\\|";
    } else {
      out += c;
    }
  }
  return std::string(Trim(out, " "));
}

}  // namespace

std::string RawText(const GumboNode* node, const MarkdownWriter::SkipFn& skip) {
  std::string out;
  std::vector<const GumboNode*> stack{node};
  while (!stack.empty()) {
    const GumboNode* n = stack.back();
    stack.pop_back();
    if (IsTextual(n)) {
      out += n->v.text.text;
      continue;
    }
    if (!IsElement(n) || (n != node && skip(n))) continue;
    if (TagOf(n) == GUMBO_TAG_BR) out += '\n';
    const GumboVector& children = n->v.element.children;
    for (unsigned i = children.length; i > 0; --i) {
      stack.push_back(static_cast<const GumboNode*>(children.data[i - 1]));
    }
  }
  return out;
}

MarkdownWriter::MarkdownWriter(const SkipFn& skip, std::string base_url, int depth)
    : skip_(skip), base_url_(std::move(base_url)), base_depth_(depth) {}

void MarkdownWriter::Write(const GumboNode* node) { Node(node, base_depth_); }

void MarkdownWriter::WriteHeading(int level, std::string_view text) {
  Flush();
  lead_ = std::string(static_cast<size_t>(level), '#') + " ";
  Text(text);
  Flush();
}

std::string MarkdownWriter::Finish() {
  Flush();
  std::string out(Trim(out_, "\n"));
  if (!out.empty()) out += '\n';
  return out;
}

void MarkdownWriter::Node(const GumboNode* node, int depth) {
  if (IsTextual(node)) {
    Text(node->v.text.text);
    return;
  }
  if (!IsElement(node) || skip_(node)) return;
  if (depth >= kMaxDepth) {
    FlattenText(node);
    return;
  }
  Element(node, depth);
}

void MarkdownWriter::Children(const GumboNode* node, int depth) {
  const GumboVector& children = node->v.element.children;
  for (unsigned i = 0; i < children.length; ++i) {
    Node(static_cast<const GumboNode*>(children.data[i]), depth + 1);
  }
}

void MarkdownWriter::FlattenText(const GumboNode* node) {
  std::vector<const GumboNode*> stack{node};
  while (!stack.empty()) {
    const GumboNode* n = stack.back();
    stack.pop_back();
    if (IsTextual(n)) {
      Text(n->v.text.text);
      continue;
    }
    if (!IsElement(n) || skip_(n)) continue;
    if (IsBlockTag(TagOf(n))) Text(" ");
    const GumboVector& children = n->v.element.children;
    for (unsigned i = children.length; i > 0; --i) {
      stack.push_back(static_cast<const GumboNode*>(children.data[i - 1]));
    }
  }
}

void MarkdownWriter::Element(const GumboNode* node, int depth) {
  const GumboTag tag = TagOf(node);
  switch (tag) {
    case GUMBO_TAG_H1:
    case GUMBO_TAG_H2:
    case GUMBO_TAG_H3:
    case GUMBO_TAG_H4:
    case GUMBO_TAG_H5:
    case GUMBO_TAG_H6:
      Heading(node, depth, 1 + static_cast<int>(tag - GUMBO_TAG_H1));
      return;
    case GUMBO_TAG_P:
    case GUMBO_TAG_DIV:
    case GUMBO_TAG_SECTION:
    case GUMBO_TAG_ARTICLE:
    case GUMBO_TAG_MAIN:
    case GUMBO_TAG_FIGURE:
    case GUMBO_TAG_FIGCAPTION:
    case GUMBO_TAG_DD:
    case GUMBO_TAG_SUMMARY:
    case GUMBO_TAG_DETAILS:
    case GUMBO_TAG_ADDRESS:
      Flush();
      Children(node, depth);
      Flush();
      return;
    case GUMBO_TAG_DT:
      Flush();
      Wrap(node, depth, "**");
      Flush();
      return;
    case GUMBO_TAG_BR:
      while (!para_.empty() && para_.back() == ' ') para_.pop_back();
      para_ += join_lines_ ? ' ' : '\n';
      return;
    case GUMBO_TAG_HR:
      Flush();
      Separate();
      WriteLines("---");
      ++flushes_;
      return;
    case GUMBO_TAG_STRONG:
    case GUMBO_TAG_B:
      Wrap(node, depth, "**");
      return;
    case GUMBO_TAG_EM:
    case GUMBO_TAG_I:
    case GUMBO_TAG_CITE:
    case GUMBO_TAG_DFN:
      Wrap(node, depth, "*");
      return;
    case GUMBO_TAG_S:
    case GUMBO_TAG_STRIKE:
    case GUMBO_TAG_DEL:
      Wrap(node, depth, "~~");
      return;
    case GUMBO_TAG_CODE:
    case GUMBO_TAG_KBD:
    case GUMBO_TAG_SAMP:
    case GUMBO_TAG_TT:
      InlineCode(node);
      return;
    case GUMBO_TAG_A:
      Link(node, depth);
      return;
    case GUMBO_TAG_IMG:
      Image(node);
      return;
    case GUMBO_TAG_PRE:
    case GUMBO_TAG_LISTING:
    case GUMBO_TAG_XMP:
    case GUMBO_TAG_PLAINTEXT:
      Pre(node);
      return;
    case GUMBO_TAG_UL:
    case GUMBO_TAG_OL:
    case GUMBO_TAG_MENU:
    case GUMBO_TAG_DIR:
      List(node, depth);
      return;
    case GUMBO_TAG_TABLE:
      Table(node, depth);
      return;
    case GUMBO_TAG_BLOCKQUOTE: {
      Flush();
      blank_before_next_ = true;
      indents_.push_back({"> ", "> ", true});
      const int saved_list_depth = std::exchange(list_depth_, 0);
      Children(node, depth);
      Flush();
      list_depth_ = saved_list_depth;
      indents_.pop_back();
      blank_before_next_ = true;
      return;
    }
    default:
      break;
  }
  if (IsBlockTag(tag)) {
    Flush();
    Children(node, depth);
    Flush();
  } else {
    Children(node, depth);
  }
}

void MarkdownWriter::Text(std::string_view text) {
  for (const char c : text) {
    if (IsHtmlSpace(c)) {
      if (!para_.empty() && para_.back() != ' ' && para_.back() != '\n') para_ += ' ';
    } else {
      para_ += c;
    }
  }
}

void MarkdownWriter::Separate() {
  const bool blank = blank_before_next_ || list_depth_ == 0;
  blank_before_next_ = false;
  if (out_.empty()) return;
  if (out_.back() != '\n') out_ += '\n';
  if (blank) {
    // Only the containers already begun mark the blank line ("> " inside a quote, not before it).
    std::string prefix;
    for (const Indent& indent : indents_) {
      if (!indent.first_pending) prefix += indent.rest;
    }
    out_ += std::string(Trim(prefix, " "));
    out_ += '\n';
  }
}

void MarkdownWriter::WriteLines(std::string_view text) {
  size_t i = 0;
  while (true) {
    const size_t nl = text.find('\n', i);
    const std::string_view line = text.substr(i, nl == std::string_view::npos ? text.npos : nl - i);
    for (Indent& indent : indents_) {
      out_ += indent.first_pending ? indent.first : indent.rest;
      indent.first_pending = false;
    }
    out_ += line;
    if (nl == std::string_view::npos) break;
    out_ += '\n';
    i = nl + 1;
  }
}

void MarkdownWriter::Flush() {
  std::string text(Trim(para_, " \n"));
  para_.clear();
  if (text.empty()) return;
  if (join_lines_) std::replace(text.begin(), text.end(), '\n', ' ');
  // Trailing spaces on inner lines (before a <br>) mean nothing to a reader.
  Separate();
  WriteLines(lead_ + text);
  lead_.clear();
  ++flushes_;
}

void MarkdownWriter::Heading(const GumboNode* node, int depth, int level) {
  Flush();
  blank_before_next_ = true;
  lead_ = std::string(static_cast<size_t>(level), '#') + " ";
  join_lines_ = true;
  Children(node, depth);
  Flush();
  join_lines_ = false;
  lead_.clear();
  blank_before_next_ = true;
}

void MarkdownWriter::Wrap(const GumboNode* node, int depth, std::string_view mark) {
  const size_t start = para_.size();
  const size_t flushes = flushes_;
  Children(node, depth);
  if (flushes_ != flushes || para_.size() < start) return;  // a block inside: leave it plain
  const std::string inner = para_.substr(start);
  const std::string_view trimmed = Trim(inner, " \n");
  if (trimmed.empty()) return;
  const bool space_before = inner.front() == ' ';
  const bool space_after = inner.back() == ' ';
  std::string wrapped = space_before ? " " : "";
  wrapped += mark;
  wrapped += trimmed;
  wrapped += mark;
  if (space_after) wrapped += ' ';
  para_.resize(start);
  para_ += wrapped;
}

void MarkdownWriter::InlineCode(const GumboNode* node) {
  const std::string text = CollapseSpace(RawText(node, skip_));
  if (text.empty()) return;
  const std::string fence = text.find('`') == std::string::npos ? "`" : "``";
  const bool pad = text.front() == '`' || text.back() == '`';
  para_ += fence;
  if (pad) para_ += ' ';
  para_ += text;
  if (pad) para_ += ' ';
  para_ += fence;
}

std::string MarkdownWriter::Resolve(std::string_view url) const {
  return base_url_.empty() ? std::string(Trim(url)) : ResolveUrl(base_url_, url);
}

void MarkdownWriter::Link(const GumboNode* node, int depth) {
  const size_t start = para_.size();
  const size_t flushes = flushes_;
  Children(node, depth);
  const std::string_view href = AttributeOf(node, "href");
  if (flushes_ != flushes || para_.size() < start) return;
  const std::string inner = para_.substr(start);
  const std::string_view trimmed = Trim(inner, " \n");
  if (!href.empty() && Trim(href).substr(0, 1) == "#" && IsAnchorSymbol(trimmed)) {
    para_.resize(start);  // a heading's permalink: nothing to read
    return;
  }
  if (trimmed.empty() || !IsUsefulLinkTarget(href)) return;
  const std::string target = Resolve(href);
  std::string link = inner.front() == ' ' ? " [" : "[";
  for (const char c : trimmed) link += c == '\n' ? ' ' : c;
  link += "](";
  for (const char c : target) {
    if (c == ' ') {
      link += "%20";
    } else if (c == '(' || c == ')') {
      link += c == '(' ? "%28" : "%29";
    } else {
      link += c;
    }
  }
  link += ')';
  if (inner.back() == ' ') link += ' ';
  para_.resize(start);
  para_ += link;
}

void MarkdownWriter::Image(const GumboNode* node) {
  // Tracking pixels and spacers say nothing.
  if (AttributeOf(node, "width") == "1" || AttributeOf(node, "height") == "1") return;
  std::string_view src = AttributeOf(node, "src");
  for (const char* lazy : {"data-src", "data-lazy-src", "data-original"}) {
    const std::string_view candidate = AttributeOf(node, lazy);
    if (!candidate.empty() && (src.empty() || src.substr(0, 5) == "data:")) src = candidate;
  }
  const std::string alt = CollapseSpace(AttributeOf(node, "alt").substr(0, kMaxAltBytes));
  std::string safe_alt;
  for (const char c : alt) {
    if (c != '[' && c != ']') safe_alt += c;
  }
  if (!IsUsefulLinkTarget(src)) {
    // An inline (data:) image: its bytes are no use as text; its description is.
    if (!safe_alt.empty()) para_ += "[image: " + safe_alt + "]";
    return;
  }
  std::string target = Resolve(src);
  std::string escaped;
  for (const char c : target) {
    if (c == ' ') {
      escaped += "%20";
    } else if (c == '(' || c == ')') {
      escaped += c == '(' ? "%28" : "%29";
    } else {
      escaped += c;
    }
  }
  para_ += "![" + safe_alt + "](" + escaped + ")";
}

void MarkdownWriter::Pre(const GumboNode* node) {
  Flush();
  const std::string language = CodeLanguage(node);
  std::string code = RawText(node, skip_);
  // The parser drops one newline right after <pre>; a trailing one is layout.
  while (!code.empty() && (code.back() == '\n' || code.back() == ' ')) code.pop_back();
  while (!code.empty() && code.front() == '\n') code.erase(0, 1);
  if (Trim(code).empty()) return;
  size_t longest_run = 0;
  size_t run = 0;
  for (const char c : code) {
    run = c == '`' ? run + 1 : 0;
    longest_run = std::max(longest_run, run);
  }
  const std::string fence(std::max<size_t>(3, longest_run + 1), '`');
  Separate();
  WriteLines(fence + language + "\n" + code + "\n" + fence);
  ++flushes_;
  blank_before_next_ = true;
}

void MarkdownWriter::List(const GumboNode* node, int depth) {
  Flush();
  if (list_depth_ == 0) blank_before_next_ = true;
  const bool ordered = TagOf(node) == GUMBO_TAG_OL;
  long number = 1;
  if (ordered) {
    const std::string start(AttributeOf(node, "start").substr(0, 9));
    char* end = nullptr;
    const long parsed = std::strtol(start.c_str(), &end, 10);
    if (!start.empty() && end != nullptr && *end == '\0') number = parsed;
  }
  ++list_depth_;
  const GumboVector& children = node->v.element.children;
  for (unsigned i = 0; i < children.length; ++i) {
    const auto* child = static_cast<const GumboNode*>(children.data[i]);
    if (TagOf(child) != GUMBO_TAG_LI) {
      // Text, inline elements, a stray nested list: what a page puts between its items is
      // written where it stands (text is collected until the next item flushes it).
      Node(child, depth + 1);
      continue;
    }
    if (skip_(child)) continue;
    Flush();
    const std::string marker = ordered ? std::to_string(number++) + ". " : "- ";
    indents_.push_back({marker, std::string(marker.size(), ' '), true});
    Children(child, depth + 1);
    Flush();
    const bool wrote = !indents_.back().first_pending;
    indents_.pop_back();
    if (!wrote && ordered) --number;  // an empty item takes no number
  }
  // Text after the last item is a paragraph of its own, not part of that item.
  if (!Trim(para_, " \n").empty()) blank_before_next_ = true;
  Flush();
  --list_depth_;
  if (list_depth_ == 0) blank_before_next_ = true;
}

void MarkdownWriter::Table(const GumboNode* node, int depth) {
  Flush();
  // The rows: direct <tr>s and those of its row groups (not those of nested tables).
  std::vector<const GumboNode*> rows;
  const GumboVector& children = node->v.element.children;
  for (unsigned i = 0; i < children.length; ++i) {
    const auto* child = static_cast<const GumboNode*>(children.data[i]);
    const GumboTag tag = TagOf(child);
    if (tag == GUMBO_TAG_TR) {
      rows.push_back(child);
    } else if (tag == GUMBO_TAG_THEAD || tag == GUMBO_TAG_TBODY || tag == GUMBO_TAG_TFOOT) {
      const GumboVector& group = child->v.element.children;
      for (unsigned k = 0; k < group.length; ++k) {
        const auto* row = static_cast<const GumboNode*>(group.data[k]);
        if (TagOf(row) == GUMBO_TAG_TR && !skip_(row)) rows.push_back(row);
      }
    }
  }
  // A layout table (one column, or cells holding tables or block structure) is read as the
  // blocks it lays out.
  size_t columns = 0;
  bool layout = false;
  std::vector<std::vector<const GumboNode*>> cells(rows.size());
  for (size_t r = 0; r < rows.size() && !layout; ++r) {
    const GumboVector& row_children = rows[r]->v.element.children;
    for (unsigned k = 0; k < row_children.length; ++k) {
      const auto* cell = static_cast<const GumboNode*>(row_children.data[k]);
      const GumboTag tag = TagOf(cell);
      if (tag != GUMBO_TAG_TD && tag != GUMBO_TAG_TH) continue;
      cells[r].push_back(cell);
      std::vector<const GumboNode*> stack{cell};
      while (!stack.empty() && !layout) {
        const GumboNode* n = stack.back();
        stack.pop_back();
        const GumboTag t = TagOf(n);
        if (n != cell &&
            (t == GUMBO_TAG_TABLE || t == GUMBO_TAG_UL || t == GUMBO_TAG_OL || t == GUMBO_TAG_PRE ||
             t == GUMBO_TAG_BLOCKQUOTE || (t >= GUMBO_TAG_H1 && t <= GUMBO_TAG_H6))) {
          layout = true;
        }
        if (!IsElement(n)) continue;
        const GumboVector& grand = n->v.element.children;
        for (unsigned g = 0; g < grand.length; ++g) {
          stack.push_back(static_cast<const GumboNode*>(grand.data[g]));
        }
      }
    }
    columns = std::max(columns, cells[r].size());
  }
  if (layout || columns < 2 || columns > kMaxTableColumns || rows.empty()) {
    Separate();
    Children(node, depth);
    Flush();
    return;
  }
  std::vector<std::vector<std::string>> text(rows.size());
  for (size_t r = 0; r < rows.size(); ++r) {
    for (const GumboNode* cell : cells[r]) {
      MarkdownWriter cell_writer(skip_, base_url_, depth + 2);
      cell_writer.Children(cell, depth + 2);
      text[r].push_back(EscapeCell(cell_writer.Finish()));
      const std::string span(AttributeOf(cell, "colspan").substr(0, 3));
      const int colspan = std::clamp(std::atoi(span.c_str()), 1, 64);
      for (int extra = 1; extra < colspan && text[r].size() < columns; ++extra) {
        text[r].emplace_back();
      }
    }
    text[r].resize(columns);
  }
  // Rows with no text at all (spacers) are left out.
  std::vector<std::vector<std::string>> kept;
  for (auto& row : text) {
    if (std::any_of(row.begin(), row.end(), [](const std::string& c) { return !c.empty(); })) {
      kept.push_back(std::move(row));
    }
  }
  if (kept.empty()) return;
  std::string table;
  for (size_t r = 0; r < kept.size(); ++r) {
    table += "|";
    for (const std::string& cell : kept[r]) table += " " + cell + " |";
    if (r == 0) {
      table += "\n|";
      for (size_t c = 0; c < columns; ++c) table += " --- |";
    }
    if (r + 1 < kept.size()) table += "\n";
  }
  Separate();
  WriteLines(table);
  ++flushes_;
  blank_before_next_ = true;
}

}  // namespace talaria::html
