// The extract backends (extract_backends.h).
#include "web/extract_backends.h"

#include <algorithm>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "web/backend_http.h"

namespace talaria::web {
namespace {

using backend::Array;
using backend::Base;
using backend::Env;
using backend::Exchange;
using backend::JoinStrings;
using backend::Str;

// Documents in the order of `urls`, from answers keyed by URL; a URL the service left out is an
// error of its own.
std::vector<ExtractedDoc> InOrder(const std::vector<std::string>& urls,
                                  std::vector<ExtractedDoc> got, std::string_view what) {
  std::vector<ExtractedDoc> out;
  for (const std::string& u : urls) {
    auto it = std::find_if(got.begin(), got.end(), [&](const auto& d) { return d.url == u; });
    if (it != got.end()) {
      out.push_back(std::move(*it));
    } else {
      out.push_back({u, "", "", std::string(what) + " returned nothing for this URL"});
    }
  }
  return out;
}

// --- Firecrawl: POST /v2/scrape per URL, Bearer; data.markdown, data.metadata.
Result<std::vector<ExtractedDoc>> FirecrawlExtract(const std::vector<std::string>& urls,
                                                   const std::stop_token& stop) {
  std::vector<ExtractedDoc> out;
  const backend::Endpoint endpoint = TALARIA_TRY(backend::FirecrawlEndpoint(stop));
  for (const std::string& url : urls) {
    net::HttpRequest req;
    req.method = "POST";
    req.url = endpoint.origin + "/v2/scrape";
    req.headers = endpoint.headers;
    req.body = DumpJson(
        Json{{"url", url}, {"formats", Json::array({"markdown"})}, {"onlyMainContent", true}});
    req.total_timeout = std::chrono::seconds(60);
    auto answer = Exchange("firecrawl", std::move(req), stop);
    if (!answer) {
      out.push_back({url, "", "", answer.error().message()});
      continue;
    }
    const Json& a = *answer;
    if (!a.is_object() || !a.contains("data") || !a["data"].is_object()) {
      out.push_back({url, "", "", "firecrawl: " + (a.is_object() ? Str(a, "error") : "no data")});
      continue;
    }
    const Json& data = a["data"];
    ExtractedDoc d{url, "", Str(data, "markdown"), ""};
    if (d.content.empty()) d.content = Str(data, "html");
    if (data.contains("metadata")) {
      d.title = Str(data["metadata"], "title");
      const std::string source = Str(data["metadata"], "sourceURL");
      if (!source.empty()) d.url = source;
    }
    out.push_back(std::move(d));
  }
  return out;
}

// --- Tavily: POST /extract, the key in the body.
Result<std::vector<ExtractedDoc>> TavilyExtract(const std::vector<std::string>& urls,
                                                const std::stop_token& stop) {
  net::HttpRequest req;
  req.method = "POST";
  req.url = Base("TAVILY_BASE_URL", "https://api.tavily.com") + "/extract";
  req.body =
      DumpJson(Json{{"api_key", Env("TAVILY_API_KEY")}, {"urls", urls}, {"include_images", false}});
  req.total_timeout = std::chrono::seconds(60);
  const Json a = TALARIA_TRY(Exchange("tavily", std::move(req), stop));
  std::vector<ExtractedDoc> got;
  if (const Json* results = Array(a, "results")) {
    for (const Json& r : *results) {
      std::string content = Str(r, "raw_content");
      if (content.empty()) content = Str(r, "content");
      got.push_back({Str(r, "url"), Str(r, "title"), std::move(content), ""});
    }
  }
  if (const Json* failed = Array(a, "failed_results")) {
    for (const Json& r : *failed) {
      got.push_back({Str(r, "url"), "", "", "tavily: " + Str(r, "error")});
    }
  }
  return InOrder(urls, std::move(got), "tavily");
}

// --- Exa: POST /contents, x-api-key.
Result<std::vector<ExtractedDoc>> ExaExtract(const std::vector<std::string>& urls,
                                             const std::stop_token& stop) {
  net::HttpRequest req;
  req.method = "POST";
  req.url = Base("EXA_BASE_URL", "https://api.exa.ai") + "/contents";
  req.headers = {{"x-api-key", Env("EXA_API_KEY")}, {"x-exa-integration", "talaria"}};
  req.body = DumpJson(Json{{"urls", urls}, {"text", true}});
  req.total_timeout = std::chrono::seconds(60);
  const Json a = TALARIA_TRY(Exchange("exa", std::move(req), stop));
  std::vector<ExtractedDoc> got;
  if (const Json* results = Array(a, "results")) {
    for (const Json& r : *results)
      got.push_back({Str(r, "url"), Str(r, "title"), Str(r, "text"), ""});
  }
  return InOrder(urls, std::move(got), "exa");
}

// --- Parallel: POST /v1beta/extract, x-api-key; full_content, else the excerpts.
Result<std::vector<ExtractedDoc>> ParallelExtract(const std::vector<std::string>& urls,
                                                  const std::stop_token& stop) {
  net::HttpRequest req;
  req.method = "POST";
  req.url = Base("PARALLEL_BASE_URL", "https://api.parallel.ai") + "/v1beta/extract";
  req.headers = {{"x-api-key", Env("PARALLEL_API_KEY")}};
  req.body = DumpJson(Json{{"urls", urls}, {"full_content", true}});
  req.total_timeout = std::chrono::seconds(60);
  const Json a = TALARIA_TRY(Exchange("parallel", std::move(req), stop));
  std::vector<ExtractedDoc> got;
  if (const Json* results = Array(a, "results")) {
    for (const Json& r : *results) {
      std::string content = Str(r, "full_content");
      if (content.empty()) content = JoinStrings(Array(r, "excerpts"));
      got.push_back({Str(r, "url"), Str(r, "title"), std::move(content), ""});
    }
  }
  return InOrder(urls, std::move(got), "parallel");
}

}  // namespace

const std::vector<ExtractBackend>& ExtractBackends() {
  static const std::vector<ExtractBackend> kBackends = {
      {"firecrawl", "FIRECRAWL_API_KEY or FIRECRAWL_API_URL (or a tool gateway token)",
       &backend::FirecrawlConfigured, &FirecrawlExtract},
      {"tavily", "TAVILY_API_KEY", &backend::TavilyConfigured, &TavilyExtract},
      {"exa", "EXA_API_KEY", &backend::ExaConfigured, &ExaExtract},
      {"parallel", "PARALLEL_API_KEY", &backend::ParallelConfigured, &ParallelExtract},
  };
  return kBackends;
}

Result<const ExtractBackend*> ChooseExtractBackend(std::string_view name) {
  if (name.empty() || name == "builtin") return static_cast<const ExtractBackend*>(nullptr);
  for (const ExtractBackend& b : ExtractBackends()) {
    if (b.name != name) continue;
    if (!b.available()) {
      return Err(FailedPreconditionError("web.extract_backend " + b.name + " needs " + b.needs));
    }
    return &b;
  }
  if (name == "searxng" || name == "brave-free" || name == "brave") {
    return Err(InvalidArgumentError(
        std::string(name) +
        " is a search-only backend; set web.extract_backend to builtin, firecrawl, tavily, exa "
        "or parallel"));
  }
  return Err(InvalidArgumentError("web.extract_backend '" + std::string(name) +
                                  "' is not one of builtin, firecrawl, tavily, exa, parallel"));
}

}  // namespace talaria::web
