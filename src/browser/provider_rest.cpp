// The providers' JSON exchange and checks (provider_rest.h).
#include "browser/provider_rest.h"

#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "talaria/base/ascii.h"
#include "talaria/base/redact.h"

namespace talaria::browser::rest {
namespace {

constexpr size_t kMaxAnswerBytes = size_t{32} << 20;  // a Camofox screenshot fits

bool IsAsciiAlnum(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

}  // namespace

Result<Answer> Exchange(std::string_view who, const Call& call, std::stop_token stop) {
  net::HttpRequest req;
  req.method = call.method;
  req.url = call.url;
  req.headers = call.headers;
  req.headers.emplace_back("Accept", "application/json");
  req.headers.emplace_back("User-Agent", "talaria-browser/1.0");
  if (call.body != nullptr) {
    req.body = DumpJson(*call.body);
    req.headers.emplace_back("Content-Type", "application/json");
  }
  req.connect_timeout = std::min(call.timeout, std::chrono::milliseconds(10'000));
  req.total_timeout = call.timeout;
  req.idle_timeout = call.timeout;
  req.max_body_bytes = kMaxAnswerBytes;
  req.decompress = true;
  req.proxy = std::nullopt;
  auto client = net::MakeHttpClient();
  if (!client) return Err(client.error().WithContext(std::string(who)));
  Answer answer;
  auto head = (*client)->Send(
      req,
      [&](std::string_view chunk) {
        answer.raw.append(chunk);
        return true;
      },
      std::move(stop));
  if (!head) return Err(head.error().WithContext(std::string(who)));
  answer.status = head->status;
  answer.headers = std::move(head->headers);
  if (auto parsed = ParseJson(answer.raw)) answer.json = std::move(*parsed);
  return answer;
}

Status StatusError(std::string_view who, std::string_view what, const Answer& answer) {
  std::string detail = StringField(answer.json, {"error", "message", "detail"});
  if (detail.empty() && answer.json.is_object()) {
    if (auto it = answer.json.find("error"); it != answer.json.end() && it->is_object()) {
      detail = StringField(*it, {"message"});
    }
  }
  if (detail.empty() && !answer.json.is_object()) detail = answer.raw;
  if (detail.size() > 300) detail.resize(300);
  std::string message = std::string(who) + ": " + std::string(what) + " answered HTTP " +
                        std::to_string(answer.status);
  if (!detail.empty()) message += ": " + RedactSecrets(detail);
  switch (answer.status) {
    case 401:
    case 403:
      return PermissionDeniedError(std::move(message));
    case 402:
    case 429:
      return ResourceExhaustedError(std::move(message));
    case 404:
      return NotFoundError(std::move(message));
    case 400:
    case 422:
      return InvalidArgumentError(std::move(message));
    default:
      return UnavailableError(std::move(message));
  }
}

std::string StringField(const Json& object, std::initializer_list<std::string_view> keys) {
  if (!object.is_object()) return "";
  for (std::string_view key : keys) {
    auto it = object.find(key);
    if (it != object.end() && it->is_string()) return it->get<std::string>();
  }
  if (auto data = object.find("data"); data != object.end() && data->is_object()) {
    return StringField(*data, keys);
  }
  return "";
}

Status CheckId(std::string_view who, std::string_view id) {
  bool ok = !id.empty() && id.size() <= 200 && id != "." && id != "..";
  for (const char c : id) {
    if (!IsAsciiAlnum(c) && c != '.' && c != '_' && c != '-') ok = false;
  }
  if (!ok) {
    return InvalidArgumentError(std::string(who) + " handed out a session id that is not " +
                                "1 to 200 of [A-Za-z0-9._-]");
  }
  return Status::Ok();
}

Status CheckCdpUrl(std::string_view who, std::string_view url) {
  const bool ws = url.size() > 5 && EqualsIgnoringAsciiCase(url.substr(0, 5), "ws://");
  const bool wss = url.size() > 6 && EqualsIgnoringAsciiCase(url.substr(0, 6), "wss://");
  if (!ws && !wss) {
    return InvalidArgumentError(std::string(who) + " handed out a CDP URL that is not ws:// " +
                                "or wss://");
  }
  return Status::Ok();
}

}  // namespace talaria::browser::rest
