// Small helpers over libgumbo's tree: attribute lookup, element tests, the parse itself as an
// owned object.
// Thread-safety: free functions and a value type; a parsed tree is read-only after parsing.
#pragma once

#include <gumbo.h>

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace talaria::html {

// Where libgumbo's allocations for one parse come from. Small blocks are bumped out of 64 KB
// chunks and never freed one by one (a third of a parse's time went to malloc and free);
// large ones (string buffers and vectors that grow) are malloc'd, freed as libgumbo frees them,
// and any left are freed with the arena. The whole tree goes in one step: no walk over it
// (libgumbo's own destroy recurses once per level).
class GumboArena {
 public:
  GumboArena() = default;
  ~GumboArena();
  GumboArena(const GumboArena&) = delete;
  GumboArena& operator=(const GumboArena&) = delete;

  static void* Allocate(void* arena, size_t size);
  static void Deallocate(void* arena, void* block);

 private:
  struct LargeBlock;
  void* AllocateSmall(size_t size);
  void* AllocateLarge(size_t size);

  std::vector<std::unique_ptr<unsigned char[]>> chunks_;
  unsigned char* next_ = nullptr;
  size_t left_ = 0;
  LargeBlock* large_ = nullptr;  // doubly linked: freed in O(1), the rest freed at the end
};

// A parsed document; its tree lives as long as this object.
class ParsedHtml {
 public:
  // Parses `html` whole (the caller bounds its size and nesting; see nesting_limit.h).
  explicit ParsedHtml(std::string_view html);
  ParsedHtml(const ParsedHtml&) = delete;
  ParsedHtml& operator=(const ParsedHtml&) = delete;

  const GumboNode* root() const { return output_->root; }

 private:
  GumboOutput* Parse(std::string_view html);

  GumboArena arena_;
  std::string marked_input_;  // the text parsed when its runs were marked (text_runs.h)
  std::string plain_input_;   // without markers, when they did not come back: still deduplicated
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
