// The Home Assistant tools through the registry against a fake HA server on 127.0.0.1 that
// speaks the REST API's paths and checks the bearer token on every request.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/loopback_http.h"
#include "support/registered_tool.h"
#include "talaria/core/registry.h"
#include "talaria/core/tool_context.h"

namespace talaria::homeassistant {
namespace {

using talaria_test::LoopbackHttpServer;

constexpr const char* kToken = "ha-long-lived-token";

constexpr const char* kStates = R"([
  {"entity_id":"light.living_room","state":"on","attributes":{"friendly_name":"Living Room Lamp","brightness":200},"last_changed":"2026-01-01T00:00:00+00:00","last_updated":"2026-01-01T00:00:01+00:00"},
  {"entity_id":"light.kitchen","state":"off","attributes":{"friendly_name":"Kitchen Light"}},
  {"entity_id":"sensor.temp","state":"21.5","attributes":{"friendly_name":"Thermometer","area":"Living Room"}},
  {"entity_id":"switch.fan","state":"off","attributes":{}},
  {"state":"orphan"},
  42
])";

constexpr const char* kServices = R"([
  {"domain":"light","services":{"turn_on":{"name":"Turn on","description":"Turns lights on","fields":{"brightness":{"description":"Brightness 0-255","example":120},"weird":5}},"toggle":{"description":"Toggles"}}},
  {"domain":"switch","services":{"turn_off":{"description":"Off"}}}
])";

// A fake Home Assistant: every request must carry the token, else 401 as HA answers.
class FakeHomeAssistant {
 public:
  FakeHomeAssistant()
      : server_([this](httplib::Server& s) {
          s.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
            std::lock_guard lock(mu_);
            seen_.push_back(req.method + " " + req.path +
                            (req.has_param("return_response") ? "?return_response" : ""));
            if (req.get_header_value("Authorization") != std::string("Bearer ") + kToken) {
              res.status = 401;
              res.set_content("401: Unauthorized", "text/plain");
              return httplib::Server::HandlerResponse::Handled;
            }
            return httplib::Server::HandlerResponse::Unhandled;
          });
          s.Get("/api/states", [](const httplib::Request&, httplib::Response& res) {
            res.set_content(kStates, "application/json");
          });
          s.Get(R"(/api/states/(.+))", [](const httplib::Request& req, httplib::Response& res) {
            if (req.matches[1] != "light.living_room") {
              res.status = 404;
              res.set_content(R"({"message":"Entity not found."})", "application/json");
              return;
            }
            auto all = nlohmann::json::parse(kStates);
            res.set_content(all[0].dump(), "application/json");
          });
          s.Get("/api/services", [](const httplib::Request&, httplib::Response& res) {
            res.set_content(kServices, "application/json");
          });
          s.Post(R"(/api/services/(\w+)/(\w+))", [this](const httplib::Request& req,
                                                        httplib::Response& res) {
            std::lock_guard lock(mu_);
            bodies_.push_back(req.body);
            const bool wants_response = req.has_param("return_response");
            if (wants_response && !services_respond_) {
              res.status = 400;
              res.set_content(
                  R"({"message":"Service does not support responses. Remove return_response from request."})",
                  "application/json");
              return;
            }
            const std::string changed = R"([{"entity_id":"light.living_room","state":"on"}])";
            res.set_content(wants_response ? R"({"changed_states":)" + changed +
                                                 R"(,"service_response":{"items":[1]}})"
                                           : changed,
                            "application/json");
          });
        }) {}

  std::string url() const { return server_.url(); }
  std::vector<std::string> seen() {
    std::lock_guard lock(mu_);
    return seen_;
  }
  std::vector<std::string> bodies() {
    std::lock_guard lock(mu_);
    return bodies_;
  }
  void set_services_respond(bool v) {
    std::lock_guard lock(mu_);
    services_respond_ = v;
  }

 private:
  std::mutex mu_;
  std::vector<std::string> seen_;    // Guarded by mu_.
  std::vector<std::string> bodies_;  // Guarded by mu_.
  bool services_respond_ = true;     // Guarded by mu_.
  LoopbackHttpServer server_;        // last: its thread stops before the members above go
};

class HaToolsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ::setenv("HASS_URL", (fake_.url() + "/").c_str(), 1);
    ::setenv("HASS_TOKEN", kToken, 1);
  }
  void TearDown() override {
    ::unsetenv("HASS_URL");
    ::unsetenv("HASS_TOKEN");
  }
  static Json Call(const std::string& tool, const Json& args, bool* ok = nullptr) {
    ToolContext ctx;
    ToolResult r;
    Json j = talaria::test_support::CallRegisteredTool(tool, args, ctx, &r);
    if (ok != nullptr) *ok = r.ok();
    return j;
  }
  FakeHomeAssistant fake_;
};

TEST_F(HaToolsTest, UnavailableWithoutATokenAndSaysWhy) {
  ::unsetenv("HASS_TOKEN");
  for (const char* tool :
       {"ha_list_entities", "ha_get_state", "ha_list_services", "ha_call_service"}) {
    auto entry = Registry::Global().GetEntry(tool);
    ASSERT_NE(entry, nullptr) << tool;
    EXPECT_EQ(entry->toolset(), "homeassistant");
    Availability a = Registry::Global().CheckAvailability(*entry);
    EXPECT_FALSE(a.available);
    EXPECT_EQ(a.reason, "environment variable HASS_TOKEN is not set");
  }
  ::setenv("HASS_TOKEN", kToken, 1);
  EXPECT_TRUE(Registry::Global().CheckAvailability("ha_get_state").available);
}

TEST_F(HaToolsTest, ListEntitiesFiltersByDomainAndArea) {
  Json all = Call("ha_list_entities", Json::object());
  EXPECT_EQ(all["result"]["count"], 4) << all.dump();  // the id-less and non-object rows skipped
  EXPECT_EQ(fake_.seen(), std::vector<std::string>{"GET /api/states"});

  Json lights = Call("ha_list_entities", {{"domain", "light"}});
  ASSERT_EQ(lights["result"]["count"], 2);
  EXPECT_EQ(lights["result"]["entities"][0], Json({{"entity_id", "light.living_room"},
                                                   {"state", "on"},
                                                   {"friendly_name", "Living Room Lamp"}}));

  // Case-insensitive, against the friendly name or the area attribute.
  Json living = Call("ha_list_entities", {{"area", "LIVING room"}});
  ASSERT_EQ(living["result"]["count"], 2);
  EXPECT_EQ(living["result"]["entities"][1]["entity_id"], "sensor.temp");
  EXPECT_EQ(living["result"]["entities"][1]["friendly_name"], "Thermometer");

  // "light" must not match "lightning.x": the domain is followed by its dot.
  Json none = Call("ha_list_entities", {{"domain", "ligh"}});
  EXPECT_EQ(none["result"]["count"], 0);
}

TEST_F(HaToolsTest, GetStateReturnsTheEntityInTheOriginalsShape) {
  Json r = Call("ha_get_state", {{"entity_id", "light.living_room"}});
  const Json& s = r["result"];
  EXPECT_EQ(s["entity_id"], "light.living_room");
  EXPECT_EQ(s["state"], "on");
  EXPECT_EQ(s["attributes"]["brightness"], 200);
  EXPECT_EQ(s["last_changed"], "2026-01-01T00:00:00+00:00");
  EXPECT_EQ(s["last_updated"], "2026-01-01T00:00:01+00:00");

  bool ok = true;
  Json missing = Call("ha_get_state", {{"entity_id", "light.nowhere"}}, &ok);
  EXPECT_FALSE(ok);
  EXPECT_EQ(missing["error"].get<std::string>().rfind("Failed to get state for light.nowhere: "
                                                      "HTTP 404",
                                                      0),
            0U)
      << missing.dump();
}

TEST_F(HaToolsTest, BadEntityIdsNeverReachTheServer) {
  for (const char* bad : {"../config", "light.x/../../config", "light", "light.x?a=b"}) {
    bool ok = true;
    Json r = Call("ha_get_state", {{"entity_id", bad}}, &ok);
    EXPECT_FALSE(ok);
    EXPECT_EQ(r["error"], std::string("Invalid entity_id format: ") + bad);
  }
  bool ok = true;
  Json r = Call("ha_get_state", Json::object(), &ok);
  EXPECT_EQ(r["error"], "Missing required parameter: entity_id");
  EXPECT_TRUE(fake_.seen().empty());
}

TEST_F(HaToolsTest, ListServicesCompactsDescriptionsAndFields) {
  Json r = Call("ha_list_services", {{"domain", "light"}});
  ASSERT_EQ(r["result"]["count"], 1) << r.dump();
  const Json& light = r["result"]["domains"][0];
  EXPECT_EQ(light["domain"], "light");
  EXPECT_EQ(light["services"]["turn_on"], Json({{"description", "Turns lights on"},
                                                {"fields", {{"brightness", "Brightness 0-255"}}}}));
  EXPECT_EQ(light["services"]["toggle"], Json({{"description", "Toggles"}}));
  EXPECT_EQ(Call("ha_list_services", Json::object())["result"]["count"], 2);
}

TEST_F(HaToolsTest, CallServiceSendsDataWithTheEntityArgumentWinning) {
  Json r =
      Call("ha_call_service", {{"domain", "light"},
                               {"service", "turn_on"},
                               {"entity_id", "light.living_room"},
                               {"data", R"({"brightness": 255, "entity_id": "light.other"})"}});
  EXPECT_EQ(r["result"]["success"], true) << r.dump();
  EXPECT_EQ(r["result"]["service"], "light.turn_on");
  EXPECT_EQ(r["result"]["affected_entities"],
            Json::array({{{"entity_id", "light.living_room"}, {"state", "on"}}}));
  EXPECT_EQ(r["result"]["service_response"], Json({{"items", {1}}}));
  ASSERT_EQ(fake_.bodies().size(), 1U);
  EXPECT_EQ(Json::parse(fake_.bodies()[0]),
            Json({{"brightness", 255}, {"entity_id", "light.living_room"}}));
  EXPECT_EQ(fake_.seen(),
            std::vector<std::string>{"POST /api/services/light/turn_on?return_response"});
}

TEST_F(HaToolsTest, CallServiceFallsBackWhenTheServiceGivesNoResponse) {
  fake_.set_services_respond(false);
  Json r = Call("ha_call_service", {{"domain", "switch"}, {"service", "turn_off"}});
  EXPECT_EQ(r["result"]["success"], true) << r.dump();
  EXPECT_EQ(r["result"]["affected_entities"].size(), 1U);
  EXPECT_FALSE(r["result"].contains("service_response"));
  EXPECT_EQ(fake_.seen(),
            (std::vector<std::string>{"POST /api/services/switch/turn_off?return_response",
                                      "POST /api/services/switch/turn_off"}));
  EXPECT_EQ(fake_.bodies()[1], "{}");
}

TEST_F(HaToolsTest, CallServiceRefusesBlockedDomainsAndPathTricks) {
  bool ok = true;
  Json blocked = Call("ha_call_service", {{"domain", "shell_command"}, {"service", "run"}}, &ok);
  EXPECT_FALSE(ok);
  EXPECT_EQ(blocked["error"],
            "Service domain 'shell_command' is blocked for security. Blocked domains: "
            "command_line, hassio, pyscript, python_script, rest_command, shell_command");
  Json traversal =
      Call("ha_call_service", {{"domain", "shell_command/../light"}, {"service", "turn_on"}});
  EXPECT_EQ(traversal["error"], "Invalid domain format: 'shell_command/../light'");
  Json service = Call("ha_call_service", {{"domain", "light"}, {"service", "../../config"}});
  EXPECT_EQ(service["error"], "Invalid service format: '../../config'");
  Json entity = Call("ha_call_service",
                     {{"domain", "light"}, {"service", "turn_on"}, {"entity_id", "x/../y"}});
  EXPECT_EQ(entity["error"], "Invalid entity_id format: x/../y");
  Json data =
      Call("ha_call_service", {{"domain", "light"}, {"service", "turn_on"}, {"data", "{not json"}});
  EXPECT_EQ(data["error"].get<std::string>().rfind("Invalid JSON string in 'data' parameter", 0),
            0U);
  Json list =
      Call("ha_call_service", {{"domain", "light"}, {"service", "turn_on"}, {"data", "[1]"}});
  EXPECT_NE(list["error"].get<std::string>().find("must be a JSON object"), std::string::npos);
  Json missing = Call("ha_call_service", {{"domain", "light"}});
  EXPECT_EQ(missing["error"], "Missing required parameters: domain and service");
  EXPECT_TRUE(fake_.seen().empty());
}

TEST_F(HaToolsTest, AWrongTokenFailsWithTheStatus) {
  ::setenv("HASS_TOKEN", "wrong", 1);
  bool ok = true;
  Json r = Call("ha_list_entities", Json::object(), &ok);
  EXPECT_FALSE(ok);
  EXPECT_EQ(r["error"], "Failed to list entities: HTTP 401: 401: Unauthorized");
}

TEST_F(HaToolsTest, AnUnreachableServerIsAFailureNotACrash) {
  ::setenv("HASS_URL", "http://127.0.0.1:1", 1);
  bool ok = true;
  Json r = Call("ha_list_services", Json::object(), &ok);
  EXPECT_FALSE(ok);
  EXPECT_EQ(r["error"].get<std::string>().rfind("Failed to list services: ", 0), 0U);
}

}  // namespace
}  // namespace talaria::homeassistant
