// One pass of analysis over a parsed page: every element in document order with what it is
// (ElementKind), whether it is dropped, and the text and link bytes and commas under it; then,
// in main-content mode, the main content chosen by scoring (Readability's idea, generalised:
// paragraphs vote for their ancestors, weighted by text length and commas (CJK ones too),
// discounted by link density, nudged by class/id words and semantic tags; the top candidate
// widened to an ancestor shared by other strong candidates and joined by qualifying
// siblings), with fallbacks when nothing scores well. All passes are iterative.
// Thread-safety: not thread-safe; one analysis per page.
#pragma once

#include <gumbo.h>

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "html/boilerplate.h"

namespace talaria::html {

struct NodeInfo {
  const GumboNode* node = nullptr;
  int32_t parent = -1;    // index in PageAnalysis::nodes, -1 for the root
  uint32_t own_text = 0;  // non-space bytes of the element's own text children
  uint32_t own_commas = 0;
  uint32_t text = 0;       // non-space text bytes under it, dropped parts excluded
  uint32_t link_text = 0;  // of which inside <a>
  uint32_t commas = 0;
  ElementKind kind = ElementKind::kContent;
  bool inside_article = false;
  bool dropped = false;
  bool has_block_child = false;
  bool scored = false;
  float score = 0;

  float LinkDensity() const { return text == 0 ? 0.f : static_cast<float>(link_text) / text; }
};

class PageAnalysis {
 public:
  PageAnalysis(const GumboNode* root, bool main_content);

  // Elements to write, in document order: the chosen content (main-content mode) or the body.
  const std::vector<const GumboNode*>& selection() const { return selection_; }
  // Whether the writer should leave `node` out: dropped, or (main-content mode) a link-heavy
  // block inside the chosen content.
  bool Skip(const GumboNode* node) const;
  const NodeInfo* Find(const GumboNode* node) const;
  const GumboNode* body() const { return body_; }

 private:
  void Index(const GumboNode* root);
  void DropLikelyBoilerplate();
  void Measure();
  void Score();
  void Select();

  bool main_content_;
  const GumboNode* body_ = nullptr;
  std::vector<NodeInfo> nodes_;
  std::unordered_map<const GumboNode*, uint32_t> index_;
  std::vector<const GumboNode*> selection_;
  std::vector<const GumboNode*> excluded_;  // parts of a widened selection that are not content
};

}  // namespace talaria::html
