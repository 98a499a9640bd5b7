#include "cli/plugins_command.h"

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/commands.h"
#include "cli/table.h"
#include "talaria/base/strings.h"
#include "talaria/plugins/plugin_loader.h"

namespace talaria::cli {
namespace {}  // namespace

int RunPlugins(Runtime& rt, const PluginsOptions& options) {
  auto config = plugins::ReadPluginConfig(rt.config());
  if (!config) {
    std::fprintf(stderr, "talaria: config: %s\n", config.error().message().c_str());
    return kExitUsage;
  }
  plugins::DiscoveryOptions discovery = plugins::OptionsFromConfig(*config, options.dirs);
  if (options.no_cache) discovery.cache_path.clear();
  plugins::PluginLoader loader(rt.registry());
  const plugins::DiscoveryReport report = loader.Discover(discovery);

  if (options.json) {
    std::printf("%s\n", report.ToJson().dump(2).c_str());
  } else {
    Table table({"verdict", "trial", "plugin", "details"});
    for (const auto& c : report.candidates) {
      std::string details;
      if (c.verdict == plugins::Verdict::kLoaded) {
        details = c.tools.empty() ? "no tools" : Join(c.tools, ", ");
      } else {
        details = c.reason;
      }
      if (!c.refused.empty()) details += " (refused: " + Join(c.refused, "; ") + ")";
      table.AddRow({std::string(plugins::VerdictName(c.verdict)), c.trial.empty() ? "-" : c.trial,
                    c.path, details});
    }
    if (report.candidates.empty()) {
      std::printf("no plugin candidates in %s\n", Join(discovery.dirs, ", ").c_str());
    } else {
      table.Print(stdout);
      std::printf("%zu loaded, %zu skipped, %zu failed\n", report.Count(plugins::Verdict::kLoaded),
                  report.Count(plugins::Verdict::kSkipped),
                  report.Count(plugins::Verdict::kFailed));
    }
  }
  for (const auto& w : report.warnings) std::fprintf(stderr, "talaria: warning: %s\n", w.c_str());
  return report.Count(plugins::Verdict::kFailed) == 0 ? kExitOk : kExitToolError;
}

}  // namespace talaria::cli
