#include "talaria/core/runtime.h"

#include <nlohmann/json.hpp>

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
  return rt;
}

}  // namespace talaria
