// The web_search backends (search_backends.h). Each turns its service's answer into SearchHits;
// a service that fails gives its error (HTTP status and the start of its body), never an empty
// list that would read as "nothing found".
#include "web/search_backends.h"

#include "web/backend_http.h"

#include <algorithm>
#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include "talaria/base/json.h"
#include "talaria/base/uri.h"
#include "talaria/net/http_client.h"

namespace talaria::web {
namespace {

using backend::Array;
using backend::Base;
using backend::Env;
using backend::Exchange;
using backend::JoinStrings;
using backend::Str;

Result<std::vector<SearchHit>> Missing(std::string_view what, std::string_view path) {
  return Err(UnavailableError(std::string(what) + " answered without " + std::string(path)));
}

// --- SearXNG: GET {SEARXNG_URL}/search?q=&format=json&pageno=1, by score descending.
bool SearxngAvailable() { return !Env("SEARXNG_URL").empty(); }
Result<std::vector<SearchHit>> SearxngSearch(std::string_view query, int limit,
                                             const std::stop_token& stop) {
  net::HttpRequest req;
  req.url = Base("SEARXNG_URL", "") + "/search?q=" + PercentEncode(query) + "&format=json&pageno=1";
  req.total_timeout = std::chrono::seconds(15);
  const Json answer = TALARIA_TRY(Exchange("searxng", std::move(req), stop));
  const Json* results = Array(answer, "results");
  if (results == nullptr) return Missing("searxng", "results[]");
  std::vector<std::pair<double, SearchHit>> scored;
  for (const Json& r : *results) {
    if (!r.is_object()) continue;
    const double score =
        r.contains("score") && r["score"].is_number() ? r["score"].get<double>() : 0;
    scored.push_back({score, {Str(r, "title"), Str(r, "url"), Str(r, "content")}});
  }
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<SearchHit> hits;
  for (auto& [score, hit] : scored) {
    if (static_cast<int>(hits.size()) >= limit) break;
    hits.push_back(std::move(hit));
  }
  return hits;
}

// --- Brave (free tier): GET /res/v1/web/search?q=&count=, X-Subscription-Token.
bool BraveAvailable() { return !Env("BRAVE_SEARCH_API_KEY").empty(); }
Result<std::vector<SearchHit>> BraveSearch(std::string_view query, int limit,
                                           const std::stop_token& stop) {
  net::HttpRequest req;
  req.url = Base("BRAVE_SEARCH_BASE_URL", "https://api.search.brave.com") +
            "/res/v1/web/search?q=" + PercentEncode(query) +
            "&count=" + std::to_string(std::clamp(limit, 1, 20));
  req.headers = {{"X-Subscription-Token", Env("BRAVE_SEARCH_API_KEY")}};
  req.total_timeout = std::chrono::seconds(15);
  const Json answer = TALARIA_TRY(Exchange("brave-free", std::move(req), stop));
  const Json* results =
      answer.is_object() && answer.contains("web") ? Array(answer["web"], "results") : nullptr;
  if (results == nullptr) return Missing("brave-free", "web.results[]");
  std::vector<SearchHit> hits;
  for (const Json& r : *results) {
    if (r.is_object()) hits.push_back({Str(r, "title"), Str(r, "url"), Str(r, "description")});
  }
  return hits;
}

// --- Tavily: POST /search, the key inside the body.
Result<std::vector<SearchHit>> TavilySearch(std::string_view query, int limit,
                                            const std::stop_token& stop) {
  net::HttpRequest req;
  req.method = "POST";
  req.url = Base("TAVILY_BASE_URL", "https://api.tavily.com") + "/search";
  req.body = DumpJson(Json{{"api_key", Env("TAVILY_API_KEY")},
                           {"query", query},
                           {"max_results", std::min(limit, 20)},
                           {"include_raw_content", false},
                           {"include_images", false}});
  req.total_timeout = std::chrono::seconds(60);
  const Json answer = TALARIA_TRY(Exchange("tavily", std::move(req), stop));
  const Json* results = Array(answer, "results");
  if (results == nullptr) return Missing("tavily", "results[]");
  std::vector<SearchHit> hits;
  for (const Json& r : *results) {
    if (r.is_object()) hits.push_back({Str(r, "title"), Str(r, "url"), Str(r, "content")});
  }
  return hits;
}

// --- Exa: POST /search, x-api-key, highlights joined into the description.
Result<std::vector<SearchHit>> ExaSearch(std::string_view query, int limit,
                                         const std::stop_token& stop) {
  net::HttpRequest req;
  req.method = "POST";
  req.url = Base("EXA_BASE_URL", "https://api.exa.ai") + "/search";
  req.headers = {{"x-api-key", Env("EXA_API_KEY")}, {"x-exa-integration", "talaria"}};
  req.body =
      DumpJson(Json{{"query", query}, {"numResults", limit}, {"contents", {{"highlights", true}}}});
  req.total_timeout = std::chrono::seconds(60);
  const Json answer = TALARIA_TRY(Exchange("exa", std::move(req), stop));
  const Json* results = Array(answer, "results");
  if (results == nullptr) return Missing("exa", "results[]");
  std::vector<SearchHit> hits;
  for (const Json& r : *results) {
    if (r.is_object()) {
      hits.push_back({Str(r, "title"), Str(r, "url"), JoinStrings(Array(r, "highlights"))});
    }
  }
  return hits;
}

// --- Parallel: POST /v1beta/search, x-api-key, excerpts joined into the description.
Result<std::vector<SearchHit>> ParallelSearch(std::string_view query, int limit,
                                              const std::stop_token& stop) {
  std::string mode = Env("PARALLEL_SEARCH_MODE");
  if (mode != "fast" && mode != "one-shot" && mode != "agentic") mode = "agentic";
  net::HttpRequest req;
  req.method = "POST";
  req.url = Base("PARALLEL_BASE_URL", "https://api.parallel.ai") + "/v1beta/search";
  req.headers = {{"x-api-key", Env("PARALLEL_API_KEY")}};
  req.body = DumpJson(Json{{"objective", query},
                           {"search_queries", Json::array({query})},
                           {"mode", mode},
                           {"max_results", std::min(limit, 20)}});
  req.total_timeout = std::chrono::seconds(60);
  const Json answer = TALARIA_TRY(Exchange("parallel", std::move(req), stop));
  const Json* results = Array(answer, "results");
  if (results == nullptr) return Missing("parallel", "results[]");
  std::vector<SearchHit> hits;
  for (const Json& r : *results) {
    if (r.is_object()) {
      hits.push_back({Str(r, "title"), Str(r, "url"), JoinStrings(Array(r, "excerpts"))});
    }
  }
  return hits;
}

// --- Firecrawl v2: POST /v2/search, Bearer; results in data.web[] (or web[]).
Result<std::vector<SearchHit>> FirecrawlSearch(std::string_view query, int limit,
                                               const std::stop_token& stop) {
  const backend::Endpoint endpoint = TALARIA_TRY(backend::FirecrawlEndpoint(stop));
  net::HttpRequest req;
  req.method = "POST";
  req.url = endpoint.origin + "/v2/search";
  req.headers = endpoint.headers;
  req.body = DumpJson(Json{{"query", query}, {"limit", limit}});
  req.total_timeout = std::chrono::seconds(60);
  const Json answer = TALARIA_TRY(Exchange("firecrawl", std::move(req), stop));
  if (answer.is_object() && answer.contains("success") && answer["success"] == false) {
    return Err(UnavailableError("firecrawl: " + Str(answer, "error")));
  }
  const Json* results = nullptr;
  if (answer.is_object() && answer.contains("data")) {
    results = answer["data"].is_array() ? &answer["data"] : Array(answer["data"], "web");
  }
  if (results == nullptr) results = Array(answer, "web");
  if (results == nullptr) return Missing("firecrawl", "data.web[]");
  std::vector<SearchHit> hits;
  for (const Json& r : *results) {
    if (r.is_object()) hits.push_back({Str(r, "title"), Str(r, "url"), Str(r, "description")});
  }
  return hits;
}

}  // namespace

const std::vector<SearchBackend>& SearchBackends() {
  static const std::vector<SearchBackend> kBackends = {
      {"tavily", "TAVILY_API_KEY", &backend::TavilyConfigured, &TavilySearch},
      {"exa", "EXA_API_KEY", &backend::ExaConfigured, &ExaSearch},
      {"parallel", "PARALLEL_API_KEY", &backend::ParallelConfigured, &ParallelSearch},
      {"firecrawl", "FIRECRAWL_API_KEY or FIRECRAWL_API_URL (or a tool gateway token)",
       &backend::FirecrawlConfigured, &FirecrawlSearch},
      {"searxng", "SEARXNG_URL", &SearxngAvailable, &SearxngSearch},
      {"brave-free", "BRAVE_SEARCH_API_KEY", &BraveAvailable, &BraveSearch},
  };
  return kBackends;
}

Result<const SearchBackend*> ChooseSearchBackend(std::string_view configured) {
  const auto& all = SearchBackends();
  if (!configured.empty()) {
    const std::string_view name = configured == "brave" ? "brave-free" : configured;
    auto it = std::find_if(all.begin(), all.end(), [&](const auto& b) { return b.name == name; });
    if (it == all.end()) {
      return Err(InvalidArgumentError(
          "config: web.search_backend '" + std::string(configured) +
          "' is not one of tavily, exa, parallel, firecrawl, searxng, brave-free"));
    }
    if (it->available()) return &*it;
  }
  for (const SearchBackend& b : all) {
    if (b.available()) return &b;
  }
  std::string needs;
  for (const SearchBackend& b : all) needs += (needs.empty() ? "" : ", ") + b.needs;
  return Err(NotFoundError("no web search backend is configured: set one of " + needs));
}

}  // namespace talaria::web
