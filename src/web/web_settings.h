// The `web` section of config.yaml and the environment the web tools read (the original's keys):
//
//   web:
//     backend: tavily             # both capabilities, unless one of the two below is set
//     search_backend: searxng     # searxng, brave-free, tavily, exa, parallel, firecrawl
//     extract_backend: builtin    # builtin (talaria's own fetcher), firecrawl, tavily, exa,
//                                 #   parallel
//     extract_char_limit: 15000   # 2,000 to 500,000
//     allow_private: ["127.0.0.1:8080", "10.1.0.0/16"]
//     ca_file: /etc/ssl/private-ca.pem
//     use_gateway: true           # Firecrawl through the managed tool gateway even when a
//                                 #   direct key is set (the original's prefers_gateway("web"))
//
// Keys and endpoints come from the environment: SEARXNG_URL, BRAVE_SEARCH_API_KEY,
// TAVILY_API_KEY (TAVILY_BASE_URL), EXA_API_KEY, PARALLEL_API_KEY (PARALLEL_SEARCH_MODE),
// FIRECRAWL_API_KEY / FIRECRAWL_API_URL; talaria adds BRAVE_SEARCH_BASE_URL, EXA_BASE_URL and
// PARALLEL_BASE_URL (a proxy or a test's fake).
// Thread-safety: value types; LoadWebSettings reads the process's config (ToolCallConfig) and
// the environment each call.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "talaria/base/status.h"
#include "talaria/core/config.h"

namespace talaria::web {

struct WebSettings {
  std::string backend;
  std::string search_backend;
  std::string extract_backend;
  int64_t extract_char_limit = 15'000;
  std::vector<std::string> allow_private;
  std::string ca_file;
  bool use_gateway = false;
};

Result<WebSettings> WebSettingsFromConfig(const Config& config);
// The web section of the config the process loaded (ToolCallConfig; defaults when it has none).
Result<WebSettings> LoadWebSettings();

}  // namespace talaria::web
