// The four Home Assistant tools (toolset `homeassistant`), with the original's parameters,
// validation, blocked domains and result shapes: {"result": {...}} on success and
// {"error": "Failed to ..."} otherwise. Available when HASS_TOKEN is set.
#include <chrono>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "homeassistant/ha_client.h"
#include "homeassistant/ha_names.h"
#include "talaria/base/ascii.h"
#include "talaria/base/strings.h"
#include "talaria/core/tool_registration.h"

namespace talaria::homeassistant {
namespace {

using std::chrono::seconds;

constexpr std::string_view kToolset = "homeassistant";
constexpr std::string_view kEmoji = "\xF0\x9F\x8F\xA0";  // "🏠"

ToolResult Ok(Json result) {
  return ToolResult::Text(DumpJson(Json{{"result", std::move(result)}}));
}

std::string StringOr(const Json& object, std::string_view key) {
  return JsonStringField(object, key);
}

// `state` may be any JSON scalar on a hostile or odd server; the model gets it as text.
std::string StateText(const Json& object) {
  if (!object.is_object()) return {};
  auto it = object.find("state");
  if (it == object.end() || it->is_null()) return {};
  return it->is_string() ? it->get<std::string>() : DumpJson(*it);
}

const Json& AttributesOf(const Json& state) {
  static const Json kEmpty = Json::object();
  if (!state.is_object()) return kEmpty;
  auto it = state.find("attributes");
  return it != state.end() && it->is_object() ? *it : kEmpty;
}

// The optional string argument `key`; "" when absent or not a string.
std::string OptionalArg(const Json& args, std::string_view key) {
  return JsonStringField(args, key);
}

Result<Json> Exchange(std::string_view method, std::string_view path, std::string_view body,
                      seconds timeout, const ToolContext& ctx) {
  const HaAnswer answer = TALARIA_TRY(
      SendToHomeAssistant(EndpointFromEnvironment(), method, path, body, timeout, ctx.cancel));
  return JsonOf(answer);
}

// --- ha_list_entities ---------------------------------------------------------------------

constexpr std::string_view kListEntitiesSchema = R"json({
  "name": "ha_list_entities",
  "description": "List Home Assistant entities. Optionally filter by domain (light, switch, climate, sensor, binary_sensor, cover, fan, etc.) or by area name (living room, kitchen, bedroom, etc.).",
  "parameters": {
    "type": "object",
    "properties": {
      "domain": {"type": "string", "description": "Entity domain to filter by (e.g. 'light', 'switch', 'climate', 'sensor', 'binary_sensor', 'cover', 'fan', 'media_player'). Omit to list all entities."},
      "area": {"type": "string", "description": "Area/room name to filter by (e.g. 'living room', 'kitchen'). Matches against entity friendly names. Omit to list all."}
    },
    "required": []
  }
})json";

ToolResult ListEntities(const Json& args, ToolContext& ctx) {
  const std::string domain = OptionalArg(args, "domain");
  const std::string area = AsciiLower(OptionalArg(args, "area"));
  auto states = Exchange("GET", "/api/states", "", seconds(15), ctx);
  if (!states) return ToolResult::Error("Failed to list entities: " + states.error().message());
  if (!states->is_array()) {
    return ToolResult::Error("Failed to list entities: /api/states did not answer a list");
  }
  Json entities = Json::array();
  for (const Json& s : *states) {
    const std::string entity_id = StringOr(s, "entity_id");
    if (entity_id.empty()) continue;  // not an entity; HA never sends one without an id
    if (!domain.empty() && entity_id.rfind(domain + ".", 0) != 0) continue;
    const Json& attributes = AttributesOf(s);
    const std::string friendly = JsonStringField(attributes, "friendly_name");
    if (!area.empty() && AsciiLower(friendly).find(area) == std::string::npos &&
        AsciiLower(JsonStringField(attributes, "area")).find(area) == std::string::npos) {
      continue;
    }
    entities.push_back(
        {{"entity_id", entity_id}, {"state", StateText(s)}, {"friendly_name", friendly}});
  }
  const size_t count = entities.size();
  return Ok({{"count", count}, {"entities", std::move(entities)}});
}

// --- ha_get_state -------------------------------------------------------------------------

constexpr std::string_view kGetStateSchema = R"json({
  "name": "ha_get_state",
  "description": "Get the detailed state of a single Home Assistant entity, including all attributes (brightness, color, temperature setpoint, sensor readings, etc.).",
  "parameters": {
    "type": "object",
    "properties": {
      "entity_id": {"type": "string", "description": "The entity ID to query (e.g. 'light.living_room', 'climate.thermostat', 'sensor.temperature')."}
    },
    "required": ["entity_id"]
  }
})json";

Json FieldOrNull(const Json& object, std::string_view key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(key);
  return it == object.end() ? Json(nullptr) : *it;
}

ToolResult GetState(const Json& args, ToolContext& ctx) {
  const std::string entity_id = OptionalArg(args, "entity_id");
  if (entity_id.empty()) return ToolResult::Error("Missing required parameter: entity_id");
  if (!IsEntityId(entity_id)) return ToolResult::Error("Invalid entity_id format: " + entity_id);
  auto state = Exchange("GET", "/api/states/" + entity_id, "", seconds(10), ctx);
  if (!state || !state->is_object()) {
    const std::string why = state ? "the answer is not an entity" : state.error().message();
    return ToolResult::Error("Failed to get state for " + entity_id + ": " + why);
  }
  return Ok({{"entity_id", StringOr(*state, "entity_id")},
             {"state", StateText(*state)},
             {"attributes", AttributesOf(*state)},
             {"last_changed", FieldOrNull(*state, "last_changed")},
             {"last_updated", FieldOrNull(*state, "last_updated")}});
}

// --- ha_list_services ---------------------------------------------------------------------

constexpr std::string_view kListServicesSchema = R"json({
  "name": "ha_list_services",
  "description": "List available Home Assistant services (actions) for device control. Shows what actions can be performed on each device type and what parameters they accept. Use this to discover how to control devices found via ha_list_entities.",
  "parameters": {
    "type": "object",
    "properties": {
      "domain": {"type": "string", "description": "Filter by domain (e.g. 'light', 'climate', 'switch'). Omit to list services for all domains."}
    },
    "required": []
  }
})json";

// One domain's services, compacted for the context: description and field descriptions only.
Json CompactServices(const Json& services) {
  Json out = Json::object();
  if (!services.is_object()) return out;
  for (const auto& [name, info] : services.items()) {
    Json entry = {{"description", JsonStringField(info, "description")}};
    if (info.is_object()) {
      auto fields = info.find("fields");
      if (fields != info.end() && fields->is_object() && !fields->empty()) {
        Json compact = Json::object();
        for (const auto& [field, spec] : fields->items()) {
          if (spec.is_object()) compact[field] = JsonStringField(spec, "description");
        }
        entry["fields"] = std::move(compact);
      }
    }
    out[name] = std::move(entry);
  }
  return out;
}

ToolResult ListServices(const Json& args, ToolContext& ctx) {
  const std::string domain = OptionalArg(args, "domain");
  auto services = Exchange("GET", "/api/services", "", seconds(15), ctx);
  if (!services) return ToolResult::Error("Failed to list services: " + services.error().message());
  if (!services->is_array()) {
    return ToolResult::Error("Failed to list services: /api/services did not answer a list");
  }
  Json domains = Json::array();
  for (const Json& d : *services) {
    const std::string name = JsonStringField(d, "domain");
    if (!domain.empty() && name != domain) continue;
    const Json empty = Json::object();
    const Json* list = &empty;
    if (d.is_object()) {
      if (auto it = d.find("services"); it != d.end()) list = &*it;
    }
    domains.push_back({{"domain", name}, {"services", CompactServices(*list)}});
  }
  const size_t count = domains.size();
  return Ok({{"count", count}, {"domains", std::move(domains)}});
}

// --- ha_call_service ----------------------------------------------------------------------

constexpr std::string_view kCallServiceSchema = R"json({
  "name": "ha_call_service",
  "description": "Call a Home Assistant service to control a device. Use ha_list_services to discover available services and their parameters for each domain.",
  "parameters": {
    "type": "object",
    "properties": {
      "domain": {"type": "string", "description": "Service domain (e.g. 'light', 'switch', 'climate', 'cover', 'media_player', 'fan', 'scene', 'script')."},
      "service": {"type": "string", "description": "Service name (e.g. 'turn_on', 'turn_off', 'toggle', 'set_temperature', 'set_hvac_mode', 'open_cover', 'close_cover', 'set_volume_level')."},
      "entity_id": {"type": "string", "description": "Target entity ID (e.g. 'light.living_room'). Some services (like scene.turn_on) may not need this."},
      "data": {"type": "string", "description": "Additional service data as a JSON string. Examples: {\"brightness\": 255, \"color_name\": \"blue\"} for lights, {\"temperature\": 22, \"hvac_mode\": \"heat\"} for climate, {\"volume_level\": 0.5} for media players."}
    },
    "required": ["domain", "service"]
  }
})json";

// The service data: a JSON object given as a string (the schema's form) or as an object (what
// a model sometimes sends instead). Blank or absent: none.
Result<Json> ServiceData(const Json& args) {
  auto it = args.find("data");
  if (it == args.end() || it->is_null()) return Json::object();
  Json data;
  if (it->is_string()) {
    const std::string& text = it->get_ref<const std::string&>();
    if (IsBlank(text)) return Json::object();
    auto parsed = ParseJson(text);
    if (!parsed) {
      return Err(InvalidArgumentError("Invalid JSON string in 'data' parameter: " +
                                      parsed.error().message()));
    }
    data = std::move(*parsed);
  } else {
    data = *it;
  }
  if (!data.is_object()) {
    return Err(InvalidArgumentError("'data' must be a JSON object, e.g. {\"brightness\": 255}"));
  }
  return data;
}

Json AffectedEntities(const Json& states) {
  Json affected = Json::array();
  if (!states.is_array()) return affected;
  for (const Json& s : states) {
    if (!s.is_object()) continue;
    affected.push_back({{"entity_id", StringOr(s, "entity_id")}, {"state", StateText(s)}});
  }
  return affected;
}

ToolResult CallService(const Json& args, ToolContext& ctx) {
  const std::string domain = OptionalArg(args, "domain");
  const std::string service = OptionalArg(args, "service");
  if (domain.empty() || service.empty()) {
    return ToolResult::Error("Missing required parameters: domain and service");
  }
  // Shape before the block list: `shell_command/../light` must never be judged as a name.
  if (!IsServiceName(domain)) return ToolResult::Error("Invalid domain format: '" + domain + "'");
  if (!IsServiceName(service)) {
    return ToolResult::Error("Invalid service format: '" + service + "'");
  }
  if (IsBlockedDomain(domain)) {
    return ToolResult::Error("Service domain '" + domain +
                             "' is blocked for security. Blocked domains: " + BlockedDomainList());
  }
  const std::string entity_id = OptionalArg(args, "entity_id");
  if (!entity_id.empty() && !IsEntityId(entity_id)) {
    return ToolResult::Error("Invalid entity_id format: " + entity_id);
  }
  auto data = ServiceData(args);
  if (!data) return ToolResult::Error(data.error().message());
  Json payload = std::move(*data);
  if (!entity_id.empty()) payload["entity_id"] = entity_id;  // the argument wins over data's
  const std::string body = DumpJson(payload);
  const std::string path = "/api/services/" + domain + "/" + service;
  const std::string failed = "Failed to call " + domain + "." + service + ": ";

  // ?return_response first: services that answer data (todo.get_items, weather forecasts)
  // need it. HA refuses it with 400 "... does not support responses ..." for the others; then
  // the plain call. The body is read, not the reason phrase (the original matched the phrase,
  // which HA never changes, so its fallback never ran).
  const HaEndpoint endpoint = EndpointFromEnvironment();
  auto answer = SendToHomeAssistant(endpoint, "POST", path + "?return_response", body, seconds(15),
                                    ctx.cancel);
  if (answer && answer->status == 400 &&
      answer->body.find("does not support responses") != std::string::npos) {
    answer = SendToHomeAssistant(endpoint, "POST", path, body, seconds(15), ctx.cancel);
  }
  if (!answer) return ToolResult::Error(failed + answer.error().message());
  auto json = JsonOf(*answer);
  if (!json) return ToolResult::Error(failed + json.error().message());

  // Plain calls answer the changed states as a list; ?return_response answers
  // {"changed_states": [...], "service_response": {...}}.
  Json result = {{"success", true}, {"service", domain + "." + service}};
  if (json->is_object()) {
    auto changed = json->find("changed_states");
    result["affected_entities"] = AffectedEntities(changed != json->end() ? *changed : Json());
    auto response = json->find("service_response");
    if (response != json->end() && !response->is_null()) result["service_response"] = *response;
  } else {
    result["affected_entities"] = AffectedEntities(*json);
  }
  return Ok(std::move(result));
}

enum class Access { kRead, kWrite };

ToolSpec Spec(std::string_view name, std::string_view schema, SyncHandler handler, Access access) {
  const bool read_only = access == Access::kRead;
  ToolSpec spec;
  spec.name = std::string(name);
  spec.toolset = std::string(kToolset);
  spec.schema = schema;
  spec.handler = std::move(handler);
  spec.requires_env = {"HASS_TOKEN"};  // the original's check: a token is set
  spec.emoji = std::string(kEmoji);
  spec.parallel = read_only ? ParallelClass::kSafe : ParallelClass::kNever;
  spec.counts_as_read = read_only;
  spec.annotations.read_only = read_only;
  spec.annotations.open_world = true;
  return spec;
}

}  // namespace
}  // namespace talaria::homeassistant

TALARIA_TOOL(HaListEntities,
             talaria::homeassistant::Spec("ha_list_entities",
                                          talaria::homeassistant::kListEntitiesSchema,
                                          talaria::homeassistant::ListEntities,
                                          talaria::homeassistant::Access::kRead));
TALARIA_TOOL(HaGetState,
             talaria::homeassistant::Spec("ha_get_state", talaria::homeassistant::kGetStateSchema,
                                          talaria::homeassistant::GetState,
                                          talaria::homeassistant::Access::kRead));
TALARIA_TOOL(HaListServices,
             talaria::homeassistant::Spec("ha_list_services",
                                          talaria::homeassistant::kListServicesSchema,
                                          talaria::homeassistant::ListServices,
                                          talaria::homeassistant::Access::kRead));
TALARIA_TOOL(HaCallService, talaria::homeassistant::Spec("ha_call_service",
                                                         talaria::homeassistant::kCallServiceSchema,
                                                         talaria::homeassistant::CallService,
                                                         talaria::homeassistant::Access::kWrite));
