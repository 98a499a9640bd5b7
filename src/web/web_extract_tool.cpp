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
#include "web/extract_backends.h"
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

Json Blank(const std::string& url) {
  return Json{{"url", url}, {"title", ""}, {"content", ""}, {"error", nullptr}};
}

// The per-URL error, with blocked_by_policy when the guard refused it.
void SetError(Json& r, const std::string& url, const Status& error) {
  r["error"] = error.message();
  const std::string rule = RefusalRule(error);
  if (!rule.empty()) {
    auto parsed = ParseWebUrl(url);
    r["blocked_by_policy"] = {
        {"host", parsed ? parsed->host : ""}, {"rule", rule}, {"source", "network_guard"}};
  }
}

// The content as the model gets it: whole, or the window with the full text stored.
std::string ForModel(const std::string& url, const std::string& content, const WebSettings& s) {
  std::string stored;
  if (static_cast<int64_t>(content.size()) > s.extract_char_limit) {
    auto path = StoreFullText(url, content);
    if (path) stored = *path;
  }
  return WindowForModel(content, s.extract_char_limit, stored);
}

Json ExtractOne(const Fetcher& fetcher, const WebSettings& s, const std::string& url,
                ToolContext& ctx) {
  Json r = Blank(url);
  auto page = fetcher.Fetch(url, ctx.cancel, ctx.deadline);
  if (!page) {
    SetError(r, url, page.error());
    return r;
  }
  if (!page->redirects.empty()) r["url"] = page->url;  // where the content came from
  auto content = ContentOf(*page, ctx.cancel);
  if (!content) {
    r["error"] = content.error().message();
    return r;
  }
  r["title"] = content->title;
  r["content"] = ForModel(page->url, content->content, s);
  return r;
}

// Through a service: each URL judged by the guard first (resolved here), the rest sent in one
// request; a final URL the service reports is judged again.
std::vector<Json> ExtractThrough(const ExtractBackend& b, const NetworkGuard& guard,
                                 const WebSettings& s, const std::vector<std::string>& urls,
                                 ToolContext& ctx) {
  std::vector<Json> results(urls.size());
  std::vector<std::string> asked;
  std::vector<size_t> slots;
  for (size_t i = 0; i < urls.size(); ++i) {
    results[i] = Blank(urls[i]);
    // Only a refusal stops the URL here: a name that does not resolve on this machine is the
    // service's to resolve (the guard protects this machine's network, not the service's).
    auto admitted = guard.Admit(urls[i], ctx.cancel);
    if (!admitted && !RefusalRule(admitted.error()).empty()) {
      SetError(results[i], urls[i], admitted.error());
      continue;
    }
    if (!admitted && admitted.error().code() != StatusCode::kUnavailable) {
      SetError(results[i], urls[i], admitted.error());
      continue;
    }
    asked.push_back(urls[i]);
    slots.push_back(i);
  }
  if (asked.empty()) return results;
  auto docs = b.extract(asked, ctx.cancel);
  for (size_t k = 0; k < slots.size(); ++k) {
    Json& r = results[slots[k]];
    if (!docs) {
      r["error"] = docs.error().message();
      continue;
    }
    const ExtractedDoc& d = (*docs)[k];
    if (!d.error.empty()) {
      r["error"] = d.error;
      continue;
    }
    if (d.url != asked[k]) {
      if (auto checked = guard.Check(d.url); !checked) {
        SetError(r, d.url, checked.error());
        continue;
      }
      r["url"] = d.url;
    }
    r["title"] = d.title;
    r["content"] = ForModel(d.url, d.content, s);
  }
  return results;
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
  // web.extract_backend must name a usable backend; web.backend (for both capabilities) falls
  // back to talaria's own fetcher when it names a search-only or unconfigured service.
  const bool named = !settings->extract_backend.empty();
  auto chosen = ChooseExtractBackend(named ? settings->extract_backend : settings->backend);
  if (!chosen && named) return ToolResult::Error(chosen.error().message());
  const ExtractBackend* service = chosen ? *chosen : nullptr;
  auto fetcher = FetcherFor(*settings);
  if (!fetcher) return ToolResult::Error(fetcher.error().message());
  std::vector<Json> results(urls.size());
  if (service != nullptr) {
    results = ExtractThrough(*service, (*fetcher)->guard(), *settings, urls, ctx);
  } else {
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
