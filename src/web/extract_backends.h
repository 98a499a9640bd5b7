// The web_extract backends other than talaria's own fetcher, each speaking its service's API
// (hermes-wave2 d.2): Firecrawl (/v2/scrape per URL), Tavily (/extract), Exa (/contents) and
// Parallel (/v1beta/extract). The service fetches the page; talaria judges each URL with the
// network guard before asking (and Firecrawl's final URL after).
// Thread-safety: Extract is thread-safe.
#pragma once

#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "talaria/base/status.h"

namespace talaria::web {

struct ExtractedDoc {
  std::string url;
  std::string title;
  std::string content;  // markdown or text
  std::string error;    // non-empty: this URL failed
};

struct ExtractBackend {
  std::string name;   // "firecrawl", "tavily", "exa", "parallel"
  std::string needs;  // what must be set
  bool (*available)();
  // One document per URL, in order. An error: the whole request failed.
  Result<std::vector<ExtractedDoc>> (*extract)(const std::vector<std::string>& urls,
                                               const std::stop_token& stop);
};

const std::vector<ExtractBackend>& ExtractBackends();

// The backend `name` names: nullptr for "" or "builtin" (talaria's fetcher). InvalidArgument for
// a search-only or unknown backend; FailedPrecondition naming what to set when it is not
// configured.
Result<const ExtractBackend*> ChooseExtractBackend(std::string_view name);

}  // namespace talaria::web
