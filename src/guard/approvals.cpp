#include "talaria/guard/approvals.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "talaria/base/file_io.h"
#include "talaria/base/json.h"
#include "talaria/base/log.h"

namespace talaria::safety {
namespace {

std::string Describe(const std::vector<GuardReason>& reasons) {
  std::string out;
  for (const GuardReason& r : reasons) {
    if (out.find(r.description) != std::string::npos) continue;
    if (!out.empty()) out += "; ";
    out += r.description;
  }
  return out;
}

std::string Rules(const std::vector<GuardReason>& reasons) {
  std::string out;
  for (const GuardReason& r : reasons) {
    if (("," + out + ",").find("," + r.rule + ",") != std::string::npos) continue;
    if (!out.empty()) out += ",";
    out += r.rule;
  }
  return out;
}

constexpr std::string_view kDoNotRetry =
    " Do NOT retry this command and do NOT rephrase it to get around the check; tell the user what "
    "you wanted "
    "to do instead.";

ApprovalOutcome Refuse(std::string how, std::string message) {
  return {false, std::move(how), std::move(message) + std::string(kDoNotRetry)};
}

std::set<std::string, std::less<>> LoadStore(const std::string& path) {
  std::set<std::string, std::less<>> out;
  if (path.empty()) return out;
  std::ifstream in(path);
  if (!in) return out;
  std::stringstream text;
  text << in.rdbuf();
  auto parsed = ParseJson(text.str());
  if (!parsed || !parsed->is_array()) {
    LogWarn("ignoring unreadable approvals file " + path);
    return out;
  }
  for (const Json& rule : *parsed) {
    if (rule.is_string()) out.insert(rule.get<std::string>());
  }
  return out;
}

}  // namespace

Result<ApprovalMode> ParseApprovalMode(std::string_view name) {
  if (name == "deny") return ApprovalMode::kDeny;
  if (name == "ask") return ApprovalMode::kAsk;
  if (name == "allowlist") return ApprovalMode::kAllowlist;
  if (name == "yolo") return ApprovalMode::kYolo;
  return Err(
      InvalidArgumentError("approvals.mode must be one of deny, ask, allowlist, yolo (got '" +
                           std::string(name) + "')"));
}

std::string_view ApprovalModeName(ApprovalMode mode) {
  switch (mode) {
    case ApprovalMode::kDeny:
      return "deny";
    case ApprovalMode::kAsk:
      return "ask";
    case ApprovalMode::kAllowlist:
      return "allowlist";
    case ApprovalMode::kYolo:
      return "yolo";
  }
  return "deny";
}

Approvals::Approvals(ApprovalSettings settings, std::shared_ptr<ApprovalPrompter> prompter)
    : settings_(std::move(settings)),
      prompter_(std::move(prompter)),
      permanent_(LoadStore(settings_.store_path)) {
  permanent_.insert(settings_.allowlist.begin(), settings_.allowlist.end());
}

bool Approvals::AllowedLocked(std::string_view session,
                              const std::vector<GuardReason>& reasons) const {
  const auto in_session = session_.find(session);
  for (const GuardReason& r : reasons) {
    if (permanent_.contains(r.rule)) continue;
    if (in_session != session_.end() && in_session->second.contains(r.rule)) continue;
    return false;
  }
  return true;
}

void Approvals::PersistLocked() const {
  if (settings_.store_path.empty()) return;
  Json rules = Json::array();
  for (const std::string& rule : permanent_) rules.push_back(rule);
  // Replaced whole: a crash never leaves a truncated list.
  std::string text = rules.dump(2);
  text += '\n';
  if (Status s = WriteFileAtomic(settings_.store_path, text); !s.ok()) {
    LogWarn("could not save approvals: " + s.message());
  }
}

ApprovalOutcome Approvals::Decide(const ApprovalRequest& request, const GuardVerdict& verdict) {
  if (verdict.decision == GuardDecision::kAllow) return {true, "not_needed", ""};
  if (verdict.decision == GuardDecision::kBlock) {
    std::vector<GuardReason> hard;
    for (const GuardReason& r : verdict.reasons) {
      if (r.tier == GuardTier::kHardline) hard.push_back(r);
    }
    return Refuse("hardline",
                  "BLOCKED: " + Describe(hard.empty() ? verdict.reasons : hard) +
                      ". This command can never run through the agent, in any approval mode.");
  }
  const std::string what = Describe(request.reasons);
  {
    std::lock_guard lock(mu_);
    if (AllowedLocked(request.session, request.reasons)) return {true, "allowlist", ""};
  }
  switch (settings_.mode) {
    case ApprovalMode::kYolo:
      return {true, "yolo", ""};
    case ApprovalMode::kDeny:
      return Refuse(
          "mode_deny",
          "BLOCKED: this command needs a human's approval (" + what +
              ") and approvals.mode is 'deny'. The user can allow it with approvals.allowlist: [" +
              Rules(request.reasons) + "] in config.yaml.");
    case ApprovalMode::kAllowlist:
      return Refuse("not_allowlisted", "BLOCKED: this command needs approval (" + what +
                                           ") and its rule is not in approvals.allowlist (" +
                                           Rules(request.reasons) + ").");
    case ApprovalMode::kAsk:
      break;
  }
  const std::shared_ptr<ApprovalPrompter>& prompter =
      request.prompter ? request.prompter : prompter_;
  if (request.unattended) {
    return Refuse("no_human", "BLOCKED: this command needs a human's approval (" + what +
                                  ") and this subagent runs without one; ask the parent agent "
                                  "to run it.");
  }
  if (prompter == nullptr) {
    return Refuse("no_human", "BLOCKED: this command needs a human's approval (" + what +
                                  ") and nobody is available to answer.");
  }
  ApprovalAnswer answer;
  {
    std::lock_guard prompt(prompt_mu_);
    {
      // Another prompt may have allowed the same rules while this one waited.
      std::lock_guard lock(mu_);
      if (AllowedLocked(request.session, request.reasons)) return {true, "session", ""};
    }
    answer = prompter->Ask(request);
  }
  const std::string approved_note =
      "Command required approval (" + what + ") and was approved by the user.";
  std::lock_guard lock(mu_);
  switch (answer) {
    case ApprovalAnswer::kOnce:
      return {true, "once", approved_note};
    case ApprovalAnswer::kSession:
      for (const GuardReason& r : request.reasons) session_[request.session].insert(r.rule);
      return {true, "session", approved_note};
    case ApprovalAnswer::kAlways:
      for (const GuardReason& r : request.reasons) permanent_.insert(r.rule);
      PersistLocked();
      return {true, "always", approved_note};
    case ApprovalAnswer::kTimeout:
      return Refuse("timeout", "BLOCKED: nobody answered the approval request for this command (" +
                                   what + ").");
    case ApprovalAnswer::kDeny:
      break;
  }
  return Refuse("denied_by_user", "BLOCKED: the user denied this command (" + what + ").");
}

}  // namespace talaria::safety
