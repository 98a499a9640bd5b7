#include <cstdio>
#include <string>

#include "cli/commands.h"
#include "cli/table.h"

namespace talaria::cli {

int RunTools(Runtime& rt, const ToolsOptions& options) {
  auto selection = rt.toolsets().ResolveSelection(options.toolsets, {});
  if (!selection) {
    std::fprintf(stderr, "talaria: %s\n", selection.error().message().c_str());
    return kExitUsage;
  }
  // What a model may be handed: only tools a call can reach (not the agent loop's, with no loop).
  if (options.json) {
    std::printf("%s\n", rt.registry().GetDefinitions(rt.dispatcher().RunnableTools(**selection)).c_str());
    return kExitOk;
  }
  Table table({"", "tool", "toolset", "status"});
  for (const auto& name : **selection) {
    auto entry = rt.registry().GetEntry(name);
    if (!entry) continue;  // named by a toolset but not built into this binary
    Availability a = rt.dispatcher().CheckRunnable(*entry);
    table.AddRow({std::string(entry->emoji()), entry->name(), entry->toolset(),
                  a.available ? "available" : "unavailable: " + a.reason});
  }
  table.Print(stdout);
  return kExitOk;
}

}  // namespace talaria::cli
