// What an element is before any scoring: never content (scripts, hidden elements, form
// controls), boilerplate by its tag or ARIA role (navigation, site header and footer,
// sidebars, dialogs such as cookie banners), or boilerplate by the words in its class and id
// (share bars, comments, related links, ads...). The word lists are general web vocabulary,
// not rules for sites.
// Thread-safety: free functions, no shared state.
#pragma once

#include <gumbo.h>

namespace talaria::html {

enum class ElementKind {
  kContent,            // ordinary element
  kNeverContent,       // dropped in every mode: script, style, hidden, form controls
  kBoilerplate,        // dropped in main-content mode: nav, aside, footer, role=navigation...
  kLikelyBoilerplate,  // dropped in main-content mode unless it holds most of the page's text
};

// REQUIRES: IsElement(node). `inside_article`: an <article> or <main> is an ancestor (its own
// <header> holds the title, not the site's banner).
ElementKind ClassifyElement(const GumboNode* node, bool inside_article);

// How much the class and id words say "content" (> 0) or "boilerplate" (< 0), for scoring.
int ClassWeight(const GumboNode* node);

}  // namespace talaria::html
