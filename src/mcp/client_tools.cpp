// MCP tools as talaria tools: schemas, filters and collisions on the way in, call results on
// the way out.
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "mcp/client_internal.h"
#include "talaria/base/json.h"
#include "talaria/base/log.h"
#include "talaria/base/redact.h"

namespace talaria::mcp::client_internal {
namespace {

bool BoolField(const Json& object, const char* key) {
  if (!object.is_object()) return false;
  auto it = object.find(key);
  return it != object.end() && it->is_boolean() && it->get<bool>();
}

}  // namespace

Json NormalizeInputSchema(const Json& input_schema) {
  if (!input_schema.is_object()) return Json{{"type", "object"}, {"properties", Json::object()}};
  Json schema = input_schema;
  schema.erase("$schema");
  auto type = schema.find("type");
  if (type == schema.end() || type->is_null()) {
    schema["type"] = "object";
  } else if (!type->is_string() || type->get<std::string>() != "object") {
    return Json{{"type", "object"}, {"properties", Json::object()}};
  }
  auto props = schema.find("properties");
  if (props == schema.end() || !props->is_object()) schema["properties"] = Json::object();
  return schema;
}

std::vector<McpToolDef> BuildToolDefs(std::string_view server, const std::vector<Json>& tools,
                                      const ToolFilter& filter, std::vector<std::string>* skipped) {
  std::vector<McpToolDef> defs;
  std::map<std::string, int> name_counts;
  for (const Json& tool : tools) {
    const std::string tool_name = JsonStringField(tool, "name");
    if (tool_name.empty() || !filter.Allows(tool_name)) continue;
    McpToolDef def;
    def.server_tool = tool_name;
    def.name = McpToolName(server, tool_name);
    def.description = JsonStringField(tool, "description");
    if (def.description.empty())
      def.description = "MCP tool " + tool_name + " of server " + std::string(server);
    const Json& annotations = tool.contains("annotations") ? tool["annotations"] : Json();
    def.read_only = BoolField(annotations, "readOnlyHint");
    def.destructive = BoolField(annotations, "destructiveHint");
    def.idempotent = BoolField(annotations, "idempotentHint");
    def.open_world = BoolField(annotations, "openWorldHint");
    def.schema =
        Json{{"name", def.name},
             {"description", def.description},
             {"parameters",
              NormalizeInputSchema(tool.contains("inputSchema") ? tool["inputSchema"] : Json())}};
    ++name_counts[def.name];
    defs.push_back(std::move(def));
  }
  std::vector<McpToolDef> kept;
  kept.reserve(defs.size());
  for (auto& def : defs) {
    if (name_counts[def.name] > 1) {
      LogWarn("mcp client: server '" + std::string(server) + "' tool '" + def.server_tool +
              "' skipped: its name " + def.name + " collides with another of its tools");
      if (skipped != nullptr) skipped->push_back(def.server_tool);
      continue;
    }
    kept.push_back(std::move(def));
  }
  return kept;
}

ToolResult RenderCallResult(const Json& result, const SecretMask& mask) {
  std::string text;
  auto append = [&text](std::string_view part) {
    if (!text.empty()) text.push_back('\n');
    text.append(part);
  };
  if (result.is_object()) {
    if (auto content = result.find("content"); content != result.end() && content->is_array()) {
      for (const Json& item : *content) {
        const std::string type = JsonStringField(item, "type");
        if (type == "text") {
          append(JsonStringField(item, "text"));
        } else if (type == "resource") {
          const Json& res = item.contains("resource") ? item["resource"] : Json();
          const std::string res_text = JsonStringField(res, "text");
          append(!res_text.empty() ? res_text : "[resource: " + JsonStringField(res, "uri") + "]");
        } else if (type == "resource_link") {
          append("[resource link: " + JsonStringField(item, "uri") + "]");
        } else if (!type.empty()) {
          const std::string mime = JsonStringField(item, "mimeType");
          append("[" + type + " content" + (mime.empty() ? "" : " (" + mime + ")") + " omitted]");
        }
      }
    }
  }
  if (BoolField(result, "isError")) {
    return ToolResult::Error("MCP call failed: " +
                             mask.Apply(text.empty() ? "the tool reported an error" : text));
  }
  Json out = {{"result", std::move(text)}};
  if (result.is_object()) {
    if (auto sc = result.find("structuredContent"); sc != result.end() && !sc->is_null()) {
      out["structuredContent"] = *sc;
    }
  }
  return ToolResult::Text(DumpJson(out));
}

std::vector<std::string> BuildChildEnv(const std::map<std::string, std::string>& configured) {
  std::map<std::string, std::string> env;
  for (const char* key : {"PATH", "HOME"}) {
    if (const char* v = std::getenv(key); v != nullptr) env[key] = v;
  }
  for (const auto& [k, v] : configured) env[k] = v;
  std::vector<std::string> out;
  out.reserve(env.size());
  for (const auto& [k, v] : env) out.push_back(k + "=" + v);
  return out;
}

}  // namespace talaria::mcp::client_internal
