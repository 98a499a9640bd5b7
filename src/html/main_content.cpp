#include "talaria/html/main_content.h"

#include <vector>

#include "html/gumbo_util.h"
#include "html/markdown_writer.h"
#include "html/nesting_limit.h"
#include "html/page_analysis.h"
#include "talaria/base/ascii.h"
#include "talaria/html/url_resolve.h"

namespace talaria::html {
namespace {

constexpr size_t kMaxTitleBytes = 1000;

std::string Collapse(std::string_view text) {
  std::string out;
  for (const char c : text.substr(0, 64 * kMaxTitleBytes)) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f') {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else {
      out += c;
    }
    if (out.size() >= kMaxTitleBytes) break;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

struct HeadFacts {
  std::string title;
  std::string og_title;
  std::string base_href;
};

// <title>, og:title and <base href>, from the head (or wherever the parser put them).
HeadFacts ReadHead(const GumboNode* root) {
  HeadFacts facts;
  std::vector<const GumboNode*> stack{root};
  const MarkdownWriter::SkipFn keep_all = [](const GumboNode*) { return false; };
  while (!stack.empty()) {
    const GumboNode* node = stack.back();
    stack.pop_back();
    if (!IsElement(node)) continue;
    const GumboTag tag = TagOf(node);
    if (tag == GUMBO_TAG_TITLE && facts.title.empty() &&
        node->v.element.tag_namespace == GUMBO_NAMESPACE_HTML) {
      facts.title = Collapse(RawText(node, keep_all));
    } else if (tag == GUMBO_TAG_META && facts.og_title.empty()) {
      const std::string_view property = AttributeOf(node, "property");
      const std::string_view name = AttributeOf(node, "name");
      if (EqualsIgnoringAsciiCase(property, "og:title") ||
          EqualsIgnoringAsciiCase(name, "og:title")) {
        facts.og_title = Collapse(AttributeOf(node, "content"));
      }
    } else if (tag == GUMBO_TAG_BASE && facts.base_href.empty()) {
      facts.base_href = std::string(AttributeOf(node, "href").substr(0, 4096));
    }
    // The head is what we read; the body is only entered for a <title> misplaced there.
    if (tag == GUMBO_TAG_BODY) continue;
    const GumboVector& children = node->v.element.children;
    for (unsigned i = children.length; i > 0; --i) {
      stack.push_back(static_cast<const GumboNode*>(children.data[i - 1]));
    }
  }
  return facts;
}

// Whether `node` is inside one of `roots`.
bool IsUnder(const GumboNode* node, const std::vector<const GumboNode*>& roots) {
  for (const GumboNode* n = node; n != nullptr; n = n->parent) {
    for (const GumboNode* root : roots) {
      if (n == root) return true;
    }
  }
  return false;
}

// The page's <h1> that names the article when the chosen content starts below it (a title in
// the page header, outside the article's element): the last <h1> before the content whose
// text the document title contains, or which contains it.
std::string HeadingAboveContent(const GumboNode* root, const std::vector<const GumboNode*>& content,
                                const std::string& title) {
  if (content.empty() || title.empty()) return {};
  const MarkdownWriter::SkipFn keep_all = [](const GumboNode*) { return false; };
  std::string found;
  std::vector<const GumboNode*> stack{root};
  while (!stack.empty()) {
    const GumboNode* node = stack.back();
    stack.pop_back();
    if (!IsElement(node)) continue;
    if (node == content.front()) break;  // document order: everything after is below
    if (TagOf(node) == GUMBO_TAG_H1) {
      if (IsUnder(node, content)) return {};
      const std::string text = Collapse(RawText(node, keep_all));
      if (text.size() >= 3 &&
          (title.find(text) != std::string::npos || text.find(title) != std::string::npos)) {
        found = text;
      }
      continue;
    }
    const GumboVector& children = node->v.element.children;
    for (unsigned i = children.length; i > 0; --i) {
      stack.push_back(static_cast<const GumboNode*>(children.data[i - 1]));
    }
  }
  // An <h1> inside the content (after the walk stopped) makes this one redundant.
  std::vector<const GumboNode*> inner(content.begin(), content.end());
  while (!inner.empty()) {
    const GumboNode* node = inner.back();
    inner.pop_back();
    if (!IsElement(node)) continue;
    if (TagOf(node) == GUMBO_TAG_H1) return {};
    const GumboVector& children = node->v.element.children;
    for (unsigned i = 0; i < children.length; ++i) {
      inner.push_back(static_cast<const GumboNode*>(children.data[i]));
    }
  }
  return found;
}

}  // namespace

ExtractedPage ExtractMainContent(std::string_view html_utf8, const ExtractOptions& options) {
  std::string_view html = html_utf8.substr(0, options.max_input_bytes);
  html = html.substr(0, ParseablePrefixLength(html));
  const ParsedHtml parsed(html);
  const PageAnalysis analysis(parsed.root(), options.main_content);

  const HeadFacts head = ReadHead(parsed.root());
  ExtractedPage page;
  std::string base_url = options.base_url;
  if (!head.base_href.empty() && IsUsefulLinkTarget(head.base_href)) {
    base_url = ResolveUrl(base_url, head.base_href);
  }

  const MarkdownWriter::SkipFn skip = [&analysis](const GumboNode* node) {
    return analysis.Skip(node);
  };
  MarkdownWriter writer(skip, base_url);
  std::string heading;
  if (options.main_content) {
    heading = HeadingAboveContent(parsed.root(), analysis.selection(),
                                  !head.og_title.empty() ? head.og_title : head.title);
    if (!heading.empty()) writer.WriteHeading(1, heading);
  }
  for (const GumboNode* node : analysis.selection()) writer.Write(node);
  page.markdown = writer.Finish();

  page.title = !head.og_title.empty() ? head.og_title : head.title;
  if (page.title.empty()) {
    // The first <h1> of the page.
    std::vector<const GumboNode*> stack{parsed.root()};
    const MarkdownWriter::SkipFn keep_all = [](const GumboNode*) { return false; };
    while (!stack.empty() && page.title.empty()) {
      const GumboNode* node = stack.back();
      stack.pop_back();
      if (!IsElement(node)) continue;
      if (TagOf(node) == GUMBO_TAG_H1) {
        page.title = Collapse(RawText(node, keep_all));
        continue;
      }
      const GumboVector& children = node->v.element.children;
      for (unsigned i = children.length; i > 0; --i) {
        stack.push_back(static_cast<const GumboNode*>(children.data[i - 1]));
      }
    }
  }
  return page;
}

}  // namespace talaria::html
