#include "plugins/plugin_host.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <nlohmann/json.hpp>

#include "plugins/plugin_bridge.h"
#include "talaria/base/log.h"

namespace talaria::plugins {
namespace {

constexpr size_t kMaxNameLength = 64;

bool ValidToolName(std::string_view s) {
  if (s.empty() || s.size() > kMaxNameLength) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
  });
}

bool ValidToolsetName(std::string_view s) {
  if (s.empty() || s.size() > kMaxNameLength) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || c == '.';
  });
}

int Refuse(Staging& s, std::string_view name, int code, const std::string& why) {
  s.refused.push_back(std::string(name.empty() ? "<unnamed>" : name) + ": " + why);
  LogWarn("plugin " + s.plugin_name + ": tool " + std::string(name) + " refused: " + why);
  return code;
}

// Copies the first `size` bytes the plugin's struct has (a smaller, older struct leaves the rest
// zero); false when it is too small to hold `required` bytes.
template <typename Def>
bool ReadDef(const Def* def, size_t required, Def& out) {
  out = Def{};
  if (def == nullptr || def->struct_size < required) return false;
  std::memcpy(&out, def, std::min<size_t>(def->struct_size, sizeof out));
  return true;
}

int HostRegisterTool(void* context, const talaria_tool_def* def) {
  auto* s = static_cast<Staging*>(context);
  if (s == nullptr) return TALARIA_PLUGIN_INVALID_ARGUMENT;
  try {
    if (def == nullptr) return Refuse(*s, "", TALARIA_PLUGIN_INVALID_ARGUMENT, "null definition");
    // Read only the fields the plugin's struct has; the rest keep their defaults.
    talaria_tool_def d;
    if (!ReadDef(def, offsetof(talaria_tool_def, user_data) + sizeof(void*), d)) {
      return Refuse(*s, "", TALARIA_PLUGIN_INVALID_ARGUMENT,
                    "struct_size " + std::to_string(def->struct_size) + " is too small");
    }
    const std::string_view name = d.name != nullptr ? std::string_view(d.name) : std::string_view();
    if (!ValidToolName(name)) {
      return Refuse(*s, name, TALARIA_PLUGIN_INVALID_ARGUMENT,
                    "invalid name (want [A-Za-z0-9_-]{1,64})");
    }
    const std::string_view toolset =
        d.toolset != nullptr ? std::string_view(d.toolset) : std::string_view();
    if (!ValidToolsetName(toolset)) {
      return Refuse(*s, name, TALARIA_PLUGIN_INVALID_ARGUMENT, "invalid toolset name");
    }
    if (toolset.starts_with("mcp-")) {
      return Refuse(*s, name, TALARIA_PLUGIN_INVALID_ARGUMENT,
                    "toolsets named mcp-* belong to MCP servers");
    }
    if (d.handler == nullptr)
      return Refuse(*s, name, TALARIA_PLUGIN_INVALID_ARGUMENT, "no handler");
    if (d.schema_json == nullptr)
      return Refuse(*s, name, TALARIA_PLUGIN_INVALID_ARGUMENT, "no schema");
    auto schema = ParseJson(d.schema_json);
    if (!schema) {
      return Refuse(*s, name, TALARIA_PLUGIN_INVALID_ARGUMENT,
                    "schema is not JSON: " + schema.error().message());
    }
    auto params = schema->is_object() ? schema->find("parameters") : schema->end();
    if (!schema->is_object() || params == schema->end() || !params->is_object()) {
      return Refuse(*s, name, TALARIA_PLUGIN_INVALID_ARGUMENT,
                    "schema must be an object with an object \"parameters\"");
    }
    if (s->staged.contains(name)) {
      return Refuse(*s, name, TALARIA_PLUGIN_ALREADY_EXISTS, "registered twice by this plugin");
    }
    if (auto problem = ShadowProblem(*s, name)) {
      return Refuse(*s, name, TALARIA_PLUGIN_ALREADY_EXISTS, *problem);
    }
    s->schemas.push_back(std::move(*schema));
    ToolSpec spec;
    spec.name = std::string(name);
    spec.toolset = std::string(toolset);
    spec.handler = AdaptToolHandler(d.handler, d.user_data, spec.name);
    spec.parallel =
        d.parallel == TALARIA_PARALLEL_SAFE ? ParallelClass::kSafe : ParallelClass::kNever;
    if (def->struct_size >= offsetof(talaria_tool_def, emoji) + sizeof(d.emoji) &&
        d.emoji != nullptr) {
      spec.emoji = d.emoji;
    }
    s->specs.push_back(std::move(spec));
    s->staged.emplace(name);
    return TALARIA_PLUGIN_OK;
  } catch (...) {
    return Refuse(*s, "", TALARIA_PLUGIN_ERROR, "out of memory");
  }
}

// A resource or prompt definition: read, adapted, staged (served only when an MCP server takes
// the plugin's features). `kind` names it in refusals.
template <typename Def, typename Adapt, typename Member>
int RegisterFeature(void* context, const Def* def, const char* kind, Adapt adapt, Member staged) {
  auto* s = static_cast<Staging*>(context);
  if (s == nullptr) return TALARIA_PLUGIN_INVALID_ARGUMENT;
  try {
    Def d;
    if (!ReadDef(def, offsetof(Def, user_data) + sizeof(void*), d)) {
      return Refuse(*s, kind, TALARIA_PLUGIN_INVALID_ARGUMENT, "null or too small definition");
    }
    auto adapted = adapt(d, s->plugin_name);
    if (!adapted)
      return Refuse(*s, kind, TALARIA_PLUGIN_INVALID_ARGUMENT, adapted.error().message());
    if (!ValidToolsetName(adapted->toolset)) {
      return Refuse(*s, adapted->name, TALARIA_PLUGIN_INVALID_ARGUMENT, "invalid toolset name");
    }
    if (s->serve_features) (s->*staged).push_back(std::move(*adapted));
    return TALARIA_PLUGIN_OK;
  } catch (...) {
    return Refuse(*s, "", TALARIA_PLUGIN_ERROR, "out of memory");
  }
}

int HostRegisterResource(void* context, const talaria_resource_def* def) {
  return RegisterFeature(context, def, "resource", &AdaptResource, &Staging::resources);
}

int HostRegisterPrompt(void* context, const talaria_prompt_def* def) {
  return RegisterFeature(context, def, "prompt", &AdaptPrompt, &Staging::prompts);
}

void HostSetError(void* context, const char* message) {
  auto* s = static_cast<Staging*>(context);
  if (s == nullptr || message == nullptr) return;
  try {
    s->error = message;
  } catch (...) {
  }
}

void HostLog(void* context, int level, const char* message) {
  auto* s = static_cast<Staging*>(context);
  if (s == nullptr || message == nullptr) return;
  try {
    const LogLevel l = level == TALARIA_LOG_ERROR  ? LogLevel::kError
                       : level == TALARIA_LOG_WARN ? LogLevel::kWarn
                                                   : LogLevel::kInfo;
    Log(l, "plugin " + s->plugin_name + ": " + message);
  } catch (...) {
  }
}

}  // namespace

// Whether `name` may be (re)registered by this plugin; the reason when not.
std::optional<std::string> ShadowProblem(const Staging& s, std::string_view name) {
  const ToolEntry* existing = s.snapshot->Find(name);
  if (existing == nullptr || s.own.contains(name) || s.allow_shadowing) return std::nullopt;
  return "would replace the existing tool '" + std::string(name) + "' (toolset '" +
         existing->toolset() + "'); list the plugin under plugins.allow_shadowing to allow it";
}

// How a plugin's tools are published: over existing tools only when the config allows it;
// otherwise insert-if-absent, except for names this plugin itself registered before (a reload).
RegisterOptions PublishOptions(const Staging& s) {
  RegisterOptions options;
  options.allow_override = s.allow_shadowing;
  options.only_new = !s.allow_shadowing && s.own.empty();
  return options;
}

talaria_plugin_host MakePluginHost(Staging& staging) {
  talaria_plugin_host host{};
  host.interface_version = TALARIA_PLUGIN_INTERFACE_VERSION;
  host.struct_size = sizeof(talaria_plugin_host);
  host.context = &staging;
  host.plugin_name = staging.plugin_name.c_str();
  host.register_tool = &HostRegisterTool;
  host.set_error = &HostSetError;
  host.log = &HostLog;
  host.register_resource = &HostRegisterResource;
  host.register_prompt = &HostRegisterPrompt;
  return host;
}

}  // namespace talaria::plugins
