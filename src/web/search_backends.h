// The web_search backends, each speaking its service's real API (hermes-wave2 d.2): SearXNG,
// Brave (free tier), Tavily, Exa, Parallel and Firecrawl. Their endpoints are configured by the
// user, so they are reached directly, not through the network guard (a self-hosted SearXNG on
// localhost is the common case).
// Thread-safety: Search is thread-safe (each call makes its own client).
#pragma once

#include <chrono>
#include <memory>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "talaria/base/status.h"

namespace talaria::web {

struct SearchHit {
  std::string title;
  std::string url;
  std::string description;
};

struct SearchBackend {
  std::string name;  // "searxng", "brave-free", "tavily", "exa", "parallel", "firecrawl"
  // What must be set for it to be available ("SEARXNG_URL").
  std::string needs;
  bool (*available)();
  Result<std::vector<SearchHit>> (*search)(std::string_view query, int limit,
                                           const std::stop_token& stop);
};

// Every backend, in the original's auto-detect order: tavily, exa, parallel, firecrawl,
// searxng, brave-free.
const std::vector<SearchBackend>& SearchBackends();

// The backend to use: `configured` (web.search_backend, else web.backend) when it names an
// available one; else the first available in auto-detect order. NotFound (naming what to set)
// when none is available; InvalidArgument for an unknown configured name.
Result<const SearchBackend*> ChooseSearchBackend(std::string_view configured);

}  // namespace talaria::web
