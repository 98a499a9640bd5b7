// The backends' shared exchange and readers (backend_http.h).
#include "web/backend_http.h"

#include <cstdlib>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "talaria/net/send_and_collect.h"
#include "talaria/net/tool_gateway.h"
#include "web/web_settings.h"

namespace talaria::web::backend {
namespace {

constexpr size_t kMaxAnswerBytes = size_t{8} << 20;

}  // namespace

std::string Env(const char* name) {
  const char* v = std::getenv(name);  // NOLINT(concurrency-mt-unsafe): read-only use
  return v == nullptr ? "" : v;
}

std::string Base(const char* var, std::string_view fallback) {
  std::string base = Env(var);
  if (base.empty()) base = fallback;
  while (!base.empty() && base.back() == '/') base.pop_back();
  return base;
}

Result<Json> Exchange(std::string_view what, net::HttpRequest req, const std::stop_token& stop) {
  req.headers.emplace_back("Accept", "application/json");
  if (!req.body.empty()) req.headers.emplace_back("Content-Type", "application/json");
  req.headers.emplace_back("User-Agent", "talaria-web/1.0");
  req.max_body_bytes = kMaxAnswerBytes;
  req.decompress = true;
  auto sent = net::SendAndCollect(req, stop);
  if (!sent) return Err(sent.error().WithContext(std::string(what)));
  const std::string& body = sent->body;
  if (sent->head.status < 200 || sent->head.status > 299) {
    const std::string snippet = body.substr(0, 300);
    return Err(UnavailableError(std::string(what) + " answered HTTP " +
                                std::to_string(sent->head.status) +
                                (snippet.empty() ? "" : ": " + snippet)));
  }
  auto json = ParseJson(body);
  if (!json) {
    return Err(UnavailableError(std::string(what) + " answered with something that is not JSON"));
  }
  return std::move(*json);
}

bool FirecrawlConfigured() {
  return !Env("FIRECRAWL_API_KEY").empty() || !Env("FIRECRAWL_API_URL").empty() ||
         net::ToolGatewayConfigured("firecrawl");
}

bool TavilyConfigured() { return !Env("TAVILY_API_KEY").empty(); }
bool ExaConfigured() { return !Env("EXA_API_KEY").empty(); }
bool ParallelConfigured() { return !Env("PARALLEL_API_KEY").empty(); }

Result<Endpoint> FirecrawlEndpoint(const std::stop_token& stop) {
  const std::string key = Env("FIRECRAWL_API_KEY");
  const bool direct = !key.empty() || !Env("FIRECRAWL_API_URL").empty();
  // web.use_gateway asks for the gateway first; a direct key is still kept when it is unusable.
  auto settings = LoadWebSettings();
  const auto preference = settings && settings->use_gateway ? net::GatewayPreference::kGatewayFirst
                                                            : net::GatewayPreference::kDirectFirst;
  auto gateway = TALARIA_TRY(net::PickToolGateway("firecrawl", direct, preference, stop));
  if (gateway) return Endpoint{gateway->origin, {gateway->auth_header}};
  Endpoint e{Base("FIRECRAWL_API_URL", "https://api.firecrawl.dev"), {}};
  if (!key.empty()) e.headers.emplace_back("Authorization", "Bearer " + key);
  return e;
}

std::string Str(const Json& object, std::string_view key) { return JsonStringField(object, key); }

const Json* Array(const Json& object, std::string_view key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(key);
  if (it == object.end() || !it->is_array()) return nullptr;
  return &*it;
}

std::string JoinStrings(const Json* array) {
  std::string out;
  if (array == nullptr) return out;
  for (const Json& s : *array) {
    if (!s.is_string()) continue;
    if (!out.empty()) out += " ... ";
    out += s.get<std::string>();
  }
  return out;
}

}  // namespace talaria::web::backend
