// The Camofox REST API over a tiny built-in web (fake_camofox.h).
#include "support/fake_camofox.h"

#include <nlohmann/json.hpp>

#include <map>
#include <mutex>
#include <utility>

#include "support/loopback_http.h"

namespace talaria_test {

struct FakeCamofox::State {
  std::string api_key;
  mutable std::mutex mu;
  std::vector<std::string> calls;        // Guarded by mu.
  std::vector<std::string> navigations;  // Guarded by mu.
  struct Tab {
    std::string user, url;
    std::vector<std::string> history;
    std::string typed;
    bool submitted = false;
    int scroll = 0;
  };
  std::map<std::string, Tab> tabs;  // Guarded by mu.
  int next_tab = 1;                 // Guarded by mu.
};

namespace {

using nlohmann::json;
using State = FakeCamofox::State;

const std::string kHome = "https://example.org/";

void Answer(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(body.dump(), "application/json");
}

std::string Land(const std::string& url) {
  if (url == "https://example.org/hop") return "http://169.254.169.254/latest/meta-data/";
  return url;
}

std::string Title(const std::string& url) {
  if (url == kHome) return "Example Domain";
  if (url == "https://example.org/more") return "More";
  if (url == "https://example.org/long") return "Long";
  return "";
}

std::string PageText(const State::Tab& tab) {
  if (tab.url == kHome) {
    std::string text = "[heading] Example Domain\n[link e1] More information...\n";
    text += "  [textbox e2] Search" + (tab.typed.empty() ? "" : ": " + tab.typed) + "\n";
    text += "  [button e3] Go";
    if (tab.submitted) text += "\n[paragraph] Submitted: " + tab.typed;
    return text;
  }
  if (tab.url == "https://example.org/more") return "[heading] More\n[link e1] Back home";
  if (tab.url == "https://example.org/long") {
    std::string text;
    for (int i = 0; text.size() < 200'000; ++i) {
      text += "[paragraph] line " + std::to_string(i) + " " + std::string(60, 'x') + "\n";
    }
    return text;
  }
  return "";
}

void Routes(httplib::Server& server, const std::shared_ptr<State>& st) {
  State& s = *st;
  server.set_pre_routing_handler([st](const httplib::Request& req, httplib::Response&) {
    std::lock_guard lock(st->mu);
    st->calls.push_back(req.method + " " + req.path);
    return httplib::Server::HandlerResponse::Unhandled;
  });
  server.Get("/health", [](const httplib::Request&, httplib::Response& res) {
    Answer(res, 200, json{{"ok", true}, {"browserConnected", true}});
  });
  server.Post("/tabs", [&s](const httplib::Request& req, httplib::Response& res) {
    const json body = json::parse(req.body, nullptr, false);
    if (!body.is_object() || !body.value("userId", json()).is_string() ||
        !body.value("sessionKey", json()).is_string() || !body.value("url", json()).is_string()) {
      return Answer(res, 400, json{{"error", "userId, sessionKey and url are required"}});
    }
    std::lock_guard lock(s.mu);
    const std::string id = "tab" + std::to_string(s.next_tab++);
    State::Tab& tab = s.tabs[id];
    tab.user = body["userId"];
    s.navigations.push_back(body["url"]);
    tab.url = Land(body["url"]);
    Answer(res, 200, json{{"tabId", id}, {"url", tab.url}, {"title", Title(tab.url)}});
  });

  // Every /tabs/{id}/... call: the tab, owned by the userId in the query or the body.
  auto with_tab = [&s](const httplib::Request& req, httplib::Response& res, json& body,
                       const std::function<void(State::Tab&)>& act) {
    body = req.body.empty() ? json::object() : json::parse(req.body, nullptr, false);
    if (!body.is_object()) return Answer(res, 400, json{{"error", "bad JSON"}});
    const std::string user = req.has_param("userId") ? req.get_param_value("userId")
                                                     : body.value("userId", std::string());
    std::lock_guard lock(s.mu);
    auto it = s.tabs.find(req.matches[1]);
    if (it == s.tabs.end() || it->second.user != user) {
      return Answer(res, 404, json{{"error", "Tab not found"}});
    }
    act(it->second);
    if (res.status == -1) res.status = 200;
  };
  auto post = [&server, with_tab](
                  const std::string& action,
                  std::function<void(State::Tab&, const json&, httplib::Response&)> act) {
    server.Post("/tabs/([^/]+)/" + action,
                [with_tab, act](const httplib::Request& req, httplib::Response& res) {
                  json body;
                  with_tab(req, res, body, [&](State::Tab& tab) { act(tab, body, res); });
                });
  };
  post("navigate", [&s](State::Tab& tab, const json& body, httplib::Response& res) {
    if (!body.value("url", json()).is_string()) {
      return Answer(res, 400, json{{"error", "url is required"}});
    }
    s.navigations.push_back(body["url"]);
    tab.history.push_back(tab.url);
    tab.url = Land(body["url"]);
    tab.typed.clear();
    tab.submitted = false;
    Answer(res, 200, json{{"ok", true}, {"url", tab.url}, {"refsAvailable", true}});
  });
  post("click", [](State::Tab& tab, const json& body, httplib::Response& res) {
    const std::string ref = body.value("ref", "");
    if (ref.empty() || ref[0] == '@') return Answer(res, 400, json{{"error", "bad ref " + ref}});
    if (tab.url == kHome && ref == "e1") {
      tab.history.push_back(tab.url);
      tab.url = "https://example.org/more";
    } else if (tab.url == "https://example.org/more" && ref == "e1") {
      tab.history.push_back(tab.url);
      tab.url = kHome;
    } else if (tab.url == kHome && ref == "e3") {
      tab.submitted = true;
    } else {
      return Answer(res, 400, json{{"error", "Unknown ref: " + ref}});
    }
    Answer(res, 200, json{{"ok", true}, {"url", tab.url}});
  });
  post("type", [](State::Tab& tab, const json& body, httplib::Response& res) {
    if (body.value("ref", "") != "e2" || tab.url != kHome ||
        !body.value("text", json()).is_string()) {
      return Answer(res, 400, json{{"error", "cannot type there"}});
    }
    tab.typed = body["text"];
    Answer(res, 200, json{{"ok", true}});
  });
  post("scroll", [](State::Tab& tab, const json& body, httplib::Response& res) {
    const std::string dir = body.value("direction", "");
    if (dir != "up" && dir != "down") return Answer(res, 400, json{{"error", "bad direction"}});
    tab.scroll += (dir == "down" ? 1 : -1) * body.value("amount", 300);
    Answer(res, 200, json{{"ok", true}, {"scrollY", tab.scroll}});
  });
  post("back", [](State::Tab& tab, const json&, httplib::Response& res) {
    if (!tab.history.empty()) {
      tab.url = tab.history.back();
      tab.history.pop_back();
    }
    Answer(res, 200, json{{"ok", true}, {"url", tab.url}});
  });
  post("press", [](State::Tab& tab, const json& body, httplib::Response& res) {
    const std::string key = body.value("key", "");
    if (key.empty()) return Answer(res, 400, json{{"error", "key is required"}});
    if (key == "Enter" && tab.url == kHome && !tab.typed.empty()) tab.submitted = true;
    Answer(res, 200, json{{"ok", true}});
  });
  server.Post("/tabs/([^/]+)/evaluate", [&s, with_tab](const httplib::Request& req,
                                                       httplib::Response& res) {
    if (!s.api_key.empty() && req.get_header_value("Authorization") != "Bearer " + s.api_key) {
      return Answer(res, 403, json{{"error", "evaluate needs the API key"}});
    }
    json body;
    with_tab(req, res, body, [&](State::Tab& tab) {
      const std::string expr = body.value("expression", "");
      if (expr == "document.title") {
        return Answer(res, 200,
                      json{{"ok", true}, {"result", Title(tab.url)}, {"resultType", "string"}});
      }
      if (expr.find("document.images") != std::string::npos) {
        json images = json::array();
        if (tab.url == kHome) {
          images.push_back({{"src", "https://example.org/logo.png"},
                            {"alt", "Logo"},
                            {"width", 120},
                            {"height", 40}});
          images.push_back({{"src", "data:image/png;base64,AAAA"},
                            {"alt", "inline"},
                            {"width", 1},
                            {"height", 1}});
        }
        return Answer(res, 200, json{{"ok", true}, {"result", images}, {"resultType", "object"}});
      }
      Answer(res, 200,
             json{{"ok", false}, {"error", "ReferenceError: unknown"}, {"errorType", "js_error"}});
    });
  });
  server.Get("/tabs/([^/]+)/snapshot",
             [with_tab](const httplib::Request& req, httplib::Response& res) {
               json body;
               with_tab(req, res, body, [&](State::Tab& tab) {
                 const std::string text = PageText(tab);
                 size_t offset = 0;
                 if (req.has_param("offset")) offset = std::stoul(req.get_param_value("offset"));
                 constexpr size_t kPage = 80'000;
                 const std::string part = offset < text.size() ? text.substr(offset, kPage) : "";
                 json out{{"url", tab.url}, {"title", Title(tab.url)}, {"snapshot", part}};
                 if (offset + kPage < text.size()) {
                   out["truncated"] = true;
                   out["hasMore"] = true;
                   out["nextOffset"] = offset + kPage;
                   out["totalChars"] = text.size();
                 }
                 Answer(res, 200, out);
               });
             });
  server.Get(
      "/tabs/([^/]+)/screenshot", [with_tab](const httplib::Request& req, httplib::Response& res) {
        json body;
        with_tab(req, res, body, [&](State::Tab&) {
          res.status = 200;
          res.set_content(std::string("\x89PNG\r\n\x1a\n", 8) + "fake-image-bytes", "image/png");
        });
      });
  server.Delete("/sessions/([^/]+)", [&s](const httplib::Request& req, httplib::Response& res) {
    std::lock_guard lock(s.mu);
    int closed = 0;
    for (auto it = s.tabs.begin(); it != s.tabs.end();) {
      if (it->second.user == req.matches[1]) {
        it = s.tabs.erase(it);
        ++closed;
      } else {
        ++it;
      }
    }
    Answer(res, 200, json{{"ok", true}, {"closed", closed}});
  });
}

}  // namespace

FakeCamofox::FakeCamofox(std::string api_key) : state_(std::make_shared<State>()) {
  state_->api_key = std::move(api_key);
  server_ = std::make_unique<LoopbackHttpServer>(
      [st = state_](httplib::Server& server) { Routes(server, st); });
}

FakeCamofox::~FakeCamofox() = default;

std::string FakeCamofox::url() const { return server_->url(); }

std::vector<std::string> FakeCamofox::calls() const {
  std::lock_guard lock(state_->mu);
  return state_->calls;
}

std::vector<std::string> FakeCamofox::navigations() const {
  std::lock_guard lock(state_->mu);
  return state_->navigations;
}

int FakeCamofox::live_sessions() const {
  std::lock_guard lock(state_->mu);
  std::map<std::string, int> users;
  for (const auto& [id, tab] : state_->tabs) users[tab.user]++;
  return static_cast<int>(users.size());
}

}  // namespace talaria_test
