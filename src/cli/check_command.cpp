// talaria check-command: runs the command guard over one command line and reports the verdict.
// Exit status: 0 allow, 1 approve, 2 block (usage errors are 2 as well: fail closed).
#include <cstdio>
#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "talaria/base/paths.h"
#include "talaria/guard/command_guard.h"

namespace talaria::cli {

int RunCheckCommand(const CheckCommandOptions& options) {
  safety::GuardOptions guard;
  if (const char* home = std::getenv("HOME"); home != nullptr) guard.home = home;
  guard.talaria_home = TalariaHome();
  const safety::GuardVerdict verdict = safety::JudgeCommand(options.command, guard);
  if (options.json) {
    nlohmann::ordered_json out;
    out["verdict"] = safety::GuardDecisionName(verdict.decision);
    out["tier"] = safety::GuardTierName(verdict.tier);
    out["reasons"] = nlohmann::ordered_json::array();
    for (const safety::GuardReason& r : verdict.reasons) {
      out["reasons"].push_back({{"rule", r.rule},
                                {"description", r.description},
                                {"tier", safety::GuardTierName(r.tier)},
                                {"segment", r.segment}});
    }
    std::printf("%s\n", out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  } else {
    std::printf("%s (%s)\n", std::string(safety::GuardDecisionName(verdict.decision)).c_str(),
                std::string(safety::GuardTierName(verdict.tier)).c_str());
    for (const safety::GuardReason& r : verdict.reasons) {
      std::printf("  %s [%s]: %s\n    in: %s\n", r.rule.c_str(),
                  std::string(safety::GuardTierName(r.tier)).c_str(), r.description.c_str(),
                  r.segment.c_str());
    }
  }
  switch (verdict.decision) {
    case safety::GuardDecision::kAllow:
      return kExitOk;
    case safety::GuardDecision::kApprove:
      return kExitToolError;
    case safety::GuardDecision::kBlock:
      return kExitUsage;
  }
  return kExitUsage;
}

}  // namespace talaria::cli
