// Home Assistant's REST exchange (ha_client.h).
#include "homeassistant/ha_client.h"

#include <algorithm>
#include <cstdlib>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "talaria/net/send_and_collect.h"

namespace talaria::homeassistant {
namespace {

// /api/states of a large installation runs to a few MB; far more than this is not HA.
constexpr size_t kMaxAnswerBytes = size_t{32} << 20;
constexpr size_t kErrorSnippetBytes = 300;

std::string EnvOr(const char* name, std::string_view fallback) {
  const char* v = std::getenv(name);  // NOLINT(concurrency-mt-unsafe): read-only use
  return v == nullptr || *v == '\0' ? std::string(fallback) : std::string(v);
}

}  // namespace

HaEndpoint EndpointFromEnvironment() {
  HaEndpoint e;
  e.base = EnvOr("HASS_URL", kDefaultHassUrl);
  while (!e.base.empty() && e.base.back() == '/') e.base.pop_back();
  e.token = EnvOr("HASS_TOKEN", "");
  return e;
}

Result<HaAnswer> SendToHomeAssistant(const HaEndpoint& endpoint, std::string_view method,
                                     std::string_view path, std::string_view body,
                                     std::chrono::milliseconds timeout,
                                     const std::stop_token& stop) {
  net::HttpRequest req;
  req.method = std::string(method);
  req.url = endpoint.base + std::string(path);
  req.headers.emplace_back("Authorization", "Bearer " + endpoint.token);
  req.headers.emplace_back("Accept", "application/json");
  if (!body.empty()) {
    req.headers.emplace_back("Content-Type", "application/json");
    req.body = std::string(body);
  }
  req.headers.emplace_back("User-Agent", "talaria-homeassistant/1.0");
  req.connect_timeout = std::min(timeout, req.connect_timeout);
  req.total_timeout = timeout;
  req.max_body_bytes = kMaxAnswerBytes;
  auto sent = net::SendAndCollect(req, stop);
  if (!sent) return Err(sent.error());
  if (sent->head.truncated) {
    return Err(UnavailableError("Home Assistant's answer passed " +
                                std::to_string(kMaxAnswerBytes >> 20) + " MB"));
  }
  HaAnswer answer;
  answer.status = sent->head.status;
  answer.body = std::move(sent->body);
  return answer;
}

Result<Json> JsonOf(const HaAnswer& answer) {
  if (answer.status < 200 || answer.status > 299) {
    // Invalid UTF-8 in the cut is replaced when the result is serialized.
    const std::string snippet = answer.body.substr(0, kErrorSnippetBytes);
    return Err(UnavailableError("HTTP " + std::to_string(answer.status) +
                                (snippet.empty() ? "" : ": " + snippet)));
  }
  auto json = ParseJson(answer.body);
  if (!json) return Err(InvalidArgumentError("Home Assistant answered with something not JSON"));
  return std::move(*json);
}

}  // namespace talaria::homeassistant
