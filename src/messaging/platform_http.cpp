// The platforms' shared exchange (platform_http.h).
#include "messaging/platform_http.h"

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "talaria/base/ascii.h"
#include "talaria/base/redact.h"

namespace talaria::messaging {
namespace {

constexpr size_t kMaxReplyBytes = size_t{4} << 20;

// Waits `wait` unless `stop` is requested first; false when it was.
bool SleepFor(std::chrono::milliseconds wait, const std::stop_token& stop) {
  std::mutex mu;
  std::condition_variable_any cv;
  std::unique_lock lock(mu);
  return !cv.wait_for(lock, stop, wait, [] { return false; }) && !stop.stop_requested();
}

}  // namespace

std::string Reply::Header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (EqualsIgnoringAsciiCase(key, name)) return value;
  }
  return {};
}

std::optional<std::chrono::milliseconds> RetryAfterHeader(const Reply& reply) {
  if (reply.status != 429) return std::nullopt;
  const std::string v = reply.Header("Retry-After");
  char* end = nullptr;
  const double seconds = std::strtod(v.c_str(), &end);
  if (v.empty() || end == v.c_str() || !(seconds >= 0) || seconds > 86'400) {
    return std::chrono::milliseconds(1000);
  }
  return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000.0));
}

Result<Reply> Exchange(std::string_view platform, net::HttpRequest request,
                       RateLimitReader rate_limit, const CallLimits& limits) {
  request.max_body_bytes = kMaxReplyBytes;
  request.connect_timeout = std::chrono::milliseconds(10'000);
  request.idle_timeout = std::chrono::milliseconds(30'000);
  request.headers.emplace_back("User-Agent", "talaria-messaging/1.0");
  auto client = net::MakeHttpClient();
  if (!client) return Err(client.error());
  for (int attempt = 0;; ++attempt) {
    Reply reply;
    auto head = (*client)->Send(
        request,
        [&](std::string_view chunk) {
          reply.body.append(chunk);
          return true;
        },
        limits.stop);
    if (!head) return Err(head.error().WithContext(std::string(platform)));
    reply.status = head->status;
    reply.headers = std::move(head->headers);
    if (auto json = ParseJson(reply.body)) reply.json = std::move(*json);
    const std::optional<std::chrono::milliseconds> wait = rate_limit(reply);
    if (!wait) return reply;
    const std::string asked = std::to_string(static_cast<double>(wait->count()) / 1000.0);
    const std::string asked_s = asked.substr(0, asked.find('.') + 2) + " s";
    if (attempt >= limits.max_retries) {
      return Err(UnavailableError(
          std::string(platform) + " is rate-limiting: still refused after " +
          std::to_string(attempt + 1) + " tries (it asks to wait " + asked_s + "); not sent"));
    }
    if (*wait > limits.max_wait || Clock::now() + *wait > limits.deadline) {
      return Err(UnavailableError(std::string(platform) + " is rate-limiting and asks to wait " +
                                  asked_s + ", longer than this call may wait; not sent"));
    }
    if (!SleepFor(*wait, limits.stop)) {
      return Err(CancelledError(std::string(platform) + ": cancelled while rate-limited"));
    }
  }
}

Status Rejected(std::string_view platform, const Reply& reply, std::string_view detail) {
  std::string snippet = RedactSecrets(reply.body.substr(0, 300));
  std::string msg = std::string(platform) + " answered HTTP " + std::to_string(reply.status);
  if (!detail.empty()) {
    msg += ": " + std::string(detail);
  } else if (!snippet.empty()) {
    msg += ": " + snippet;
  }
  return UnavailableError(msg + "; not sent");
}

}  // namespace talaria::messaging
