// talaria plugins: discovery of the shared-object plugins, one verdict per candidate.
// (Declared here rather than in commands.h; main.cpp wires the subcommand.)
#pragma once

#include <string>
#include <vector>

#include "talaria/core/runtime.h"

namespace talaria::cli {

// talaria plugins [--json] [--plugins DIR ...] [--no-cache]: scans $TALARIA_HOME/plugins, the
// config's plugins.dirs and every --plugins DIR for shared-object plugins (*.so) and script-tool
// manifests (*.tool.yaml|yml|json), loads what the pre-scan accepts into the runtime's registry,
// and lists every candidate: loaded (with its tools), skipped and why, failed and why.
// Exit 0 when no candidate failed, 1 when one failed, 2 for a bad config.
struct PluginsOptions {
  std::vector<std::string> dirs;  // --plugins DIR (repeatable), after the configured ones
  bool json = false;              // {"candidates": [...], "warnings": [...]}
  bool no_cache = false;          // ignore and do not update the pre-scan verdict cache
};
int RunPlugins(Runtime& rt, const PluginsOptions& options);

}  // namespace talaria::cli
