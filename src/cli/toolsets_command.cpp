#include <cstdio>
#include <string>

#include "cli/commands.h"
#include "cli/table.h"

namespace talaria::cli {

int RunToolsets(Runtime& rt) {
  Table table({"toolset", "includes", "tools", "description"});
  for (const auto& name : rt.toolsets().Names()) {
    auto def = rt.toolsets().Find(name);
    auto resolved = rt.toolsets().Resolve(name);
    std::string includes;
    for (const auto& inc : def ? def->includes : std::vector<std::string>{}) {
      includes += (includes.empty() ? "" : ",") + inc;
    }
    table.AddRow({name, includes.empty() ? "-" : includes,
                  resolved ? std::to_string((*resolved)->size()) : "?",
                  def ? def->description : std::string()});
  }
  table.Print(stdout);
  return kExitOk;
}

}  // namespace talaria::cli
