// Runtime: the pieces an embedding program needs, wired together from config.yaml — the
// registry (the process-wide one by default), toolsets with the user's definitions, and a
// dispatcher with the configured budgets and command hooks.
//
//   auto rt = talaria::Runtime::Create();
//   talaria::ToolContext ctx;
//   talaria::ToolResult r = (*rt)->dispatcher().Dispatch("read_file", R"({"path":"x"})", ctx);
//
// Thread-safety: the accessors are thread-safe; configure hooks and policy before dispatching.
#pragma once

#include <memory>
#include <string>

#include "talaria/base/status.h"
#include "talaria/core/config.h"
#include "talaria/core/dispatcher.h"
#include "talaria/core/registry.h"
#include "talaria/core/toolsets.h"

namespace talaria {

struct RuntimeOptions {
  std::string config_path;        // empty: $TALARIA_HOME/config.yaml
  Registry* registry = nullptr;   // null: Registry::Global()
  bool install_command_hooks = true;
};

class Runtime {
 public:
  // Fails with the config's error (a broken config.yaml is reported, never half-applied).
  static Result<std::unique_ptr<Runtime>> Create(RuntimeOptions options = {});

  Registry& registry() { return registry_; }
  Toolsets& toolsets() { return toolsets_; }
  Dispatcher& dispatcher() { return dispatcher_; }
  const Config& config() const { return config_; }

 private:
  Runtime(Registry& registry, Config config);

  Registry& registry_;
  Config config_;
  Toolsets toolsets_;
  Dispatcher dispatcher_;
};

}  // namespace talaria
