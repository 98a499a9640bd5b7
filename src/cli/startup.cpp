#include "cli/startup.h"

#include <signal.h>

#include <cstdio>

#include <nlohmann/json.hpp>

#include "talaria/core/command_hooks.h"
#include "talaria/core/project_config.h"
#include "talaria/mcp/client.h"
#include "talaria/plugins/plugin_loader.h"

namespace talaria::cli {
namespace {

class LoadedExtensions final : public Extensions {
 public:
  LoadedExtensions(Registry& registry, mcp::ServerFeatures* features)
      : plugins(registry, features) {}
  plugins::PluginLoader plugins;
  std::unique_ptr<mcp::McpClientManager> mcp_servers;
};

// Blocks SIGINT and SIGTERM in this thread while it lives, so threads started meanwhile never
// take those signals (the process-wide default would kill talaria mid-cleanup).
class SignalsBlocked {
 public:
  SignalsBlocked() {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    ::pthread_sigmask(SIG_BLOCK, &set, &old_);
  }
  ~SignalsBlocked() { ::pthread_sigmask(SIG_SETMASK, &old_, nullptr); }
  SignalsBlocked(const SignalsBlocked&) = delete;
  SignalsBlocked& operator=(const SignalsBlocked&) = delete;

 private:
  sigset_t old_{};
};

void LoadPlugins(Runtime& rt, plugins::PluginLoader& loader,
                 const std::vector<std::string>& extra_dirs) {
  auto config = plugins::ReadPluginConfig(rt.config());
  if (!config) {
    std::fprintf(stderr, "talaria: plugins: %s\n", config.error().message().c_str());
    return;
  }
  const plugins::DiscoveryReport report =
      loader.Discover(plugins::OptionsFromConfig(*config, extra_dirs));
  for (const auto& c : report.candidates) {
    if (c.verdict == plugins::Verdict::kFailed) {
      std::fprintf(stderr, "talaria: plugin %s failed: %s\n", c.path.c_str(), c.reason.c_str());
    }
  }
  for (const auto& w : report.warnings) std::fprintf(stderr, "talaria: plugins: %s\n", w.c_str());
}

// The project-local config (./.talaria/config.yaml): when the user trusted its exact content,
// its hooks are installed and its MCP servers returned; otherwise it is reported and nothing
// of it runs.
std::vector<mcp::ServerConfig> ApplyProjectConfig(Runtime& rt) {
  auto loaded = LoadProjectConfig(ProjectConfigPath("."), TrustStorePath());
  if (!loaded) {
    std::fprintf(stderr, "talaria: project config: %s\n", loaded.error().message().c_str());
    return {};
  }
  if (!loaded->has_value() || !(*loaded)->RunsCode()) return {};
  const ProjectConfig& project = **loaded;
  if (!project.trusted) {
    std::fprintf(stderr,
                 "talaria: %s declares %s: not started, this file is not trusted. Review it, then "
                 "run `talaria trust` (any later edit needs trusting again)\n",
                 project.path.c_str(), project.DescribeCode().c_str());
    return {};
  }
  if (project.hooks) {
    CommandHookOptions hook_options;
    hook_options.before_run = [files = project.executed_files] { return CheckPinnedFiles(files); };
    if (Status s = InstallCommandHooks(*project.hooks, rt.dispatcher().hooks(), hook_options);
        !s.ok()) {
      std::fprintf(stderr, "talaria: %s: hooks: %s\n", project.path.c_str(), s.message().c_str());
    }
  }
  auto servers = mcp::ParseServerConfigs(project.mcp_servers ? *project.mcp_servers : Json());
  if (!servers) {
    std::fprintf(stderr, "talaria: %s: %s\n", project.path.c_str(),
                 servers.error().message().c_str());
    return {};
  }
  return std::move(*servers);
}

}  // namespace

std::unique_ptr<Extensions> LoadExtensions(Runtime& rt, bool wait_for_mcp,
                                           std::chrono::milliseconds mcp_wait,
                                           const ExtensionOptions& extension_options) {
  auto loaded = std::make_unique<LoadedExtensions>(rt.registry(), extension_options.features);
  SignalsBlocked blocked;
  LoadPlugins(rt, loaded->plugins, extension_options.plugin_dirs);
  auto servers = mcp::StartConfiguredServers(rt, ApplyProjectConfig(rt));
  if (!servers) {
    std::fprintf(stderr, "talaria: mcp_servers: %s\n", servers.error().message().c_str());
    return loaded;
  }
  loaded->mcp_servers = std::move(*servers);
  if (wait_for_mcp) loaded->mcp_servers->WaitForInitialConnections(mcp_wait);
  return loaded;
}

}  // namespace talaria::cli
