#include "html/page_analysis.h"

#include <algorithm>
#include <utility>

#include "html/gumbo_util.h"

namespace talaria::html {
namespace {

constexpr uint32_t kMinParagraphText = 25;
constexpr int kAncestorLevels = 5;

// Non-space bytes and commas (ASCII and the CJK 、。，) of a text node.
void CountText(std::string_view text, uint32_t* bytes, uint32_t* commas) {
  uint32_t n = 0;
  uint32_t c = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const auto b = static_cast<unsigned char>(text[i]);
    if (b <= ' ') continue;
    ++n;
    if (b == ',') {
      ++c;
    } else if (b == 0xE3 && i + 2 < text.size() &&
               static_cast<unsigned char>(text[i + 1]) == 0x80 &&
               (static_cast<unsigned char>(text[i + 2]) == 0x81 ||
                static_cast<unsigned char>(text[i + 2]) == 0x82)) {
      ++c;
    } else if (b == 0xEF && i + 2 < text.size() &&
               static_cast<unsigned char>(text[i + 1]) == 0xBC &&
               static_cast<unsigned char>(text[i + 2]) == 0x8C) {
      ++c;
    }
  }
  *bytes += n;
  *commas += c;
}

// What a candidate starts with before its paragraphs vote: structure says something.
float InitialScore(const GumboNode* node) {
  float score = 0;
  switch (TagOf(node)) {
    case GUMBO_TAG_ARTICLE:
      score = 10;
      break;
    case GUMBO_TAG_MAIN:
    case GUMBO_TAG_DIV:
      score = 5;
      break;
    case GUMBO_TAG_PRE:
    case GUMBO_TAG_TD:
    case GUMBO_TAG_BLOCKQUOTE:
    case GUMBO_TAG_SECTION:
      score = 3;
      break;
    case GUMBO_TAG_ADDRESS:
    case GUMBO_TAG_OL:
    case GUMBO_TAG_UL:
    case GUMBO_TAG_DL:
    case GUMBO_TAG_DD:
    case GUMBO_TAG_DT:
    case GUMBO_TAG_LI:
    case GUMBO_TAG_FORM:
      score = -3;
      break;
    case GUMBO_TAG_H1:
    case GUMBO_TAG_H2:
    case GUMBO_TAG_H3:
    case GUMBO_TAG_H4:
    case GUMBO_TAG_H5:
    case GUMBO_TAG_H6:
    case GUMBO_TAG_TH:
      score = -5;
      break;
    default:
      break;
  }
  const std::string_view role = AttributeOf(node, "role");
  if (role == "main" || role == "article") score += 5;
  return score + static_cast<float>(ClassWeight(node));
}

// Blocks that are content wherever they stand between the parts of a page's content.
bool IsContentBlockTag(GumboTag tag) {
  switch (tag) {
    case GUMBO_TAG_H1:
    case GUMBO_TAG_H2:
    case GUMBO_TAG_H3:
    case GUMBO_TAG_H4:
    case GUMBO_TAG_H5:
    case GUMBO_TAG_H6:
    case GUMBO_TAG_PRE:
    case GUMBO_TAG_TABLE:
    case GUMBO_TAG_UL:
    case GUMBO_TAG_OL:
    case GUMBO_TAG_DL:
    case GUMBO_TAG_BLOCKQUOTE:
    case GUMBO_TAG_FIGURE:
      return true;
    default:
      return false;
  }
}

bool IsParagraphLike(const NodeInfo& info) {
  switch (TagOf(info.node)) {
    case GUMBO_TAG_P:
    case GUMBO_TAG_PRE:
    case GUMBO_TAG_TD:
    case GUMBO_TAG_DD:
      return true;
    case GUMBO_TAG_DIV:
    case GUMBO_TAG_SECTION:
    case GUMBO_TAG_ARTICLE:
      return !info.has_block_child;
    default:
      return false;
  }
}

}  // namespace

PageAnalysis::PageAnalysis(const GumboNode* root, bool main_content) : main_content_(main_content) {
  Index(root);
  Measure();
  if (main_content_) {
    DropLikelyBoilerplate();
    Measure();
    Score();
  }
  Select();
}

const NodeInfo* PageAnalysis::Find(const GumboNode* node) const {
  const auto found = index_.find(node);
  return found == index_.end() ? nullptr : &nodes_[found->second];
}

void PageAnalysis::Index(const GumboNode* root) {
  std::vector<std::pair<const GumboNode*, int32_t>> stack;
  if (IsElement(root)) stack.emplace_back(root, -1);
  while (!stack.empty()) {
    const auto [node, parent] = stack.back();
    stack.pop_back();
    NodeInfo info;
    info.node = node;
    info.parent = parent;
    bool parent_dropped = false;
    if (parent >= 0) {
      const NodeInfo& p = nodes_[static_cast<size_t>(parent)];
      const GumboTag ptag = TagOf(p.node);
      info.inside_article = p.inside_article || ptag == GUMBO_TAG_ARTICLE || ptag == GUMBO_TAG_MAIN;
      parent_dropped = p.dropped;
    }
    info.kind = ClassifyElement(node, info.inside_article);
    info.dropped = parent_dropped || info.kind == ElementKind::kNeverContent ||
                   (main_content_ && info.kind == ElementKind::kBoilerplate);
    if (TagOf(node) == GUMBO_TAG_BODY && body_ == nullptr) body_ = node;
    const auto index = static_cast<int32_t>(nodes_.size());
    const GumboVector& children = node->v.element.children;
    if (!info.dropped) {
      for (unsigned i = children.length; i > 0; --i) {
        const auto* child = static_cast<const GumboNode*>(children.data[i - 1]);
        if (IsElement(child)) {
          stack.emplace_back(child, index);
          if (IsBlockTag(TagOf(child))) info.has_block_child = true;
        } else if (IsTextual(child)) {
          CountText(child->v.text.text, &info.own_text, &info.own_commas);
        }
      }
    }
    index_.emplace(node, static_cast<uint32_t>(index));
    nodes_.push_back(info);
  }
}

void PageAnalysis::Measure() {
  for (NodeInfo& info : nodes_) {
    info.text = info.own_text;
    info.commas = info.own_commas;
    info.link_text = 0;
  }
  // Reverse document order: every element's descendants come before it.
  for (size_t i = nodes_.size(); i > 0; --i) {
    NodeInfo& info = nodes_[i - 1];
    if (TagOf(info.node) == GUMBO_TAG_A) info.link_text = info.text;
    if (info.dropped || info.parent < 0) continue;
    NodeInfo& parent = nodes_[static_cast<size_t>(info.parent)];
    parent.text += info.text;
    parent.link_text += info.link_text;
    parent.commas += info.commas;
  }
}

void PageAnalysis::DropLikelyBoilerplate() {
  const NodeInfo* body = body_ != nullptr ? Find(body_) : nullptr;
  const uint32_t page_text = body != nullptr ? body->text : 0;
  for (NodeInfo& info : nodes_) {
    if (info.parent >= 0 && nodes_[static_cast<size_t>(info.parent)].dropped) info.dropped = true;
    if (info.dropped || info.kind != ElementKind::kLikelyBoilerplate) continue;
    // A class word alone does not drop most of the page ("has-sidebar" on the wrapper).
    if (static_cast<uint64_t>(info.text) * 2 < page_text || info.LinkDensity() > 0.5f) {
      info.dropped = true;
    }
  }
}

void PageAnalysis::Score() {
  for (const NodeInfo& paragraph : nodes_) {
    if (paragraph.dropped || paragraph.text < kMinParagraphText || !IsParagraphLike(paragraph)) {
      continue;
    }
    const float vote = (1.f + static_cast<float>(paragraph.commas) +
                        std::min(static_cast<float>(paragraph.text) / 100.f, 3.f)) *
                       (1.f - paragraph.LinkDensity());
    int32_t ancestor = paragraph.parent;
    for (int level = 0; level < kAncestorLevels && ancestor >= 0; ++level) {
      NodeInfo& a = nodes_[static_cast<size_t>(ancestor)];
      if (TagOf(a.node) == GUMBO_TAG_HTML) break;
      if (!a.scored) {
        a.scored = true;
        a.score = InitialScore(a.node);
      }
      const float divider = level == 0 ? 1.f : level == 1 ? 2.f : static_cast<float>(level) * 3.f;
      a.score += vote / divider;
      ancestor = a.parent;
    }
  }
  for (NodeInfo& info : nodes_) {
    if (info.scored) info.score *= 1.f - info.LinkDensity();
  }
}

void PageAnalysis::Select() {
  const GumboNode* fallback =
      body_ != nullptr ? body_ : (nodes_.empty() ? nullptr : nodes_[0].node);
  if (fallback == nullptr) return;
  selection_ = {fallback};
  if (!main_content_) return;

  int32_t best = -1;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const NodeInfo& info = nodes_[i];
    if (!info.scored || info.dropped) continue;
    if (best < 0 || info.score > nodes_[static_cast<size_t>(best)].score) {
      best = static_cast<int32_t>(i);
    }
  }
  if (best < 0) return;
  auto at = [this](int32_t i) -> NodeInfo& { return nodes_[static_cast<size_t>(i)]; };
  auto is_top = [&](int32_t i) {
    const GumboTag tag = TagOf(at(i).node);
    return tag == GUMBO_TAG_BODY || tag == GUMBO_TAG_HTML;
  };
  auto contains = [&](int32_t ancestor, int32_t node) {
    for (int32_t n = node; n >= 0; n = at(n).parent) {
      if (n == ancestor) return true;
    }
    return false;
  };

  // Other strong candidates sharing an ancestor with the best: the content is split in parts
  // (one per section or post) and that ancestor holds them all.
  const float best_score = at(best).score;
  std::vector<int32_t> alternatives;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const NodeInfo& info = nodes_[i];
    if (static_cast<int32_t>(i) != best && info.scored && !info.dropped &&
        info.score >= 0.5f * best_score && !contains(static_cast<int32_t>(i), best) &&
        !contains(best, static_cast<int32_t>(i))) {
      alternatives.push_back(static_cast<int32_t>(i));
    }
  }
  if (alternatives.size() >= 2) {
    for (int32_t a = at(best).parent; a >= 0 && !is_top(a); a = at(a).parent) {
      size_t inside = 0;
      for (const int32_t alt : alternatives) inside += contains(a, alt) ? 1 : 0;
      if (inside < 2) continue;
      // The parts between the posts or sections that are not content themselves (a reply
      // form, forum statistics) stay out: the ancestor's children are judged like siblings.
      const float part_threshold = std::max(10.f, best_score * 0.2f);
      const GumboVector& parts = at(a).node->v.element.children;
      for (unsigned k = 0; k < parts.length; ++k) {
        const auto* part = static_cast<const GumboNode*>(parts.data[k]);
        const auto found = index_.find(part);
        if (found == index_.end()) continue;
        const auto p = static_cast<int32_t>(found->second);
        const NodeInfo& info = at(p);
        if (info.dropped) continue;
        bool keep = contains(p, best) || (info.scored && info.score >= part_threshold) ||
                    IsContentBlockTag(TagOf(part)) ||
                    (TagOf(part) == GUMBO_TAG_P && info.text >= 80 && info.LinkDensity() < 0.25f);
        for (size_t i = 0; i < alternatives.size() && !keep; ++i) {
          keep = contains(p, alternatives[i]);
        }
        if (!keep) excluded_.push_back(part);
      }
      best = a;
      break;
    }
  }
  // A parent that scores higher (or holds the same text) is the better frame.
  {
    float last = at(best).score;
    const float threshold = last / 3.f;
    for (int32_t a = at(best).parent; a >= 0 && !is_top(a); a = at(a).parent) {
      if (at(a).text == at(best).text) {
        best = a;
        continue;
      }
      if (!at(a).scored) continue;
      if (at(a).score < threshold) break;
      if (at(a).score > last) {
        best = a;
        break;
      }
      last = at(a).score;
    }
  }
  if (is_top(best)) return;

  // Siblings that belong to the content: scored well, or plain paragraphs of prose.
  std::vector<const GumboNode*> chosen;
  uint32_t chosen_text = 0;
  const int32_t parent = at(best).parent;
  const float sibling_threshold = std::max(10.f, at(best).score * 0.2f);
  const std::string best_class(AttributeOf(at(best).node, "class"));
  const GumboVector& siblings = at(parent).node->v.element.children;
  for (unsigned k = 0; k < siblings.length; ++k) {
    const auto* sibling = static_cast<const GumboNode*>(siblings.data[k]);
    const NodeInfo* info = Find(sibling);
    if (info == nullptr || info->dropped) continue;
    bool take = sibling == at(best).node;
    if (!take && info->scored) {
      float bonus = 0;
      if (!best_class.empty() && AttributeOf(sibling, "class") == best_class) {
        bonus = at(best).score * 0.2f;
      }
      take = info->score + bonus >= sibling_threshold;
    }
    if (!take && TagOf(sibling) == GUMBO_TAG_P) {
      take = info->text >= 80 && info->LinkDensity() < 0.25f;
    }
    if (take) {
      chosen.push_back(sibling);
      chosen_text += info->text;
    }
  }
  // Too little to be an article: the page is not shaped like one; give the cleaned body.
  const NodeInfo* body = Find(fallback);
  if (chosen_text < 250 && body != nullptr && body->text > 2 * chosen_text + 250) return;
  selection_ = std::move(chosen);
}

bool PageAnalysis::Skip(const GumboNode* node) const {
  const NodeInfo* info = Find(node);
  if (info == nullptr || info->dropped) return true;
  if (!main_content_) return false;
  if (std::find(excluded_.begin(), excluded_.end(), node) != excluded_.end()) return true;
  if (std::find(selection_.begin(), selection_.end(), node) != selection_.end()) return false;
  switch (TagOf(node)) {
    case GUMBO_TAG_DIV:
    case GUMBO_TAG_SECTION:
    case GUMBO_TAG_UL:
    case GUMBO_TAG_OL:
    case GUMBO_TAG_DL:
    case GUMBO_TAG_TABLE:
    case GUMBO_TAG_P:
      // Link lists left inside the content (related stories, tag clouds, "read more").
      return info->text > 0 && info->LinkDensity() > 0.5f && info->text < 2000;
    default:
      return false;
  }
}

}  // namespace talaria::html
