#include "talaria/core/runtime.h"

#include <atomic>
#include <memory>
#include <mutex>

#include <nlohmann/json.hpp>

#include "talaria/core/command_hooks.h"

namespace talaria {
namespace {

std::atomic<CommandPolicyInstaller>& DefaultPolicyInstaller() {
  static std::atomic<CommandPolicyInstaller> installer{nullptr};
  return installer;
}

struct ProcessConfigSlot {
  std::mutex mu;
  std::shared_ptr<const Config> config;  // Guarded by mu.
};

ProcessConfigSlot& ProcessConfig() {
  static ProcessConfigSlot slot;
  return slot;
}

}  // namespace

std::shared_ptr<const Config> LoadedProcessConfig() {
  ProcessConfigSlot& slot = ProcessConfig();
  std::lock_guard lock(slot.mu);
  return slot.config;
}

Result<std::shared_ptr<const Config>> ToolCallConfig() {
  if (std::shared_ptr<const Config> loaded = LoadedProcessConfig()) return loaded;
  Config read = TALARIA_TRY(LoadConfig(DefaultConfigPath()));
  return std::make_shared<const Config>(std::move(read));
}

void SetDefaultCommandPolicyInstaller(CommandPolicyInstaller installer) {
  DefaultPolicyInstaller().store(installer);
}

Runtime::Runtime(Registry& registry, Config config)
    : registry_(registry),
      config_(std::move(config)),
      toolsets_(registry_),
      dispatcher_(registry_, DispatcherOptions{config_.budget}) {
  for (const auto& def : config_.toolsets) toolsets_.Define(def);
}

Result<std::unique_ptr<Runtime>> Runtime::Create(RuntimeOptions options) {
  const std::string path = options.config_path.empty() ? DefaultConfigPath() : options.config_path;
  // A file the caller named must exist; only the default one may be absent.
  Config config = TALARIA_TRY(LoadConfig(
      path, options.config_path.empty() ? MissingConfig::kDefaults : MissingConfig::kError));
  Registry& registry = options.registry ? *options.registry : Registry::Global();
  std::unique_ptr<Runtime> rt(new Runtime(registry, std::move(config)));
  if (options.install_command_hooks && rt->config_.hooks) {
    TALARIA_RETURN_IF_ERROR(InstallCommandHooks(*rt->config_.hooks, rt->dispatcher_.hooks(), {})
                                .WithContext(path + ": hooks"));
  }
  if (options.command_policy == CommandPolicySetup::kGuarded) {
    const CommandPolicyInstaller install = DefaultPolicyInstaller().load();
    if (install == nullptr) {
      return Err(FailedPreconditionError(
          "no command policy is registered (link the tools module), and commands are not run "
          "unjudged; pass CommandPolicySetup::kNone to opt out"));
    }
    TALARIA_RETURN_IF_ERROR(
        install(rt->dispatcher_, rt->config_).WithContext(path + ": approvals"));
  }
  if (&registry == &Registry::Global()) {
    ProcessConfigSlot& slot = ProcessConfig();
    auto published = std::make_shared<const Config>(rt->config_);
    std::lock_guard lock(slot.mu);
    slot.config = std::move(published);
  }
  return rt;
}

}  // namespace talaria
