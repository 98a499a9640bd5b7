// HTML page (already decoded to UTF-8) to markdown, with main-content extraction: the article,
// post or documentation body of a page without its navigation, banners, sidebars, comments and
// other boilerplate. Parsed with a real HTML5 parser (libgumbo); the method is general (text
// and link density, DOM structure, candidate scoring with fallbacks), not rules for sites.
// Hostile input is expected: any bytes give a page (possibly empty), in bounded time, memory
// and stack depth.
// Thread-safety: free function, no shared state; safe to call from many threads at once.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace talaria::html {

struct ExtractOptions {
  // The page's URL: relative links and image sources are resolved against it (and against a
  // <base href> in the page). Empty: relative URLs are left as they are.
  std::string base_url;
  // true: only the main content; false: the whole body as markdown (scripts, styles, hidden
  // elements and form controls are still dropped).
  bool main_content = true;
  // Input beyond this many bytes is not parsed (the caller's fetch cap should be lower).
  size_t max_input_bytes = 16u << 20;
};

struct ExtractedPage {
  std::string title;     // og:title, else <title>, else the first <h1>; whitespace collapsed
  std::string markdown;  // CommonMark with pipe tables; empty when the page has no text
};

ExtractedPage ExtractMainContent(std::string_view html_utf8, const ExtractOptions& options);

}  // namespace talaria::html
