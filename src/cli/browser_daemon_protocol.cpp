// browser_daemon.h: the daemon's file names and what travels over its socket. Both ends treat
// the other's bytes as untrusted: a frame that is not our protocol is an error, never a crash.
#include <array>
#include <cstring>
#include <memory>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/browser_daemon.h"
#include "talaria/base/paths.h"
#include "talaria/base/sha256.h"

extern char** environ;

namespace talaria::cli {
namespace {

constexpr std::array<CallStatus, 5> kStatuses = {CallStatus::kOk, CallStatus::kError,
                                                 CallStatus::kBlocked, CallStatus::kCancelled,
                                                 CallStatus::kTimedOut};

bool ValidTask(std::string_view task) {
  if (task.empty() || task.size() > 64 || task == "." || task == "..") return false;
  for (char c : task) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

Result<Json> ParseObject(std::string_view frame, std::string_view what) {
  auto parsed = ParseJson(frame);
  if (!parsed || !parsed->is_object()) {
    return Err(InvalidArgumentError(std::string(what) + " is not a JSON object"));
  }
  return std::move(*parsed);
}

}  // namespace

Result<BrowserDaemonPaths> BrowserDaemonPathsFor(std::string_view task) {
  if (!ValidTask(task)) {
    return Err(InvalidArgumentError("browser task '" + std::string(task) +
                                    "': use 1-64 of A-Z a-z 0-9 . _ -"));
  }
  BrowserDaemonPaths paths;
  paths.dir = TalariaHome() + "/run";
  const std::string stem = paths.dir + "/browser-" + std::string(task);
  paths.socket = stem + ".sock";
  paths.lock = stem + ".lock";
  paths.pid = stem + ".pid";
  paths.log = stem + ".log";
  return paths;
}

Json BrowserEnvironmentDigest() {
  static constexpr std::array<std::string_view, 5> kPrefixes = {
      "BROWSERBASE_", "BROWSER_USE_", "FIRECRAWL_", "CAMOFOX_", "TOOL_GATEWAY_"};
  static constexpr std::array<std::string_view, 10> kNames = {
      "TALARIA_CHROMIUM", "TMPDIR",    "http_proxy", "HTTP_PROXY", "https_proxy",
      "HTTPS_PROXY",      "all_proxy", "ALL_PROXY",  "no_proxy",   "NO_PROXY"};
  Json digest = Json::object();
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view kv(*e);
    const size_t eq = kv.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string_view name = kv.substr(0, eq);
    bool relevant = false;
    for (std::string_view p : kPrefixes) relevant = relevant || name.starts_with(p);
    for (std::string_view n : kNames) relevant = relevant || name == n;
    if (relevant) digest[std::string(name)] = Sha256Hex(kv.substr(eq + 1));
  }
  return digest;
}

std::vector<std::string> EnvironmentDifferences(const Json& a, const Json& b) {
  std::set<std::string> names;
  for (const Json* side : {&a, &b}) {
    if (!side->is_object()) continue;
    for (const auto& [name, value] : side->items()) {
      const Json* other = side == &a ? &b : &a;
      const auto it = other->is_object() ? other->find(name) : other->end();
      if (!other->is_object() || it == other->end() || *it != value) names.insert(name);
    }
  }
  return {names.begin(), names.end()};
}

std::string EncodeDaemonRequest(const DaemonRequest& request) {
  return DumpJson(Json{{"protocol", kBrowserDaemonProtocol},
                       {"tool", request.tool},
                       {"arguments", request.arguments},
                       {"config", request.config},
                       {"env", request.env}});
}

Result<DaemonRequest> DecodeDaemonRequest(std::string_view frame) {
  Json j = TALARIA_TRY(ParseObject(frame, "request"));
  const auto protocol = j.find("protocol");
  if (protocol == j.end() || !protocol->is_number_integer() ||
      protocol->get<int64_t>() != kBrowserDaemonProtocol) {
    return Err(InvalidArgumentError("request: protocol " + std::to_string(kBrowserDaemonProtocol) +
                                    " expected"));
  }
  DaemonRequest request;
  request.tool = JsonStringField(j, "tool");
  request.config = JsonStringField(j, "config");
  if (request.tool.empty()) return Err(InvalidArgumentError("request: no tool"));
  const auto args = j.find("arguments");
  if (args == j.end() || !args->is_object()) {
    return Err(InvalidArgumentError("request: arguments must be an object"));
  }
  request.arguments = std::move(*args);
  if (const auto env = j.find("env"); env != j.end()) {
    if (!env->is_object()) return Err(InvalidArgumentError("request: env must be an object"));
    for (const auto& [name, value] : env->items()) {
      if (!value.is_string()) return Err(InvalidArgumentError("request: env values are digests"));
    }
    request.env = std::move(*env);
  }
  return request;
}

std::string EncodeDaemonResult(const ToolResult& result) {
  Json j = {{"text", result.text},
            {"status", std::string(CallStatusName(result.status))},
            {"error_type", result.error_type},
            {"untrusted_source", result.untrusted_source}};
  if (result.content != nullptr) j["content"] = *result.content;
  return DumpJson(j);
}

Result<ToolResult> DecodeDaemonResult(std::string_view frame) {
  Json j = TALARIA_TRY(ParseObject(frame, "the daemon's answer"));
  const auto text = j.find("text");
  if (text == j.end() || !text->is_string()) {
    return Err(InvalidArgumentError("the daemon's answer has no text"));
  }
  ToolResult result;
  result.text = text->get<std::string>();
  const std::string status = JsonStringField(j, "status");
  bool known = false;
  for (CallStatus s : kStatuses) {
    if (CallStatusName(s) == status) {
      result.status = s;
      known = true;
    }
  }
  if (!known) return Err(InvalidArgumentError("the daemon's answer has status '" + status + "'"));
  result.error_type = JsonStringField(j, "error_type");
  result.untrusted_source = JsonStringField(j, "untrusted_source");
  if (auto content = j.find("content"); content != j.end()) {
    if (!content->is_array()) return Err(InvalidArgumentError("the daemon's content is no array"));
    result.content = std::make_shared<const Json>(std::move(*content));
  }
  return result;
}

}  // namespace talaria::cli
