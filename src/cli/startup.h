// What a command that runs tools loads before it starts: plugins and script tools (plugins:
// section, $TALARIA_HOME/plugins), then the configured MCP servers (mcp_servers: section), whose
// connections keep running in the background for the life of the returned object. A trusted
// project-local config (./.talaria/config.yaml, core/project_config.h) adds its hooks and MCP
// servers; an untrusted one that declares them is reported on stderr and not used.
#pragma once

#include <chrono>
#include <memory>

#include <string>
#include <vector>

#include "talaria/core/runtime.h"

namespace talaria::mcp {
class ServerFeatures;
}

namespace talaria::cli {

struct ExtensionOptions {
  // Plugin directories scanned after the configured ones (`talaria mcp --plugins DIR`).
  std::vector<std::string> plugin_dirs;
  // Where plugins' resources and prompts go (`talaria mcp` serves them); null: ignored.
  mcp::ServerFeatures* features = nullptr;
};

class Extensions {
 public:
  virtual ~Extensions() = default;
};

// Problems are reported on stderr and never stop the command: a broken plugin or an unreachable
// MCP server leaves the other tools working. `wait_for_mcp`: block until every MCP server has
// made its first connection attempt (a one-shot command needs their tools now), at most
// `mcp_wait`. Threads it starts have SIGINT/SIGTERM blocked, so those signals always reach the
// command's own handling.
std::unique_ptr<Extensions> LoadExtensions(
    Runtime& rt, bool wait_for_mcp, std::chrono::milliseconds mcp_wait = std::chrono::seconds(60),
    const ExtensionOptions& extension_options = {});

}  // namespace talaria::cli
