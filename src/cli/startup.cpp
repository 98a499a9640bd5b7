#include "cli/startup.h"

#include <signal.h>

#include <cstdio>

#include "talaria/mcp/client.h"
#include "talaria/plugins/plugin_loader.h"

namespace talaria::cli {
namespace {

class LoadedExtensions final : public Extensions {
 public:
  explicit LoadedExtensions(Registry& registry) : plugins(registry) {}
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

void LoadPlugins(Runtime& rt, plugins::PluginLoader& loader) {
  auto config = plugins::ReadPluginConfig(rt.config());
  if (!config) {
    std::fprintf(stderr, "talaria: plugins: %s\n", config.error().message().c_str());
    return;
  }
  const plugins::DiscoveryReport report = loader.Discover(plugins::OptionsFromConfig(*config));
  for (const auto& c : report.candidates) {
    if (c.verdict == plugins::Verdict::kFailed) {
      std::fprintf(stderr, "talaria: plugin %s failed: %s\n", c.path.c_str(), c.reason.c_str());
    }
  }
  for (const auto& w : report.warnings) std::fprintf(stderr, "talaria: plugins: %s\n", w.c_str());
}

}  // namespace

std::unique_ptr<Extensions> LoadExtensions(Runtime& rt, bool wait_for_mcp, std::chrono::milliseconds mcp_wait) {
  auto loaded = std::make_unique<LoadedExtensions>(rt.registry());
  SignalsBlocked blocked;
  LoadPlugins(rt, loaded->plugins);
  auto servers = mcp::StartConfiguredServers(rt);
  if (!servers) {
    std::fprintf(stderr, "talaria: mcp_servers: %s\n", servers.error().message().c_str());
    return loaded;
  }
  loaded->mcp_servers = std::move(*servers);
  if (wait_for_mcp) loaded->mcp_servers->WaitForInitialConnections(mcp_wait);
  return loaded;
}

}  // namespace talaria::cli
