#include "talaria/tools/command_policy.h"

#include <unistd.h>

#include <cstdlib>

#include <nlohmann/json.hpp>

#include "talaria/audit/audit_log.h"
#include "talaria/base/json.h"
#include "talaria/base/log.h"
#include "talaria/base/paths.h"
#include "talaria/core/runtime.h"
#include "talaria/env/environment.h"
#include "talaria/tools/session_services.h"
#include "tools/elicitation_prompter.h"

namespace talaria::tools {
namespace {

void Audit(const ToolContext& ctx, std::string_view tool, std::string_view command,
           const safety::GuardVerdict& verdict, const safety::ApprovalOutcome& outcome) {
  if (AuditLogOf(ctx) == nullptr) return;
  Json line = Json::object();
  line["time"] = safety::AuditTimestamp(std::chrono::system_clock::now());
  // "command" for what the guard let through as it is, "approval" for what needed a decision:
  // a bypass of the guard leaves a trace too.
  line["event"] = verdict.decision == safety::GuardDecision::kAllow ? "command" : "approval";
  line["session"] = ctx.session_id;
  line["tool"] = std::string(tool);
  line["command"] = std::string(command);
  line["verdict"] = std::string(safety::GuardDecisionName(verdict.decision));
  Json rules = Json::array();
  for (const auto& r : verdict.reasons) rules.push_back(r.rule);
  line["rules"] = std::move(rules);
  line["outcome"] = outcome.allowed ? "allowed" : "refused";
  line["how"] = outcome.how;
  if (Status s = AuditLogOf(ctx)->AppendLine(DumpJson(line) + "\n"); !s.ok()) {
    LogWarn("approval not audited: " + s.message());
  }
}

}  // namespace

CommandPolicy::CommandPolicy(std::shared_ptr<safety::Approvals> approvals,
                             safety::GuardOptions guard)
    : approvals_(std::move(approvals)), guard_(std::move(guard)) {}

Policy::Decision CommandPolicy::Check(const ToolEntry& tool, const Json& args,
                                      const ToolContext& ctx) {
  const std::string& arg = tool.command_arg();
  if (arg.empty()) return {};
  auto it = args.find(arg);
  if (it == args.end() || !it->is_string()) return {};
  const std::string command =
      tool.command_text() != nullptr
          ? tool.command_text()(args, ctx, it->get_ref<const std::string&>())
          : it->get_ref<const std::string&>();
  // Relative paths are judged where the command starts: the terminal's cwd (a `workdir`
  // argument moves it further; relative ones are judged against the shell's cwd all the same).
  safety::GuardOptions guard = guard_;
  if (auto workdir = args.find("workdir"); workdir != args.end() && workdir->is_string() &&
                                           !workdir->get_ref<const std::string&>().empty() &&
                                           workdir->get_ref<const std::string&>()[0] == '/') {
    guard.working_directory = workdir->get<std::string>();
  } else if (EnvironmentOf(ctx) != nullptr) {
    guard.working_directory = EnvironmentOf(ctx)->cwd();
  }
  const safety::GuardVerdict verdict = safety::JudgeCommand(command, guard);
  if (verdict.decision == safety::GuardDecision::kAllow) {
    Audit(ctx, tool.name(), command, verdict, safety::ApprovalOutcome{true, "not_needed", ""});
    return {};
  }
  safety::ApprovalRequest request;
  request.session = ctx.session_id;
  request.tool = tool.name();
  request.command = command;
  request.reasons = verdict.reasons;
  // An MCP client that can elicit answers for its own calls (approvals.mode: ask).
  request.prompter = MakeElicitationPrompter(ctx);
  request.unattended = ctx.unattended;
  const safety::ApprovalOutcome outcome = approvals_->Decide(request, verdict);
  Audit(ctx, tool.name(), command, verdict, outcome);
  Decision d;
  d.allowed = outcome.allowed;
  if (outcome.allowed) {
    d.note = outcome.message;
  } else {
    d.message = outcome.message;
  }
  return d;
}

Result<safety::ApprovalSettings> ApprovalSettingsFromConfig(const Config& config) {
  safety::ApprovalSettings settings;
  settings.store_path = TalariaHome() + "/approvals.json";
  if (config.raw == nullptr) return settings;
  auto section = config.raw->find("approvals");
  if (section == config.raw->end() || section->is_null()) return settings;
  if (!section->is_object())
    return Err(InvalidArgumentError("config: approvals must be a mapping"));
  if (auto mode = section->find("mode"); mode != section->end()) {
    if (!mode->is_string())
      return Err(InvalidArgumentError("config: approvals.mode must be a string"));
    settings.mode = TALARIA_TRY(safety::ParseApprovalMode(mode->get<std::string>()));
  }
  if (auto list = section->find("allowlist"); list != section->end() && !list->is_null()) {
    if (!list->is_array())
      return Err(InvalidArgumentError("config: approvals.allowlist must be a list of rule ids"));
    for (const Json& rule : *list) {
      if (!rule.is_string())
        return Err(InvalidArgumentError("config: approvals.allowlist entries must be strings"));
      settings.allowlist.push_back(rule.get<std::string>());
    }
  }
  return settings;
}

namespace {

// Runtime::Create's default: the guard and config's approvals, with nobody to ask (an embedder
// that can ask a human installs its own prompter with InstallCommandPolicy).
Status InstallUnattendedCommandPolicy(Dispatcher& dispatcher, const Config& config) {
  return InstallCommandPolicy(dispatcher, config, nullptr);
}

// Registered when libtalaria loads: the tools module is always linked into it.
[[maybe_unused]] const bool kDefaultPolicyRegistered =
    (SetDefaultCommandPolicyInstaller(&InstallUnattendedCommandPolicy), true);

}  // namespace

Status InstallCommandPolicy(Dispatcher& dispatcher, const Config& config,
                            std::shared_ptr<safety::ApprovalPrompter> prompter) {
  safety::ApprovalSettings settings = TALARIA_TRY(ApprovalSettingsFromConfig(config));
  safety::GuardOptions guard;
  guard.home = ShellHome();
  guard.talaria_home = TalariaHome();
  dispatcher.SetPolicy(std::make_shared<CommandPolicy>(
      std::make_shared<safety::Approvals>(std::move(settings), std::move(prompter)),
      std::move(guard)));
  return {};
}

}  // namespace talaria::tools
