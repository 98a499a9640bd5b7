// The FAL queue protocol (fal_queue.h).
#include "media/fal_queue.h"

#include <algorithm>
#include <cctype>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "media/media_http.h"
#include "talaria/base/random.h"
#include "talaria/net/http_client.h"

namespace talaria::media {
namespace {

using Steady = std::chrono::steady_clock;

// A FAL model id: owner/app[/path...], each segment [A-Za-z0-9._-], no "." or ".." segment.
bool ValidModelId(std::string_view id) {
  int segments = 0;
  size_t start = 0;
  while (start <= id.size()) {
    const size_t slash = std::min(id.find('/', start), id.size());
    const std::string_view seg = id.substr(start, slash - start);
    if (seg.empty() || seg == "." || seg == "..") return false;
    for (char c : seg) {
      const auto u = static_cast<unsigned char>(c);
      if (std::isalnum(u) == 0 && c != '-' && c != '_' && c != '.') return false;
    }
    ++segments;
    start = slash + 1;
  }
  return segments >= 2;
}

std::string AppOf(std::string_view model) {
  const size_t first = model.find('/');
  const size_t second = model.find('/', first + 1);
  return std::string(model.substr(0, second));
}

net::HttpRequest Request(const FalTarget& t, std::string method, std::string url,
                         Steady::time_point deadline) {
  net::HttpRequest req;
  req.method = std::move(method);
  req.url = std::move(url);
  req.headers = {t.auth_header};
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Steady::now());
  req.total_timeout =
      std::clamp(left, std::chrono::milliseconds(1000), std::chrono::milliseconds(60'000));
  return req;
}

Status HttpFailure(const FalTarget& t, std::string_view model, std::string_view step,
                   const JsonAnswer& a) {
  const std::string detail = ServiceError(a);
  if (t.managed && a.status >= 400 && a.status < 500) {
    return PermissionDeniedError("the tool gateway rejected model " + std::string(model) +
                                 " (HTTP " + std::to_string(a.status) + "): " + detail);
  }
  std::string message = "FAL " + std::string(step) + " answered HTTP " + std::to_string(a.status) +
                        (detail.empty() ? "" : ": " + detail);
  if (a.status == 401 || a.status == 403) return PermissionDeniedError(std::move(message));
  return UnavailableError(std::move(message));
}

// Sleeps `d` unless stopped or past the deadline first (checked every 25 ms).
void Wait(std::chrono::milliseconds d, const std::stop_token& stop, Steady::time_point deadline) {
  const auto until = std::min(Steady::now() + d, deadline);
  while (Steady::now() < until && !stop.stop_requested()) {
    std::this_thread::sleep_for(
        std::min<Steady::duration>(std::chrono::milliseconds(25), until - Steady::now()));
  }
}

void CancelRequest(const FalTarget& t, const std::string& base) {
  net::HttpRequest req =
      Request(t, "PUT", base + "/cancel", Steady::now() + std::chrono::seconds(5));
  (void)SendJson("FAL cancel", std::move(req), {});  // best effort: the wait is over either way
}

}  // namespace

Result<Json> RunFalQueue(const FalTarget& target, std::string_view model, const Json& arguments,
                         const FalPolling& polling, const std::stop_token& stop,
                         Steady::time_point deadline) {
  if (!ValidModelId(model)) {
    return Err(InvalidArgumentError("'" + std::string(model) + "' is not a FAL model id"));
  }
  // Submit, retried on a connection failure, 429 or 5xx with the same idempotency key, so a
  // submit that reached FAL before the connection broke is not queued twice.
  const std::string idempotency_key = RandomHex(16);
  JsonAnswer submitted;
  for (int attempt = 0;; ++attempt) {
    net::HttpRequest req =
        Request(target, "POST", target.origin + "/" + std::string(model), deadline);
    req.headers.emplace_back("x-idempotency-key", idempotency_key);
    req.body = DumpJson(arguments);
    auto answer = SendJson("FAL submit", std::move(req), stop);
    const bool retry = attempt < 2 && !stop.stop_requested() && Steady::now() < deadline &&
                       (answer ? answer->status == 429 || answer->status >= 500
                               : answer.error().code() == StatusCode::kUnavailable);
    if (retry) {
      Wait(std::chrono::milliseconds(500 << attempt), stop, deadline);
      continue;
    }
    if (!answer) return Err(answer.error());
    submitted = std::move(*answer);
    break;
  }
  if (submitted.status < 200 || submitted.status > 299) {
    return Err(HttpFailure(target, model, "submit", submitted));
  }
  const std::string request_id = JsonStringField(submitted.body, "request_id");
  if (request_id.empty() || request_id.find_first_of("/?#%") != std::string::npos) {
    return Err(UnavailableError("FAL submit answered without a usable request_id"));
  }
  const std::string base = target.origin + "/" + AppOf(model) + "/requests/" + request_id;

  auto interval = polling.first;
  for (;;) {
    Wait(interval, stop, deadline);
    if (stop.stop_requested()) {
      CancelRequest(target, base);
      return Err(CancelledError("image generation cancelled"));
    }
    if (Steady::now() >= deadline) {
      CancelRequest(target, base);
      return Err(DeadlineExceededError("image generation did not finish in time"));
    }
    auto answer = SendJson("FAL status", Request(target, "GET", base + "/status", deadline), stop);
    if (!answer && stop.stop_requested()) {  // stopped while the poll was in flight
      CancelRequest(target, base);
      return Err(CancelledError("image generation cancelled"));
    }
    if (!answer) return Err(answer.error());
    if (answer->status < 200 || answer->status > 299) {
      return Err(HttpFailure(target, model, "status", *answer));
    }
    const std::string status = JsonStringField(answer->body, "status");
    if (status == "COMPLETED") break;
    if (status != "IN_QUEUE" && status != "IN_PROGRESS") {
      const std::string detail = ServiceError(*answer);
      return Err(UnavailableError("FAL request " + request_id + " is " +
                                  (status.empty() ? "in an unknown state" : status) +
                                  (detail.empty() ? "" : ": " + detail)));
    }
    interval = std::min(polling.max, std::chrono::milliseconds(interval.count() * 3 / 2 + 1));
  }
  auto result = SendJson("FAL result", Request(target, "GET", base, deadline), stop);
  if (!result) return Err(result.error());
  if (result->status < 200 || result->status > 299) {
    return Err(HttpFailure(target, model, "result", *result));
  }
  if (!result->body.is_object()) return Err(UnavailableError("FAL result is not a JSON object"));
  return std::move(result->body);
}

}  // namespace talaria::media
