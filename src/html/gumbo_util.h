// Small helpers over libgumbo's tree: attribute lookup, element tests, the parse itself as an
// owned object.
// Thread-safety: free functions and a value type; a parsed tree is read-only after parsing.
#pragma once

#include <gumbo.h>

#include <memory>
#include <string_view>

namespace talaria::html {

// A parsed document; destroys libgumbo's output when it goes.
class ParsedHtml {
 public:
  // Parses `html` whole (the caller bounds its size and nesting; see nesting_limit.h).
  explicit ParsedHtml(std::string_view html);
  ~ParsedHtml();
  ParsedHtml(const ParsedHtml&) = delete;
  ParsedHtml& operator=(const ParsedHtml&) = delete;

  const GumboNode* root() const { return output_->root; }

 private:
  GumboOutput* output_;
};

inline bool IsElement(const GumboNode* node) {
  return node != nullptr && node->type == GUMBO_NODE_ELEMENT;
}

inline bool IsTextual(const GumboNode* node) {
  return node->type == GUMBO_NODE_TEXT || node->type == GUMBO_NODE_WHITESPACE ||
         node->type == GUMBO_NODE_CDATA;
}

inline GumboTag TagOf(const GumboNode* node) {
  return IsElement(node) ? node->v.element.tag : GUMBO_TAG_UNKNOWN;
}

inline const GumboVector& ChildrenOf(const GumboNode* node) {
  return node->type == GUMBO_NODE_DOCUMENT ? node->v.document.children : node->v.element.children;
}

inline const GumboNode* ChildAt(const GumboNode* node, unsigned i) {
  return static_cast<const GumboNode*>(ChildrenOf(node).data[i]);
}

// The value of attribute `name` (lower case), empty when absent.
std::string_view AttributeOf(const GumboNode* node, const char* name);
bool HasAttribute(const GumboNode* node, const char* name);

// The element is laid out as a block (its content starts on a new line).
bool IsBlockTag(GumboTag tag);

// An element libgumbo 0.10 has no tag for (<dialog>), by its name as written.
bool IsUnknownTagNamed(const GumboNode* node, std::string_view name);

// The first `limit` bytes of the element's class and id, lower case, joined by a space: what
// the boilerplate and content word lists are matched against.
std::string ClassAndId(const GumboNode* node, size_t limit = 256);

}  // namespace talaria::html
