// How much of an HTML document to hand to the parser so that parsing stays fast. An HTML5 tree
// builder checks "is there a <p> in scope" (and similar) by walking the stack of open elements,
// so a document of N nested <div>s costs O(N^2): 20,000 levels take 8 s in libgumbo. Browsers
// cap the tree depth for the same reason (Blink: 512). This scanner follows the open-element
// depth approximately (start and end tags, raw-text elements and comments skipped, elements
// with optional end tags not counted) and cuts the document where the depth or the summed
// depth of start tags (the parser's work) passes a limit.
// Thread-safety: free function, no shared state.
#pragma once

#include <cstddef>
#include <string_view>

namespace talaria::html {

struct NestingLimits {
  size_t max_depth = 400;
  // The sum over start tags of the depth they open at: ~40 ns each in libgumbo, so 25 M is
  // about a second of parsing for the worst input; real pages are under 2 M.
  size_t max_work = 25'000'000;
};

// The length of the prefix of `html` that stays within `limits` (html.size() for any page
// that does).
size_t ParseablePrefixLength(std::string_view html, const NestingLimits& limits = {});

}  // namespace talaria::html
