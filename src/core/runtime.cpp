#include "talaria/core/runtime.h"

#include <nlohmann/json.hpp>

#include "talaria/core/command_hooks.h"

namespace talaria {

Runtime::Runtime(Registry& registry, Config config)
    : registry_(registry),
      config_(std::move(config)),
      toolsets_(registry_),
      dispatcher_(registry_, DispatcherOptions{config_.budget}) {
  for (const auto& def : config_.toolsets) toolsets_.Define(def);
}

Result<std::unique_ptr<Runtime>> Runtime::Create(RuntimeOptions options) {
  const std::string path = options.config_path.empty() ? DefaultConfigPath() : options.config_path;
  Config config = TALARIA_TRY(LoadConfig(path));
  Registry& registry = options.registry ? *options.registry : Registry::Global();
  std::unique_ptr<Runtime> rt(new Runtime(registry, std::move(config)));
  if (options.install_command_hooks && rt->config_.hooks) {
    TALARIA_RETURN_IF_ERROR(InstallCommandHooks(*rt->config_.hooks, rt->dispatcher_.hooks(), {})
                                .WithContext(path + ": hooks"));
  }
  return rt;
}

}  // namespace talaria
