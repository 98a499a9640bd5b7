// The host side of the plugin ABI (include/talaria/plugin.h): what a plugin's
// talaria_register_tools calls back into. Registrations are staged, checked (names, shadowing,
// schemas) and published by the loader in one registry change; resources and prompts are staged
// for an MCP server that takes the plugin's features.
// Thread-safety: one Staging per load, used by one thread.
#pragma once

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "talaria/base/json.h"
#include "talaria/core/registry.h"
#include "talaria/mcp/features.h"
#include "talaria/plugin.h"

namespace talaria::plugins {

struct Staging {
  std::string plugin_name;
  bool allow_shadowing = false;
  std::shared_ptr<const RegistrySnapshot> snapshot;
  std::set<std::string, std::less<>> own;  // names this plugin registered before (a reload)
  std::vector<Json> schemas;               // parsed once here; ToolSpec borrows them
  std::vector<ToolSpec> specs;
  std::set<std::string, std::less<>> staged;
  std::vector<std::string> refused;
  std::string error;            // from set_error
  bool serve_features = false;  // a ServerFeatures takes resources and prompts
  std::vector<mcp::ResourceDef> resources;
  std::vector<mcp::PromptDef> prompts;
};

// Whether `name` may be (re)registered by this plugin; the reason when not.
std::optional<std::string> ShadowProblem(const Staging& s, std::string_view name);

// How a plugin's tools are published: over existing tools only when the config allows it;
// otherwise insert-if-absent, except for names this plugin itself registered before (a reload).
RegisterOptions PublishOptions(const Staging& s);

// The callbacks a plugin's entry point is handed, writing into `staging` (which must outlive
// the call).
talaria_plugin_host MakePluginHost(Staging& staging);

}  // namespace talaria::plugins
