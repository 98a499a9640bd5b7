#include "agent/model_retry.h"

#include <time.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>

#include <nlohmann/json.hpp>

#include "agent/stream_assembler.h"

#include "talaria/base/json.h"
#include "talaria/base/strings.h"

namespace talaria::agent {

std::chrono::milliseconds BackoffDelay(int attempt, std::chrono::milliseconds base,
                                       std::chrono::milliseconds cap, double jitter) {
  const int shift = std::clamp(attempt - 1, 0, 30);
  const double raw = static_cast<double>(base.count()) * std::ldexp(1.0, shift);
  const double capped = std::min(raw, static_cast<double>(cap.count()));
  const double extra = capped * 0.5 * std::clamp(jitter, 0.0, 1.0);
  return std::chrono::milliseconds(static_cast<int64_t>(capped + extra));
}

std::optional<std::chrono::milliseconds> ParseRetryAfter(
    std::string_view value, std::chrono::system_clock::time_point now) {
  value = Trim(value);
  if (value.empty()) return std::nullopt;
  if (value.find_first_not_of("0123456789.") == std::string_view::npos) {
    double seconds = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), seconds);
    if (ec != std::errc() || end != value.data() + value.size() || !std::isfinite(seconds)) {
      return std::nullopt;
    }
    seconds = std::min(seconds, 1e9);
    return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000.0));
  }
  // IMF-fixdate, the one HTTP date form servers send today.
  const std::string text(value);
  tm parsed{};
  const char* end = strptime(text.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &parsed);
  if (end == nullptr || *end != '\0') return std::nullopt;
  const time_t when = timegm(&parsed);
  if (when == static_cast<time_t>(-1)) return std::nullopt;
  const auto at = std::chrono::system_clock::from_time_t(when);
  if (at <= now) return std::chrono::milliseconds(0);
  return std::chrono::duration_cast<std::chrono::milliseconds>(at - now);
}

bool IsRetryableStatus(int status) {
  return status == 408 || status == 409 || status == 425 || status == 429 || status >= 500;
}

std::string ProviderErrorText(std::string_view body) {
  Json doc = ParseBoundedJson(body);
  std::string text;
  if (!doc.is_discarded()) {
    const Json* err = &doc;
    if (doc.is_object()) {
      if (auto it = doc.find("error"); it != doc.end()) err = &*it;
    }
    if (err->is_string()) {
      text = err->get<std::string>();
    } else if (err->is_object()) {
      text = JsonStringField(*err, "message");
      if (text.empty()) text = JsonStringField(*err, "detail");
      if (text.empty()) text = JsonStringField(*err, "error");
      if (text.empty()) text = DumpJson(*err);
    }
    if (text.empty() && doc.is_object()) {
      text = JsonStringField(doc, "message");
      if (text.empty()) text = JsonStringField(doc, "detail");
    }
  }
  if (text.empty()) text = std::string(Trim(body.substr(0, 300)));
  // One line, bounded: this goes into an error message.
  std::replace(text.begin(), text.end(), '\n', ' ');
  std::replace(text.begin(), text.end(), '\r', ' ');
  if (text.size() > 500) {
    text.resize(500);
    text.append("...");
  }
  return text;
}

Status StatusForHttpError(int status, std::string_view body, std::string_view endpoint) {
  std::string message =
      "the model server " + std::string(endpoint) + " answered HTTP " + std::to_string(status);
  const std::string detail = ProviderErrorText(body);
  if (!detail.empty()) message += ": " + detail;
  if (status == 401 || status == 403) return PermissionDeniedError(message);
  if (IsRetryableStatus(status)) return UnavailableError(message);
  return InvalidArgumentError(message);
}

}  // namespace talaria::agent
