// The three cloud browser APIs, faked (fake_browser_cloud.h).
#include "support/fake_browser_cloud.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <utility>

#include "support/loopback_http.h"

namespace talaria_test {

struct FakeBrowserCloud::State {
  FakeCloudOptions options;
  mutable std::mutex mu;
  std::vector<FakeCloudRequest> requests;  // Guarded by mu.
  struct Session {
    std::string provider;
    bool live = true;
  };
  std::map<std::string, Session> sessions;        // Guarded by mu.
  std::map<std::string, std::string> idempotent;  // key -> session id. Guarded by mu.
  int creates = 0;                                // Guarded by mu.
  int next_id = 1;                                // Guarded by mu.
};

namespace {

using nlohmann::json;
using State = FakeBrowserCloud::State;

void Answer(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(body.dump(), "application/json");
}

void Error(httplib::Response& res, int status, const std::string& message) {
  Answer(res, status, json{{"error", message}});
}

// The body as a JSON object, or a 400 answered.
bool ObjectBody(const httplib::Request& req, httplib::Response& res, json& out) {
  out = json::parse(req.body, nullptr, false);
  if (out.is_discarded() || !out.is_object()) {
    Error(res, 400, "body must be a JSON object");
    return false;
  }
  if (req.get_header_value("Content-Type") != "application/json") {
    Error(res, 415, "Content-Type must be application/json");
    return false;
  }
  return true;
}

bool OnlyKeys(const json& body, std::initializer_list<const char*> allowed,
              httplib::Response& res) {
  for (const auto& [key, value] : body.items()) {
    if (std::none_of(allowed.begin(), allowed.end(), [&](const char* a) { return key == a; })) {
      Error(res, 400, "unknown field " + key);
      return false;
    }
  }
  return true;
}

// A new session for `provider`, or the one an idempotency key already made. Fault injection:
// returns false (and answers 503) for the first fail_first_creates creates (nothing made) and
// for the fail_after_create ones after them (made, answer lost).
bool MakeSession(State& s, const std::string& provider, const std::string& key,
                 httplib::Response& res, std::string& id) {
  std::lock_guard lock(s.mu);
  if (!key.empty()) {
    if (auto it = s.idempotent.find(key); it != s.idempotent.end()) {
      id = it->second;
      return true;
    }
  }
  const int n = s.creates++;
  if (n < s.options.fail_first_creates) {
    Error(res, 503, "try again");
    return false;
  }
  id = !s.options.hostile_id.empty()
           ? s.options.hostile_id
           : provider.substr(0, 2) + "-sess-" + std::to_string(s.next_id++);
  s.sessions[id] = {provider, true};
  if (!key.empty()) s.idempotent[key] = id;
  if (n < s.options.fail_first_creates + s.options.fail_after_create) {
    Error(res, 503, "upstream timed out");
    return false;
  }
  return true;
}

// Ends a live session of `provider`: 404 when there is none.
bool EndSession(State& s, const std::string& provider, const std::string& id,
                httplib::Response& res) {
  std::lock_guard lock(s.mu);
  auto it = s.sessions.find(id);
  if (it == s.sessions.end() || it->second.provider != provider || !it->second.live) {
    Error(res, 404, "no such session");
    return false;
  }
  it->second.live = false;
  return true;
}

void Routes(httplib::Server& server, const std::shared_ptr<State>& st) {
  State& s = *st;
  // After the handler (the body has been read by then), before the answer is written: a test
  // that got its answer sees the request recorded.
  server.set_post_routing_handler([st](const httplib::Request& req, httplib::Response&) {
    FakeCloudRequest r{req.method, req.path, req.body, {}};
    for (const auto& [name, value] : req.headers) {
      std::string lower = name;
      std::transform(lower.begin(), lower.end(), lower.begin(),
                     [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      r.headers[lower] = value;
    }
    std::lock_guard lock(st->mu);
    st->requests.push_back(std::move(r));
  });

  // Browserbase.
  server.Post("/v1/sessions", [&s](const httplib::Request& req, httplib::Response& res) {
    if (req.get_header_value("X-BB-API-Key") != s.options.browserbase_key) {
      return Error(res, 401, "invalid api key");
    }
    json body;
    if (!ObjectBody(req, res, body)) return;
    if (!OnlyKeys(body, {"projectId", "keepAlive", "timeout", "proxies", "browserSettings"}, res)) {
      return;
    }
    if (body.value("projectId", "") != s.options.project_id) {
      return Error(res, 400, "projectId is missing or unknown");
    }
    if (body.contains("keepAlive") && !body["keepAlive"].is_boolean()) {
      return Error(res, 400, "keepAlive must be a boolean");
    }
    if (body.contains("timeout") && !body["timeout"].is_number_integer()) {
      return Error(res, 400, "timeout must be an integer");
    }
    if (body.contains("browserSettings") &&
        (!body["browserSettings"].is_object() ||
         !body["browserSettings"].value("advancedStealth", json()).is_boolean())) {
      return Error(res, 400, "browserSettings.advancedStealth must be a boolean");
    }
    if (body.value("keepAlive", false) && !s.options.plan_has_keep_alive) {
      return Error(res, 402, "keepAlive needs a paid plan");
    }
    if (body.contains("proxies") && !s.options.plan_has_proxies) {
      return Error(res, 402, "proxies need a paid plan");
    }
    std::string id;
    if (!MakeSession(s, "browserbase", "", res, id)) return;
    Answer(res, 201, json{{"id", id}, {"connectUrl", s.options.cdp_url}, {"status", "RUNNING"}});
  });
  server.Post(R"(/v1/sessions/([^/]+))", [&s](const httplib::Request& req, httplib::Response& res) {
    if (req.get_header_value("X-BB-API-Key") != s.options.browserbase_key) {
      return Error(res, 401, "invalid api key");
    }
    json body;
    if (!ObjectBody(req, res, body) || !OnlyKeys(body, {"projectId", "status"}, res)) return;
    if (body.value("projectId", "") != s.options.project_id ||
        body.value("status", "") != "REQUEST_RELEASE") {
      return Error(res, 400, "projectId and status REQUEST_RELEASE are required");
    }
    if (!EndSession(s, "browserbase", req.matches[1], res)) return;
    Answer(res, 200, json{{"id", req.matches[1]}, {"status", "COMPLETED"}});
  });

  // Browser Use, direct or through the gateway (the gateway token where the protocol carries
  // its key, and an idempotency key).
  auto browser_use_auth = [&s](const httplib::Request& req, httplib::Response& res, bool& gateway) {
    const std::string key = req.get_header_value("X-Browser-Use-API-Key");
    gateway = key == s.options.gateway_token;
    if (req.has_header("Authorization")) {
      Error(res, 401, "Browser Use takes its key in X-Browser-Use-API-Key");
      return false;
    }
    if (!gateway && key != s.options.browser_use_key) {
      Error(res, 401, "invalid api key");
      return false;
    }
    return true;
  };
  server.Post("/api/v3/browsers", [&s, browser_use_auth](const httplib::Request& req,
                                                         httplib::Response& res) {
    bool gateway = false;
    if (!browser_use_auth(req, res, gateway)) return;
    json body;
    if (!ObjectBody(req, res, body)) return;
    std::string key;
    if (gateway) {
      key = req.get_header_value("X-Idempotency-Key");
      if (key.empty()) return Error(res, 400, "X-Idempotency-Key is required");
      if (!OnlyKeys(body, {"timeout", "proxyCountryCode"}, res)) return;
      if (!body.value("timeout", json()).is_number_integer() ||
          !body.value("proxyCountryCode", json("")).is_string()) {
        return Error(res, 400, "timeout (minutes) must be an integer");
      }
      res.set_header("x-external-call-id", "call-" + key);
    } else if (!body.empty()) {
      return Error(res, 400, "direct creates take an empty body");
    }
    std::string id;
    if (!MakeSession(s, "browser-use", key, res, id)) return;
    Answer(res, 201, json{{"id", id}, {"cdpUrl", s.options.cdp_url}, {"status", "active"}});
  });
  server.Patch(R"(/api/v3/browsers/([^/]+))",
               [&s, browser_use_auth](const httplib::Request& req, httplib::Response& res) {
                 bool gateway = false;
                 if (!browser_use_auth(req, res, gateway)) return;
                 json body;
                 if (!ObjectBody(req, res, body) || !OnlyKeys(body, {"action"}, res)) return;
                 if (body.value("action", "") != "stop")
                   return Error(res, 400, "action must be stop");
                 if (!EndSession(s, "browser-use", req.matches[1], res)) return;
                 Answer(res, 200, json{{"id", req.matches[1]}, {"status", "stopped"}});
               });

  // Firecrawl.
  server.Post("/v2/browser", [&s](const httplib::Request& req, httplib::Response& res) {
    if (req.get_header_value("Authorization") != "Bearer " + s.options.firecrawl_key) {
      return Error(res, 401, "Unauthorized: invalid token");
    }
    json body;
    if (!ObjectBody(req, res, body) || !OnlyKeys(body, {"ttl"}, res)) return;
    if (!body.value("ttl", json()).is_number_integer() || body["ttl"].get<int>() <= 0) {
      return Error(res, 400, "ttl must be a positive integer");
    }
    std::string id;
    if (!MakeSession(s, "firecrawl", "", res, id)) return;
    Answer(res, 200, json{{"success", true}, {"id", id}, {"cdpUrl", s.options.cdp_url}});
  });
  server.Delete(
      R"(/v2/browser/([^/]+))", [&s](const httplib::Request& req, httplib::Response& res) {
        if (req.get_header_value("Authorization") != "Bearer " + s.options.firecrawl_key) {
          return Error(res, 401, "Unauthorized: invalid token");
        }
        if (!EndSession(s, "firecrawl", req.matches[1], res)) return;
        Answer(res, 200, json{{"success", true}});
      });
}

}  // namespace

FakeBrowserCloud::FakeBrowserCloud(FakeCloudOptions options) : state_(std::make_shared<State>()) {
  state_->options = std::move(options);
  server_ = std::make_unique<LoopbackHttpServer>(
      [st = state_](httplib::Server& server) { Routes(server, st); });
}

FakeBrowserCloud::~FakeBrowserCloud() = default;

std::string FakeBrowserCloud::url() const { return server_->url(); }

std::vector<FakeCloudRequest> FakeBrowserCloud::requests() const {
  std::lock_guard lock(state_->mu);
  return state_->requests;
}

int FakeBrowserCloud::live_sessions(const std::string& provider) const {
  std::lock_guard lock(state_->mu);
  return static_cast<int>(std::count_if(
      state_->sessions.begin(), state_->sessions.end(),
      [&](const auto& kv) { return kv.second.provider == provider && kv.second.live; }));
}

int FakeBrowserCloud::sessions_made(const std::string& provider) const {
  std::lock_guard lock(state_->mu);
  return static_cast<int>(
      std::count_if(state_->sessions.begin(), state_->sessions.end(),
                    [&](const auto& kv) { return kv.second.provider == provider; }));
}

}  // namespace talaria_test
