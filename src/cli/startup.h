// What a command that runs tools loads before it starts: plugins and script tools (plugins:
// section, $TALARIA_HOME/plugins), then the configured MCP servers (mcp_servers: section), whose
// connections keep running in the background for the life of the returned object.
#pragma once

#include <chrono>
#include <memory>

#include "talaria/core/runtime.h"

namespace talaria::cli {

class Extensions {
 public:
  virtual ~Extensions() = default;
};

// Problems are reported on stderr and never stop the command: a broken plugin or an unreachable
// MCP server leaves the other tools working. `wait_for_mcp`: block until every MCP server has
// made its first connection attempt (a one-shot command needs their tools now), at most
// `mcp_wait`. Threads it starts have SIGINT/SIGTERM blocked, so those signals always reach the
// command's own handling.
std::unique_ptr<Extensions> LoadExtensions(Runtime& rt, bool wait_for_mcp,
                                           std::chrono::milliseconds mcp_wait = std::chrono::seconds(60));

}  // namespace talaria::cli
