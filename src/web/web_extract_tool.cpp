// web_extract: up to 5 URLs fetched in parallel through the network guard (fetcher.h), each
// page's main content as markdown (page_content.h), in the original's shape:
//   {"results": [{"url", "title", "content", "error", "blocked_by_policy"?}]}
// A URL that carries what looks like an API key refuses the whole call before any connection.
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "talaria/core/tool_registration.h"
#include "talaria/web/fetcher.h"
#include "talaria/web/network_guard.h"
#include "web/page_content.h"
#include "web/web_settings.h"

namespace talaria::web {
namespace {

constexpr size_t kMaxUrls = 5;

constexpr std::string_view kSchema = R"json({
  "name": "web_extract",
  "description": "Fetch web pages and return their main content as markdown (navigation, ads and other boilerplate removed; headings, lists, tables, code and links kept). Plain text and JSON come back as they are. A page longer than the configured limit comes back as its beginning and end, with the exact read_file call for the stored middle. Private and internal addresses are refused. If a page cannot be fetched, try the browser tools.",
  "parameters": {
    "type": "object",
    "properties": {
      "urls": {
        "type": "array",
        "items": {"type": "string"},
        "description": "The URLs to fetch (at most 5).",
        "maxItems": 5
      }
    },
    "required": ["urls"]
  }
})json";

// One Fetcher (and so one connection pool) per distinct guard configuration, for the process.
Result<std::shared_ptr<Fetcher>> FetcherFor(const WebSettings& s) {
  static std::mutex mu;
  static std::map<std::string, std::shared_ptr<Fetcher>> cache;
  std::string key = s.ca_file + "\n";
  for (const std::string& a : s.allow_private) key += a + "\n";
  std::lock_guard lock(mu);
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  auto guard =
      TALARIA_TRY(NetworkGuard::Create({.allow_private = s.allow_private, .resolver = nullptr}));
  FetchOptions options;
  options.ca_file = s.ca_file;
  auto fetcher = TALARIA_TRY(Fetcher::Create(std::move(guard), options));
  cache[key] = fetcher;
  return fetcher;
}

Json ExtractOne(const Fetcher& fetcher, const WebSettings& s, const std::string& url,
                ToolContext& ctx) {
  Json r{{"url", url}, {"title", ""}, {"content", ""}, {"error", nullptr}};
  auto page = fetcher.Fetch(url, ctx.cancel, ctx.deadline);
  if (!page) {
    r["error"] = page.error().message();
    const std::string rule = RefusalRule(page.error());
    if (!rule.empty()) {
      auto parsed = ParseWebUrl(url);
      r["blocked_by_policy"] = {
          {"host", parsed ? parsed->host : ""}, {"rule", rule}, {"source", "network_guard"}};
    }
    return r;
  }
  if (!page->redirects.empty()) r["url"] = page->url;  // where the content came from
  auto content = ContentOf(*page);
  if (!content) {
    r["error"] = content.error().message();
    return r;
  }
  r["title"] = content->title;
  std::string stored;
  if (static_cast<int64_t>(content->content.size()) > s.extract_char_limit) {
    auto path = StoreFullText(page->url, content->content);
    if (path) stored = *path;
  }
  r["content"] = WindowForModel(content->content, s.extract_char_limit, stored);
  return r;
}

ToolResult WebExtract(const Json& args, ToolContext& ctx) {
  std::vector<std::string> urls;
  if (args.contains("urls") && args["urls"].is_array()) {
    for (const Json& u : args["urls"]) {
      if (u.is_string()) urls.push_back(u.get<std::string>());
    }
  }
  if (urls.empty()) return ToolResult::Error("urls must be a non-empty array of URL strings");
  if (urls.size() > kMaxUrls) urls.resize(kMaxUrls);
  for (const std::string& u : urls) {
    if (UrlCarriesSecret(u)) {
      ToolResult r = ToolResult::Text(DumpJson(
          Json{{"success", false},
               {"error",
                "Blocked: URL contains what appears to be an API key or token. Secrets must not be "
                "sent to web pages; remove it from the URL."}}));
      r.status = CallStatus::kError;
      return r;
    }
  }
  auto settings = LoadWebSettings();
  if (!settings) return ToolResult::Error(settings.error().message());
  if (!settings->extract_backend.empty() && settings->extract_backend != "builtin") {
    return ToolResult::Error("web.extract_backend '" + settings->extract_backend +
                             "' is not available in talaria yet; use builtin (the default)");
  }
  auto fetcher = FetcherFor(*settings);
  if (!fetcher) return ToolResult::Error(fetcher.error().message());
  std::vector<Json> results(urls.size());
  {
    std::vector<std::jthread> workers;
    for (size_t i = 0; i + 1 < urls.size(); ++i) {
      workers.emplace_back([&, i] { results[i] = ExtractOne(**fetcher, *settings, urls[i], ctx); });
    }
    results.back() = ExtractOne(**fetcher, *settings, urls.back(), ctx);
  }
  bool any = false;
  Json list = Json::array();
  for (Json& r : results) {
    any |= r["error"].is_null() && !r["content"].get<std::string>().empty();
    list.push_back(std::move(r));
  }
  if (!any) {
    return ToolResult::ErrorJson(
        Json{{"error", "Content was inaccessible or not found"}, {"results", std::move(list)}});
  }
  ToolResult r = ToolResult::Text(
      Json{{"results", std::move(list)}}.dump(2, ' ', false, Json::error_handler_t::replace));
  r.untrusted_source = "web_extract";
  return r;
}

ToolSpec MakeSpec() {
  ToolSpec spec;
  spec.name = "web_extract";
  spec.toolset = "web";
  spec.schema = kSchema;
  spec.handler = WebExtract;
  spec.emoji = "\xF0\x9F\x93\x84";  // "📄"
  spec.parallel = ParallelClass::kSafe;
  spec.counts_as_read = true;
  spec.annotations.read_only = true;
  spec.annotations.open_world = true;
  return spec;
}

}  // namespace
}  // namespace talaria::web

TALARIA_TOOL(WebExtract, talaria::web::MakeSpec());
