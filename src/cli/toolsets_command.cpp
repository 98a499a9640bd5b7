#include <cstdio>
#include <set>
#include <string>

#include <nlohmann/json.hpp>  // session_store.h holds Json by value

#include "cli/cli_session.h"
#include "cli/commands.h"
#include "cli/mcp_session_search.h"
#include "cli/table.h"
#include "talaria/store/session_store.h"

namespace talaria::cli {
namespace {

// What a toolset offers here, from what is registered: its own description followed by the
// tool families it actually serves when it draws on several, or why it serves nothing. The
// static descriptions name no tools, so a tool that is not built in is never advertised.
std::string Describe(Runtime& rt, const ToolsetDef& def, const std::vector<std::string>& resolved,
                     const std::vector<std::string>& runnable) {
  if (runnable.empty()) {
    if (resolved.empty()) return def.description;
    for (const auto& name : resolved) {
      if (auto entry = rt.registry().GetEntry(name)) {
        return "unavailable: " + rt.dispatcher().CheckRunnable(*entry).reason;
      }
    }
    return "unavailable: none of its tools is in this build";
  }
  std::set<std::string> families;
  for (const auto& name : runnable) {
    if (auto entry = rt.registry().GetEntry(name)) families.insert(entry->toolset());
  }
  if (families.size() < 2 && def.includes.empty()) return def.description;
  std::string out = def.description.empty() ? std::string() : def.description + ": ";
  std::string list;
  for (const auto& family : families) list += (list.empty() ? "" : ", ") + family;
  return out + list + " tools";
}

}  // namespace

int RunToolsets(Runtime& rt) {
  // Counted as `talaria mcp` would serve them: execute_code included (when it can be enabled),
  // of the agent loop's tools only session_search (which the server answers from the sessions
  // database), tools that are not built in not at all.
  (void)EnableSessionCodeExecution(rt, {});
  LoopRouter router = WithSessionSearch(store::DefaultSessionsPath(), nullptr, nullptr);
  rt.dispatcher().SetAgentLoopRouter(std::move(router.route), std::move(router.takes));
  Table table({"toolset", "includes", "tools", "description"});
  for (const auto& name : rt.toolsets().Names()) {
    auto def = rt.toolsets().Find(name);
    auto resolved = rt.toolsets().Resolve(name);
    std::string includes;
    for (const auto& inc : def ? def->includes : std::vector<std::string>{}) {
      includes += (includes.empty() ? "" : ",") + inc;
    }
    std::string count = "?";
    std::string description = def ? def->description : std::string();
    if (resolved && def) {
      const std::vector<std::string> runnable = rt.dispatcher().RunnableTools(**resolved);
      count = std::to_string(runnable.size());
      description = Describe(rt, *def, **resolved, runnable);
    }
    table.AddRow({name, includes.empty() ? "-" : includes, count, description});
  }
  table.Print(stdout);
  return kExitOk;
}

}  // namespace talaria::cli
