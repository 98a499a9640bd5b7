// Media services' JSON exchange, image downloads and base64 (media_http.h).
#include "media/media_http.h"

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "talaria/base/base64.h"
#include "talaria/core/config.h"
#include "talaria/core/config_section.h"
#include "talaria/core/runtime.h"
#include "talaria/net/send_and_collect.h"
#include "talaria/web/fetcher.h"
#include "talaria/web/network_guard.h"

namespace talaria::media {
namespace {

constexpr size_t kMaxAnswerBytes = size_t{16} << 20;

// One Fetcher per guard configuration for the process (its connection pool is reused).
Result<std::shared_ptr<web::Fetcher>> FetcherFor(size_t max_bytes) {
  const std::shared_ptr<const Config> config = TALARIA_TRY(ToolCallConfig());
  const ConfigSection w = TALARIA_TRY(ConfigSection::Of(*config, "web"));
  std::vector<std::string> allow;
  std::string ca_file;
  TALARIA_RETURN_IF_ERROR(w.ReadStrings("allow_private", allow));
  TALARIA_RETURN_IF_ERROR(w.ReadString("ca_file", ca_file));
  std::string key = ca_file + "|" + std::to_string(max_bytes);
  for (const std::string& a : allow) key += "|" + a;
  static std::mutex mu;
  static std::map<std::string, std::shared_ptr<web::Fetcher>> cache;
  std::lock_guard lock(mu);
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  auto guard =
      TALARIA_TRY(web::NetworkGuard::Create({.allow_private = allow, .resolver = nullptr}));
  web::FetchOptions options;
  options.max_bytes = max_bytes;
  options.timeout = std::chrono::seconds(60);
  options.accept = "image/*,*/*;q=0.5";
  options.ca_file = ca_file;
  auto fetcher = TALARIA_TRY(web::Fetcher::Create(std::move(guard), options));
  cache[key] = fetcher;
  return fetcher;
}

}  // namespace

Result<JsonAnswer> SendJson(std::string_view what, net::HttpRequest req,
                            const std::stop_token& stop) {
  req.headers.emplace_back("Accept", "application/json");
  if (!req.body.empty()) req.headers.emplace_back("Content-Type", "application/json");
  req.headers.emplace_back("User-Agent", "talaria/1.0");
  req.max_body_bytes = kMaxAnswerBytes;
  req.decompress = true;
  auto sent = net::SendAndCollect(req, stop);
  if (!sent) return Err(sent.error().WithContext(std::string(what)));
  const std::string& body = sent->body;
  JsonAnswer answer;
  answer.status = sent->head.status;
  answer.text = body.substr(0, 300);
  if (auto json = ParseJson(body)) answer.body = std::move(*json);
  return answer;
}

std::string ServiceError(const JsonAnswer& answer) {
  const Json& b = answer.body;
  if (b.is_object()) {
    if (b.contains("error")) {
      const Json& e = b["error"];
      if (e.is_string()) return e.get<std::string>();
      if (e.is_object() && e.contains("message") && e["message"].is_string()) {
        return e["message"].get<std::string>();
      }
    }
    if (b.contains("detail")) {
      const Json& d = b["detail"];
      if (d.is_string()) return d.get<std::string>();
      return d.dump(-1, ' ', false, Json::error_handler_t::replace).substr(0, 300);
    }
    if (std::string m = JsonStringField(b, "message"); !m.empty()) return m;
  }
  return answer.text;
}

Result<std::string> FetchBytes(std::string_view url, size_t max_bytes, const std::stop_token& stop,
                               std::chrono::steady_clock::time_point deadline) {
  if (url.rfind("data:", 0) == 0) {
    const size_t comma = url.find(',');
    if (comma == std::string_view::npos ||
        url.substr(0, comma).find(";base64") == std::string_view::npos) {
      return Err(InvalidArgumentError("a data: URL that is not base64"));
    }
    if ((url.size() - comma) / 4 * 3 > max_bytes) {
      return Err(ResourceExhaustedError("the image is larger than " + std::to_string(max_bytes) +
                                        " bytes"));
    }
    return Base64Decode(url.substr(comma + 1), Base64Alphabet::kStandardOrUrlSafe);
  }
  auto fetcher = TALARIA_TRY(FetcherFor(max_bytes));
  web::FetchedPage page = TALARIA_TRY(fetcher->Fetch(url, stop, deadline));
  if (page.status < 200 || page.status > 299) {
    return Err(UnavailableError("fetching the image answered HTTP " + std::to_string(page.status)));
  }
  if (page.truncated) {
    return Err(
        ResourceExhaustedError("the image is larger than " + std::to_string(max_bytes) + " bytes"));
  }
  return std::move(page.body);
}

}  // namespace talaria::media
