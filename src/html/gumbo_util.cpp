#include "html/gumbo_util.h"

#include <string>

#include "talaria/base/ascii.h"

namespace talaria::html {

ParsedHtml::ParsedHtml(std::string_view html) {
  GumboOptions options = kGumboDefaultOptions;
  // Errors are only recorded, never acted on: recording them costs time and memory on the
  // broken markup hostile pages are made of.
  options.max_errors = 0;
  output_ = gumbo_parse_with_options(&options, html.data(), html.size());
}

ParsedHtml::~ParsedHtml() { gumbo_destroy_output(&kGumboDefaultOptions, output_); }

std::string_view AttributeOf(const GumboNode* node, const char* name) {
  if (!IsElement(node)) return {};
  const GumboAttribute* attribute = gumbo_get_attribute(&node->v.element.attributes, name);
  return attribute == nullptr ? std::string_view() : std::string_view(attribute->value);
}

bool HasAttribute(const GumboNode* node, const char* name) {
  return IsElement(node) && gumbo_get_attribute(&node->v.element.attributes, name) != nullptr;
}

bool IsBlockTag(GumboTag tag) {
  switch (tag) {
    case GUMBO_TAG_ADDRESS:
    case GUMBO_TAG_ARTICLE:
    case GUMBO_TAG_ASIDE:
    case GUMBO_TAG_BLOCKQUOTE:
    case GUMBO_TAG_BODY:
    case GUMBO_TAG_CENTER:
    case GUMBO_TAG_DD:
    case GUMBO_TAG_DETAILS:
    case GUMBO_TAG_DIR:
    case GUMBO_TAG_DIV:
    case GUMBO_TAG_DL:
    case GUMBO_TAG_DT:
    case GUMBO_TAG_FIELDSET:
    case GUMBO_TAG_FIGCAPTION:
    case GUMBO_TAG_FIGURE:
    case GUMBO_TAG_FOOTER:
    case GUMBO_TAG_FORM:
    case GUMBO_TAG_H1:
    case GUMBO_TAG_H2:
    case GUMBO_TAG_H3:
    case GUMBO_TAG_H4:
    case GUMBO_TAG_H5:
    case GUMBO_TAG_H6:
    case GUMBO_TAG_HEADER:
    case GUMBO_TAG_HGROUP:
    case GUMBO_TAG_HR:
    case GUMBO_TAG_HTML:
    case GUMBO_TAG_LI:
    case GUMBO_TAG_MAIN:
    case GUMBO_TAG_MENU:
    case GUMBO_TAG_NAV:
    case GUMBO_TAG_OL:
    case GUMBO_TAG_P:
    case GUMBO_TAG_PRE:
    case GUMBO_TAG_SECTION:
    case GUMBO_TAG_SUMMARY:
    case GUMBO_TAG_TABLE:
    case GUMBO_TAG_TBODY:
    case GUMBO_TAG_TD:
    case GUMBO_TAG_TFOOT:
    case GUMBO_TAG_TH:
    case GUMBO_TAG_THEAD:
    case GUMBO_TAG_TR:
    case GUMBO_TAG_UL:
    case GUMBO_TAG_CAPTION:
    case GUMBO_TAG_LISTING:
    case GUMBO_TAG_XMP:
    case GUMBO_TAG_PLAINTEXT:
      return true;
    default:
      return false;
  }
}

bool IsUnknownTagNamed(const GumboNode* node, std::string_view name) {
  if (TagOf(node) != GUMBO_TAG_UNKNOWN) return false;
  GumboStringPiece piece = node->v.element.original_tag;
  if (piece.data == nullptr || piece.length == 0) return false;
  gumbo_tag_from_original_text(&piece);
  return EqualsIgnoringAsciiCase(std::string_view(piece.data, piece.length), name);
}

std::string ClassAndId(const GumboNode* node, size_t limit) {
  std::string out(AttributeOf(node, "class").substr(0, limit));
  const std::string_view id = AttributeOf(node, "id");
  if (!id.empty()) {
    out += ' ';
    out += id.substr(0, limit);
  }
  for (char& c : out) c = AsciiLower(c);
  return out;
}

}  // namespace talaria::html
