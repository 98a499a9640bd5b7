#include "html/boilerplate.h"

#include <algorithm>
#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "html/gumbo_util.h"
#include "talaria/base/ascii.h"

namespace talaria::html {
namespace {

// Words that mark boilerplate whatever else the class says ("post-comments" is comments).
constexpr std::array<std::string_view, 49> kStrongNegativeWords = {"nav",
                                                                   "navbar",
                                                                   "navigation",
                                                                   "menu",
                                                                   "menubar",
                                                                   "breadcrumb",
                                                                   "breadcrumbs",
                                                                   "sidebar",
                                                                   "footer",
                                                                   "masthead",
                                                                   "cookie",
                                                                   "cookies",
                                                                   "consent",
                                                                   "gdpr",
                                                                   "share",
                                                                   "sharing",
                                                                   "social",
                                                                   "related",
                                                                   "recommended",
                                                                   "comment",
                                                                   "comments",
                                                                   "disqus",
                                                                   "ad",
                                                                   "ads",
                                                                   "advert",
                                                                   "advertisement",
                                                                   "adsense",
                                                                   "sponsor",
                                                                   "sponsored",
                                                                   "promo",
                                                                   "popup",
                                                                   "modal",
                                                                   "newsletter",
                                                                   "subscribe",
                                                                   "signup",
                                                                   "login",
                                                                   "skip",
                                                                   "pagination",
                                                                   "pager",
                                                                   "toc",
                                                                   "outbrain",
                                                                   "taboola",
                                                                   "sr-only",
                                                                   "visually-hidden",
                                                                   "screen-reader-text",
                                                                   "trending",
                                                                   "popular",
                                                                   "shoutbox",
                                                                   "banner"};

// Words that mark boilerplate unless a content word is there too ("entry-meta" is content).
constexpr std::array<std::string_view, 11> kWeakNegativeWords = {
    "header", "meta",      "widget", "tags",   "tag",   "author",
    "aside",  "secondary", "tools",  "byline", "rating"};

constexpr std::array<std::string_view, 17> kPositiveWords = {
    "article",  "content", "main", "post",          "entry", "body",   "text",   "story",  "blog",
    "markdown", "prose",   "docs", "documentation", "page",  "hentry", "thread", "message"};

// Substrings that mark boilerplate inside run-together words ("socialshare", "cookiebar").
constexpr std::array<std::string_view, 9> kNegativeSubstrings = {
    "sidebar", "cookie",   "comment",     "newsletter", "breadcrumb",
    "advert",  "sharebar", "socialshare", "related"};

template <size_t N>
bool Contains(const std::array<std::string_view, N>& words, std::string_view word) {
  return std::find(words.begin(), words.end(), word) != words.end();
}

struct WordHits {
  bool strong_negative = false;
  bool weak_negative = false;
  bool positive = false;
};

// The words of one class or id value: whole names first ("sr-only", "visually-hidden"), then
// the parts between - and _.
void MatchNames(std::string_view words, WordHits* hits) {
  size_t i = 0;
  while (i < words.size()) {
    const size_t space = words.find(' ', i);
    const size_t end = space == std::string::npos ? words.size() : space;
    const std::string_view name = words.substr(i, end - i);
    if (Contains(kStrongNegativeWords, name)) hits->strong_negative = true;
    size_t k = 0;
    while (k <= name.size()) {
      const size_t cut = name.find_first_of("-_", k);
      const size_t part_end = cut == std::string_view::npos ? name.size() : cut;
      const std::string_view part = name.substr(k, part_end - k);
      if (Contains(kStrongNegativeWords, part)) hits->strong_negative = true;
      if (Contains(kWeakNegativeWords, part)) hits->weak_negative = true;
      if (Contains(kPositiveWords, part)) hits->positive = true;
      if (cut == std::string_view::npos) break;
      k = cut + 1;
    }
    for (const std::string_view sub : kNegativeSubstrings) {
      if (name.find(sub) != std::string_view::npos) hits->strong_negative = true;
    }
    i = end + 1;
  }
}

// Letters and digits of `text`, ASCII lower case, at most `limit` of them.
std::string Alphanumerics(std::string_view text, size_t limit) {
  std::string out;
  for (const char c : text) {
    if (out.size() >= limit) break;
    const char l = AsciiLower(c);
    if ((l >= 'a' && l <= 'z') || (l >= '0' && l <= '9')) out += l;
  }
  return out;
}

// The id is its own heading's text made an anchor ("sharing-with-multiple-developers" over
// <h2>Sharing with multiple developers</h2>, as documentation generators and wikis write
// sections): its words are the author's, not the template's, and say nothing about the role.
bool IdNamesOwnHeading(const GumboNode* node, std::string_view id) {
  const std::string slug = Alphanumerics(id, 200);
  if (slug.size() < 4) return false;
  const GumboVector& children = node->v.element.children;
  int elements = 0;
  for (unsigned k = 0; k < children.length && elements < 3; ++k) {
    const auto* child = static_cast<const GumboNode*>(children.data[k]);
    if (!IsElement(child)) continue;
    ++elements;
    const GumboTag tag = TagOf(child);
    if (tag < GUMBO_TAG_H1 || tag > GUMBO_TAG_H6) continue;  // libgumbo numbers h1-h6 in a row
    std::string heading;
    std::vector<const GumboNode*> stack{child};
    while (!stack.empty() && heading.size() < 400) {
      const GumboNode* n = stack.back();
      stack.pop_back();
      if (IsTextual(n)) {
        heading += Alphanumerics(n->v.text.text, 400);
      } else if (IsElement(n)) {
        const GumboVector& inner = n->v.element.children;
        for (unsigned i = inner.length; i > 0; --i) {
          stack.push_back(static_cast<const GumboNode*>(inner.data[i - 1]));
        }
      }
    }
    return heading.find(slug) != std::string::npos;
  }
  return false;
}

WordHits MatchWords(const GumboNode* node) {
  WordHits hits;
  const std::string_view cls = AttributeOf(node, "class");
  if (!cls.empty()) MatchNames(AsciiLower(cls.substr(0, 256)), &hits);
  const std::string_view id = AttributeOf(node, "id");
  if (!id.empty()) {
    WordHits id_hits;
    MatchNames(AsciiLower(id.substr(0, 256)), &id_hits);
    if ((id_hits.strong_negative || id_hits.weak_negative) && IdNamesOwnHeading(node, id)) {
      id_hits = WordHits{};
    }
    hits.strong_negative |= id_hits.strong_negative;
    hits.weak_negative |= id_hits.weak_negative;
    hits.positive |= id_hits.positive;
  }
  return hits;
}

bool StyleHides(std::string_view style) {
  std::string compact;
  for (const char c : style.substr(0, 512)) {
    if (c != ' ' && c != '\t' && c != '\n') compact += AsciiLower(c);
  }
  return compact.find("display:none") != std::string::npos ||
         compact.find("visibility:hidden") != std::string::npos;
}

bool IsHidden(const GumboNode* node) {
  if (HasAttribute(node, "hidden")) return true;
  if (EqualsIgnoringAsciiCase(AttributeOf(node, "aria-hidden"), "true")) return true;
  const std::string_view style = AttributeOf(node, "style");
  return !style.empty() && StyleHides(style);
}

}  // namespace

ElementKind ClassifyElement(const GumboNode* node, bool inside_article) {
  const GumboTag tag = TagOf(node);
  switch (tag) {
    case GUMBO_TAG_SCRIPT:
    case GUMBO_TAG_STYLE:
    case GUMBO_TAG_NOSCRIPT:
    case GUMBO_TAG_TEMPLATE:
    case GUMBO_TAG_IFRAME:
    case GUMBO_TAG_OBJECT:
    case GUMBO_TAG_EMBED:
    case GUMBO_TAG_CANVAS:
    case GUMBO_TAG_SVG:
    case GUMBO_TAG_MATH:
    case GUMBO_TAG_HEAD:
    case GUMBO_TAG_INPUT:
    case GUMBO_TAG_SELECT:
    case GUMBO_TAG_TEXTAREA:
    case GUMBO_TAG_BUTTON:
    case GUMBO_TAG_OPTION:
    case GUMBO_TAG_DATALIST:
    case GUMBO_TAG_AUDIO:
    case GUMBO_TAG_VIDEO:
    case GUMBO_TAG_MAP:
      return ElementKind::kNeverContent;
    default:
      break;
  }
  if (node->v.element.tag_namespace != GUMBO_NAMESPACE_HTML) return ElementKind::kNeverContent;
  if (IsHidden(node)) return ElementKind::kNeverContent;
  if (tag == GUMBO_TAG_BODY || tag == GUMBO_TAG_HTML) return ElementKind::kContent;

  const std::string_view role = AttributeOf(node, "role");
  if (role == "navigation" || role == "banner" || role == "contentinfo" ||
      role == "complementary" || role == "search" || role == "dialog" || role == "alertdialog" ||
      role == "menu" || role == "menubar" || role == "toolbar") {
    return ElementKind::kBoilerplate;
  }
  if (IsUnknownTagNamed(node, "dialog")) return ElementKind::kBoilerplate;
  switch (tag) {
    case GUMBO_TAG_NAV:
    case GUMBO_TAG_ASIDE:
    case GUMBO_TAG_FOOTER:
    case GUMBO_TAG_MENU:
      return ElementKind::kBoilerplate;
    case GUMBO_TAG_HEADER:
      return inside_article ? ElementKind::kContent : ElementKind::kBoilerplate;
    case GUMBO_TAG_FORM:
      return ElementKind::kLikelyBoilerplate;
    case GUMBO_TAG_ARTICLE:
    case GUMBO_TAG_MAIN:
      return ElementKind::kContent;
    default:
      break;
  }
  if (role == "main" || role == "article") return ElementKind::kContent;
  const WordHits hits = MatchWords(node);
  if (hits.strong_negative || (hits.weak_negative && !hits.positive)) {
    return ElementKind::kLikelyBoilerplate;
  }
  return ElementKind::kContent;
}

int ClassWeight(const GumboNode* node) {
  const WordHits hits = MatchWords(node);
  int weight = 0;
  if (hits.positive) weight += 25;
  if (hits.strong_negative) weight -= 25;
  if (hits.weak_negative && !hits.positive) weight -= 25;
  return weight;
}

}  // namespace talaria::html
