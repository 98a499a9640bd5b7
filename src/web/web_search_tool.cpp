// web_search: a query to the configured search backend (search_backends.h), answered in the
// original's shape: {"success": true, "data": {"web": [{title, url, description, position}]}}.
#include <algorithm>
#include <string>

#include <nlohmann/json.hpp>

#include "talaria/core/tool_registration.h"
#include "web/search_backends.h"
#include "web/web_settings.h"

namespace talaria::web {
namespace {

constexpr std::string_view kWebSearchSchema = R"json({
  "name": "web_search",
  "description": "Search the web for information on any topic. Returns up to `limit` results, each with a title, URL and description. The backend may support operators such as site:, filetype:, intitle:, -term and \"exact phrases\". Use web_extract to read a result's page.",
  "parameters": {
    "type": "object",
    "properties": {
      "query": {"type": "string", "description": "The search query."},
      "limit": {"type": "integer", "description": "How many results to return (1-100).", "minimum": 1, "maximum": 100, "default": 5}
    },
    "required": ["query"]
  }
})json";

ToolResult Failure(const std::string& message) {
  ToolResult r = ToolResult::Text(
      DumpJson(Json{{"success", false}, {"error", message}}));  // the original's failure shape
  r.status = CallStatus::kError;
  return r;
}

ToolResult WebSearch(const Json& args, ToolContext& ctx) {
  const std::string query = JsonStringField(args, "query");
  if (query.find_first_not_of(" \t\r\n") == std::string::npos) {
    return Failure("query is empty");
  }
  int limit = 5;
  if (args.contains("limit") && args["limit"].is_number()) {
    limit = static_cast<int>(std::clamp(args["limit"].get<double>(), 1.0, 100.0));
  }
  auto settings = LoadWebSettings();
  if (!settings) return Failure(settings.error().message());
  const std::string& configured =
      settings->search_backend.empty() ? settings->backend : settings->search_backend;
  auto backend = ChooseSearchBackend(configured == "builtin" ? "" : configured);
  if (!backend) return Failure(backend.error().message());
  auto hits = (*backend)->search(query, limit, ctx.cancel);
  if (!hits) return Failure(hits.error().message());
  Json web = Json::array();
  int position = 0;
  for (const SearchHit& h : *hits) {
    if (position >= limit) break;
    web.push_back({{"title", h.title},
                   {"url", h.url},
                   {"description", h.description},
                   {"position", ++position}});
  }
  ToolResult r = ToolResult::Text(Json{{"success", true}, {"data", {{"web", std::move(web)}}}}.dump(
      2, ' ', false, Json::error_handler_t::replace));
  r.untrusted_source = "web_search";
  return r;
}

// Available when some backend is configured; otherwise `talaria tools` shows it unavailable
// and the description says what to set.
bool AnyBackend() {
  for (const SearchBackend& b : SearchBackends()) {
    if (b.available()) return true;
  }
  return false;
}

// What `talaria tools` says when no backend is configured: what any one of them needs.
std::string WhatToSet() {
  auto chosen = ChooseSearchBackend("");
  return chosen ? std::string() : chosen.error().message();
}

ToolSpec MakeWebSearchSpec() {
  ToolSpec spec;
  spec.name = "web_search";
  spec.toolset = "web";  // the original's; the static table also puts it in "search"
  spec.schema = kWebSearchSchema;
  spec.handler = WebSearch;
  spec.check_fn = AnyBackend;
  spec.unavailable_reason = WhatToSet;
  spec.emoji = "\xF0\x9F\x94\x8D";  // "🔍"
  spec.parallel = ParallelClass::kSafe;
  spec.counts_as_read = true;
  spec.annotations.read_only = true;
  spec.annotations.open_world = true;
  return spec;
}

}  // namespace
}  // namespace talaria::web

TALARIA_TOOL(WebSearch, talaria::web::MakeWebSearchSpec());
