// Runtime: the pieces an embedding program needs, wired together from config.yaml — the
// registry (the process-wide one by default), toolsets with the user's definitions, and a
// dispatcher with the configured budgets, command hooks and, unless the embedder opts out, the
// command policy: every command a tool would run (terminal, process input) is judged by the
// command guard, and the dangerous ones are refused unless config.yaml's approvals allow them
// (default: deny; nobody is there to ask). The policy comes from the tools module, which
// registers it at start-up (SetDefaultCommandPolicyInstaller); core does not depend on tools.
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

// Whether Runtime::Create puts the command guard in front of the tools that run commands.
enum class CommandPolicySetup : unsigned char {
  kGuarded,  // the guard and config.yaml's approvals (deny unless allowed); the default
  kNone,     // nothing: the embedder installs its own policy, or accepts unjudged commands
};

struct RuntimeOptions {
  std::string config_path;  // empty: $TALARIA_HOME/config.yaml (may be absent); else must exist
  Registry* registry = nullptr;  // null: Registry::Global()
  bool install_command_hooks = true;
  CommandPolicySetup command_policy = CommandPolicySetup::kGuarded;
};

// Installs the default command policy on a dispatcher. The tools module registers one at
// start-up; Runtime::Create with kGuarded fails (FailedPrecondition) when none is registered,
// rather than run commands unjudged.
using CommandPolicyInstaller = Status (*)(Dispatcher& dispatcher, const Config& config);
void SetDefaultCommandPolicyInstaller(CommandPolicyInstaller installer);

// The configuration the process's latest Runtime on the global registry loaded; null before
// the first. What a process-wide check reads (a ToolSpec's check_fn has no session), so a
// tool's availability follows the config the process runs with, not config.yaml as it is on
// disk now: one read per process.
std::shared_ptr<const Config> LoadedProcessConfig();

// The configuration a tool call reads its settings from: LoadedProcessConfig, so a call never
// re-reads config.yaml mid-run (an edit, or a file an editor has half written, takes effect at
// the next start) and `talaria --config FILE` holds for every tool. A process that made no
// Runtime on the global registry (a program using the registry alone, a module's unit tests)
// has none: then $TALARIA_HOME/config.yaml is read, on each call. Errors: that read's
// (LoadConfig).
Result<std::shared_ptr<const Config>> ToolCallConfig();

class Runtime {
 public:
  // Fails with the config's error (a broken config.yaml is reported, never half-applied), or
  // NotFound when options.config_path names a file that does not exist. On the global registry
  // the config becomes the process's (LoadedProcessConfig).
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
