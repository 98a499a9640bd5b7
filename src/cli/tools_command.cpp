#include <cstdio>
#include <string>

#include "cli/cli_session.h"
#include "cli/commands.h"
#include "cli/table.h"

namespace talaria::cli {

int RunTools(Runtime& rt, const ToolsOptions& options) {
  auto selection = rt.toolsets().ResolveSelection(options.toolsets, {});
  if (!selection) {
    std::fprintf(stderr, "talaria: %s\n", selection.error().message().c_str());
    return kExitUsage;
  }
  // execute_code is registered per session (its scripts call back into this dispatcher): enable
  // it as a session serving these toolsets would, so the list is the one a session serves.
  const Status code = EnableSessionCodeExecution(rt, options.toolsets);
  // What a model may be handed: only tools a call can reach (not the agent loop's, with no loop).
  if (options.json) {
    std::printf("%s\n",
                rt.registry().GetDefinitions(rt.dispatcher().RunnableTools(**selection))->c_str());
    return kExitOk;
  }
  Table table({"", "tool", "toolset", "status"});
  for (const auto& name : **selection) {
    auto entry = rt.registry().GetEntry(name);
    if (!entry) {
      // Named by a toolset but not built into this binary, or execute_code that could not be
      // enabled (then say why).
      if (name == "execute_code" && !code.ok()) {
        table.AddRow({"", name, "code_execution", "unavailable: " + code.message()});
      }
      continue;
    }
    Availability a = rt.dispatcher().CheckRunnable(*entry);
    table.AddRow({std::string(entry->emoji()), entry->name(), entry->toolset(),
                  a.available ? "available" : "unavailable: " + a.reason});
  }
  table.Print(stdout);
  return kExitOk;
}

}  // namespace talaria::cli
