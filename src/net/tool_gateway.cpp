// The managed tool gateway (tool_gateway.h): the token (environment or file), its refresh, the
// gateway origin per vendor, and the choice between a direct key and the gateway.
#include "talaria/net/tool_gateway.h"

#include <fcntl.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "talaria/base/file_io.h"
#include "talaria/base/json.h"
#include "talaria/base/paths.h"
#include "talaria/base/unique_fd.h"
#include "talaria/base/uri.h"
#include "talaria/net/http_client.h"
#include "talaria/net/send_and_collect.h"

namespace talaria::net {
namespace {

using Clock = std::chrono::system_clock;

std::string Env(const std::string& name) {
  const char* v = std::getenv(name.c_str());  // NOLINT(concurrency-mt-unsafe): read-only use
  return v == nullptr ? "" : v;
}

// "browser-use" -> "BROWSER_USE"; empty for a name that is not [a-z0-9-]+.
std::string VendorVar(std::string_view vendor) {
  std::string out;
  for (char c : vendor) {
    const auto u = static_cast<unsigned char>(c);
    if (std::islower(u) != 0 || std::isdigit(u) != 0) {
      out += static_cast<char>(std::toupper(u));
    } else if (c == '-' || c == '_') {
      out += '_';
    } else {
      return "";
    }
  }
  return out;
}

std::string TokenFilePath() {
  std::string path = Env("TOOL_GATEWAY_TOKEN_FILE");
  return path.empty() ? TalariaHome() + "/auth/tool_gateway.json" : path;
}

// Epoch seconds as a time point. The clock counts nanoseconds in 64 bits, up to 2262: a later
// expiry (a token "valid until 2999") would wrap into the past and read as long expired, so it
// counts as 2255, far enough never to matter.
Clock::time_point FromEpochSeconds(int64_t secs) {
  constexpr int64_t kLatest = 9'000'000'000;
  return Clock::time_point(std::chrono::seconds(std::min(secs, kLatest)));
}

// "2026-12-06T01:00:00Z", "2026-12-06T01:00:00.123+02:00", or epoch seconds (number or string).
std::optional<Clock::time_point> ParseExpiry(const Json& v) {
  if (v.is_number()) {
    const double secs = v.get<double>();
    if (!(secs >= 0 && secs < 1e11)) return std::nullopt;  // also refuses NaN
    return FromEpochSeconds(static_cast<int64_t>(secs));
  }
  if (!v.is_string()) return std::nullopt;
  const std::string s = v.get<std::string>();
  if (!s.empty() && s.find_first_not_of("0123456789") == std::string::npos && s.size() < 15) {
    return FromEpochSeconds(std::stoll(s));
  }
  struct tm tm {};
  const char* rest = strptime(s.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (rest == nullptr) return std::nullopt;
  if (*rest == '.') {
    ++rest;
    while (std::isdigit(static_cast<unsigned char>(*rest)) != 0) ++rest;
  }
  int64_t offset = 0;
  if (*rest == '+' || *rest == '-') {
    const int sign = *rest == '-' ? -1 : 1;
    int hh = 0;
    int mm = 0;
    if (std::sscanf(rest + 1, "%2d:%2d", &hh, &mm) < 1) return std::nullopt;  // NOLINT
    offset = sign * (int64_t{hh} * 3600 + int64_t{mm} * 60);
  } else if (*rest != 'Z' && *rest != '\0') {
    return std::nullopt;
  }
  const time_t t = timegm(&tm);
  if (t == -1) return std::nullopt;
  return FromEpochSeconds(static_cast<int64_t>(t) - offset);
}

std::string FormatExpiry(Clock::time_point t) {
  const time_t secs = Clock::to_time_t(t);
  struct tm tm {};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// The token file's record: the whole document and the object holding the token in it.
struct TokenFile {
  Json doc;
  bool nested = false;  // the record is doc.providers.nous (the original's auth.json), not doc
  Json& record() { return nested ? doc["providers"]["nous"] : doc; }
  std::string access_token;
  std::string refresh_token;
  std::string token_url;
  std::string client_id;
  std::optional<Clock::time_point> expires_at;
};

// NotFound when the file does not exist; InvalidArgument when it is not the expected JSON.
Result<TokenFile> ReadTokenFile(const std::string& path) {
  auto text = ReadWholeFile(path);
  if (!text) return Err(text.error());
  auto doc = ParseJson(*text);
  if (!doc || !doc->is_object()) {
    return Err(InvalidArgumentError("tool gateway: " + path + " is not a JSON object"));
  }
  TokenFile f;
  f.doc = std::move(*doc);
  f.nested = !f.doc.contains("access_token") && f.doc.contains("providers") &&
             f.doc["providers"].is_object() && f.doc["providers"].contains("nous") &&
             f.doc["providers"]["nous"].is_object();
  const Json& record = f.record();
  f.access_token = JsonStringField(record, "access_token");
  f.refresh_token = JsonStringField(record, "refresh_token");
  f.token_url = JsonStringField(record, "token_url");
  f.client_id = JsonStringField(record, "client_id");
  if (record.contains("expires_at")) {
    f.expires_at = ParseExpiry(record["expires_at"]);
    if (!f.expires_at) {
      return Err(InvalidArgumentError("tool gateway: " + path +
                                      ": expires_at is neither ISO 8601 nor epoch seconds"));
    }
  }
  return f;
}

bool FreshEnough(const TokenFile& f) {
  return !f.expires_at || *f.expires_at - Clock::now() > kGatewayRefreshMargin;
}
bool Expired(const TokenFile& f) { return f.expires_at && *f.expires_at <= Clock::now(); }
bool CanRefresh(const TokenFile& f) { return !f.refresh_token.empty() && !f.token_url.empty(); }

// The OAuth 2 refresh_token grant; updates `f` (and its document) from the answer.
Status Refresh(TokenFile& f, const std::stop_token& stop) {
  HttpRequest req;
  req.method = "POST";
  req.url = f.token_url;
  req.headers = {{"Content-Type", "application/x-www-form-urlencoded"},
                 {"Accept", "application/json"},
                 {"User-Agent", "talaria/1.0"}};
  req.body = "grant_type=refresh_token&refresh_token=" + PercentEncode(f.refresh_token);
  if (!f.client_id.empty()) req.body += "&client_id=" + PercentEncode(f.client_id);
  req.total_timeout = std::chrono::seconds(30);
  req.max_body_bytes = size_t{1} << 20;
  auto sent = SendAndCollect(req, stop);
  if (!sent) return sent.error().WithContext("tool gateway token refresh");
  auto answer = ParseJson(sent->body);
  if (sent->head.status < 200 || sent->head.status > 299 || !answer || !answer->is_object()) {
    std::string why = answer && answer->is_object() ? JsonStringField(*answer, "error") : "";
    return UnavailableError("tool gateway token refresh answered HTTP " +
                            std::to_string(sent->head.status) + (why.empty() ? "" : ": " + why));
  }
  const std::string token = JsonStringField(*answer, "access_token");
  if (token.empty()) {
    return UnavailableError("tool gateway token refresh answered without an access_token");
  }
  f.access_token = token;
  f.record()["access_token"] = token;
  if (std::string rotated = JsonStringField(*answer, "refresh_token"); !rotated.empty()) {
    f.refresh_token = rotated;
    f.record()["refresh_token"] = rotated;
  }
  f.expires_at.reset();
  if (answer->contains("expires_in") && (*answer)["expires_in"].is_number()) {
    f.expires_at = Clock::now() + std::chrono::seconds((*answer)["expires_in"].get<int64_t>());
  } else if (answer->contains("expires_at")) {
    f.expires_at = ParseExpiry((*answer)["expires_at"]);
  }
  if (f.expires_at) {
    f.record()["expires_at"] = FormatExpiry(*f.expires_at);
  } else {
    f.record().erase("expires_at");
  }
  return Status::Ok();
}

// An exclusive lock on `path`.lock, waited for at most 30 s (a process stuck mid-refresh must
// not hold every other one forever).
Result<UniqueFd> LockFile(const std::string& path, const std::stop_token& stop) {
  UniqueFd fd(::open((path + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
  if (!fd) return Err(UnavailableError("tool gateway: cannot open " + path + ".lock"));
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
    if (stop.stop_requested()) return Err(CancelledError("tool gateway token refresh cancelled"));
    if (std::chrono::steady_clock::now() > until) {
      return Err(DeadlineExceededError("tool gateway: " + path + " stayed locked for 30 s"));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return fd;
}

// The token, refreshed when needed. NotFound when none is configured.
Result<std::string> FreshToken(const std::stop_token& stop) {
  if (std::string token = Env("TOOL_GATEWAY_USER_TOKEN"); !token.empty()) return token;
  const std::string path = TokenFilePath();
  auto read = ReadTokenFile(path);
  if (!read && read.error().code() == StatusCode::kNotFound) {
    return Err(NotFoundError(
        "no tool gateway token: set TOOL_GATEWAY_USER_TOKEN or write the token file " + path));
  }
  TokenFile f = TALARIA_TRY(std::move(read));
  if (f.access_token.empty()) {
    return Err(NotFoundError("no tool gateway token: " + path + " has no access_token"));
  }
  if (FreshEnough(f)) return f.access_token;
  if (!CanRefresh(f)) {
    if (!Expired(f)) return f.access_token;  // inside the margin, still usable
    return Err(FailedPreconditionError("tool gateway token in " + path + " expired at " +
                                       FormatExpiry(*f.expires_at) +
                                       " and it has no refresh_token and token_url"));
  }
  static std::mutex mu;  // one refresh at a time in this process
  std::lock_guard process_lock(mu);
  UniqueFd file_lock = TALARIA_TRY(LockFile(path, stop));
  f = TALARIA_TRY(ReadTokenFile(path));  // another process may have refreshed meanwhile
  if (FreshEnough(f)) return f.access_token;
  if (Status s = Refresh(f, stop); !s.ok()) {
    if (!Expired(f) && !f.access_token.empty()) return f.access_token;
    return Err(std::move(s));
  }
  TALARIA_RETURN_IF_ERROR(WriteFileAtomic(path, f.doc.dump(2) + "\n", {.mode = 0600}));
  return f.access_token;
}

std::pair<std::string, std::string> AuthHeaderFor(std::string_view vendor,
                                                  const std::string& token) {
  if (vendor == "fal") return {"Authorization", "Key " + token};
  if (vendor == "browser-use") return {"X-Browser-Use-API-Key", token};
  return {"Authorization", "Bearer " + token};
}

Result<std::string> OriginFor(std::string_view vendor) {
  const std::string var = VendorVar(vendor);
  if (vendor.empty() || var.empty()) {
    return Err(InvalidArgumentError("tool gateway: bad vendor name '" + std::string(vendor) + "'"));
  }
  std::string origin = Env(var + "_GATEWAY_URL");
  if (origin.empty()) {
    std::string scheme = Env("TOOL_GATEWAY_SCHEME");
    if (scheme.empty()) scheme = "https";
    if (scheme != "http" && scheme != "https") {
      return Err(InvalidArgumentError("tool gateway: TOOL_GATEWAY_SCHEME must be http or https"));
    }
    std::string domain = Env("TOOL_GATEWAY_DOMAIN");
    if (domain.empty()) domain = "nousresearch.com";
    origin = scheme + "://" + std::string(vendor) + "-gateway." + domain;
  } else if (origin.rfind("http://", 0) != 0 && origin.rfind("https://", 0) != 0) {
    return Err(
        InvalidArgumentError("tool gateway: " + var + "_GATEWAY_URL must be an http(s) URL"));
  }
  while (!origin.empty() && origin.back() == '/') origin.pop_back();
  return origin;
}

}  // namespace

Result<ToolGateway> ResolveToolGateway(std::string_view vendor, const std::stop_token& stop) {
  std::string origin = TALARIA_TRY(OriginFor(vendor));
  std::string token = TALARIA_TRY(FreshToken(stop));
  ToolGateway gw;
  gw.vendor = vendor;
  gw.origin = std::move(origin);
  gw.auth_header = AuthHeaderFor(vendor, token);
  gw.token = std::move(token);
  return gw;
}

bool ToolGatewayConfigured(std::string_view vendor) {
  if (!OriginFor(vendor)) return false;
  if (!Env("TOOL_GATEWAY_USER_TOKEN").empty()) return true;
  auto f = ReadTokenFile(TokenFilePath());
  if (!f || f->access_token.empty()) return false;
  return !Expired(*f) || CanRefresh(*f);
}

Result<std::optional<ToolGateway>> PickToolGateway(std::string_view vendor, bool have_direct_key,
                                                   GatewayPreference preference,
                                                   const std::stop_token& stop) {
  const std::string var = VendorVar(vendor);
  const std::string use = var.empty() ? "" : Env(var + "_USE_GATEWAY");
  const bool prefer =
      preference == GatewayPreference::kGatewayFirst || use == "1" || use == "true" || use == "yes";
  if (have_direct_key && !prefer) return std::optional<ToolGateway>();
  auto gw = ResolveToolGateway(vendor, stop);
  if (!gw) {
    if (have_direct_key) return std::optional<ToolGateway>();  // never discard the key (#79628)
    return Err(gw.error());
  }
  return std::optional<ToolGateway>(std::move(*gw));
}

}  // namespace talaria::net
