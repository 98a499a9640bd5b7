// The policy stage for every tool that runs shell commands (a ToolSpec with command_arg): the
// command guard judges the command, Approvals decides the dangerous tier, and every decision
// is one line in the audit log.
//
//   auto rt = talaria::Runtime::Create();
//   talaria::tools::InstallCommandPolicy((*rt)->dispatcher(), (*rt)->config(), prompter);
//
// Thread-safety: CommandPolicy is thread-safe.
#pragma once

#include <memory>

#include "talaria/base/status.h"
#include "talaria/core/config.h"
#include "talaria/core/dispatcher.h"
#include "talaria/guard/approvals.h"
#include "talaria/guard/command_guard.h"

namespace talaria::tools {

class CommandPolicy final : public Policy {
 public:
  CommandPolicy(std::shared_ptr<safety::Approvals> approvals, safety::GuardOptions guard);
  Decision Check(const ToolEntry& tool, const Json& args, const ToolContext& ctx) override;

 private:
  std::shared_ptr<safety::Approvals> approvals_;
  const safety::GuardOptions guard_;
};

// approvals.mode / approvals.allowlist of config.yaml (defaults: deny, empty). "always"
// answers are kept in $TALARIA_HOME/approvals.json. Errors: InvalidArgument for a bad section.
Result<safety::ApprovalSettings> ApprovalSettingsFromConfig(const Config& config);

// Sets a CommandPolicy on `dispatcher`. `prompter` null: nobody can answer (ask acts as deny).
Status InstallCommandPolicy(Dispatcher& dispatcher, const Config& config,
                            std::shared_ptr<safety::ApprovalPrompter> prompter);

}  // namespace talaria::tools
