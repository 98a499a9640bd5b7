// talaria's user configuration: $TALARIA_HOME/config.yaml.
//
//   toolsets:            # user toolsets, same shape as the built-in ones
//     review: {description: "...", tools: [read_file], includes: [web]}
//   hooks:               # external command hooks (see command_hooks.h)
//     PreToolUse: [{matcher: "write_file|patch", hooks: [{type: command, command: "...", timeout:
//     10}]}]
//   tool_budget:
//     result_size_chars: 100000
//     turn_budget_chars: 200000
//     preview_size_chars: 1500
//     mcp_result_size_chars: 50000
//     context_window_tokens: 0      # > 0 scales both budgets to the window
//     tool_overrides: {terminal: 50000}
//
// This is the user-level file. A project-local .talaria/config.yaml contributes only mcp_servers
// and hooks, and only once trusted (project_config.h).
// Thread-safety: value types and free functions.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "talaria/base/json.h"
#include "talaria/base/status.h"
#include "talaria/core/budget.h"
#include "talaria/core/toolsets.h"

namespace talaria {

struct Config {
  std::vector<ToolsetDef> toolsets;
  std::shared_ptr<const Json> hooks;  // the raw "hooks" section; null when absent
  BudgetConfig budget;
  std::shared_ptr<const Json> raw;  // the whole file as JSON (later modules read their part)
  // Things worth telling the user that do not stop the config from loading: each top-level key
  // no module reads ("config.yaml: unknown top-level key 'aproovals' is ignored; did you mean
  // 'approvals'?"). A front end prints them.
  std::vector<std::string> warnings;
};

// The top-level sections config.yaml may have (every one some module reads).
std::vector<std::string> KnownConfigSections();
// Declares a top-level section a module reads (from a static initializer), so a config with it
// draws no unknown-key warning.
void DeclareConfigSection(std::string_view name);

// YAML text as the JSON it spells (config files, script-tool manifests): quoted scalars stay
// strings; plain ones become booleans, null or numbers when they read as such; nesting past 64
// levels becomes null. InvalidArgument ("not valid YAML: ...") when it does not parse.
Result<Json> ParseYaml(std::string_view yaml_text);

// $TALARIA_HOME/config.yaml
std::string DefaultConfigPath();

// What a config path that does not exist means.
enum class MissingConfig : unsigned char {
  kDefaults,  // the default path: no file is the defaults
  kError,     // a path the user named: NotFound
};

// A missing file gives the defaults (or NotFound naming it, with MissingConfig::kError).
// InvalidArgument for YAML that does not parse or a section of the wrong shape; the message
// names the file and the section.
Result<Config> LoadConfig(const std::string& path,
                          MissingConfig missing = MissingConfig::kDefaults);
Result<Config> ParseConfig(std::string_view yaml_text, std::string_view origin = "config");

}  // namespace talaria
