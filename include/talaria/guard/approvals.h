// Approvals: what happens to a command the guard put in the "dangerous" tier. The mode comes
// from config (approvals.mode), never from environment variables:
//   deny       refuse (the default: nobody is known to be able to answer)
//   ask        ask the human through the front end's prompter; refuse when there is none
//   allowlist  allow rules listed in approvals.allowlist (or approved "always"), refuse others
//   yolo       allow the dangerous tier without asking (the hardline tier is still refused)
// Rules allowed in every mode: approvals.allowlist, answers "always" (kept in a JSON file
// beside the config), and answers "session" (for the rest of that session).
// Thread-safety: Approvals is thread-safe; prompts are serialized (one question at a time).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "talaria/base/status.h"
#include "talaria/guard/command_guard.h"

namespace talaria::safety {

enum class ApprovalMode : unsigned char { kDeny, kAsk, kAllowlist, kYolo };

Result<ApprovalMode> ParseApprovalMode(std::string_view name);
std::string_view ApprovalModeName(ApprovalMode mode);

enum class ApprovalAnswer : unsigned char { kOnce, kSession, kAlways, kDeny, kTimeout };

class ApprovalPrompter;

struct ApprovalRequest {
  std::string session;
  std::string tool;
  std::string command;
  std::vector<GuardReason> reasons;  // the dangerous ones still needing a decision
  // Who can answer for this call in particular (an MCP client that can elicit); preferred over
  // the process-wide prompter. Null: the process-wide one, if any.
  std::shared_ptr<ApprovalPrompter> prompter;
  // Nobody may be asked (a subagent's call): "ask" refuses as if no prompter were there.
  bool unattended = false;
};

// A front end's way to ask a human (a TTY prompt, MCP elicitation). Having one is the explicit
// statement that somebody can answer.
class ApprovalPrompter {
 public:
  virtual ~ApprovalPrompter() = default;
  virtual ApprovalAnswer Ask(const ApprovalRequest& request) = 0;
};

struct ApprovalSettings {
  ApprovalMode mode = ApprovalMode::kDeny;
  std::vector<std::string> allowlist;  // rule ids
  // Where "always" answers are kept (JSON array of rule ids); empty: not persisted.
  std::string store_path;
};

struct ApprovalOutcome {
  bool allowed = false;
  // "not_needed", "yolo", "allowlist", "session", "once", "always", "denied_by_user",
  // "timeout", "mode_deny", "no_human", "not_allowlisted", "hardline".
  std::string how;
  std::string message;  // the refusal the model reads, or the note on an approved command
};

class Approvals {
 public:
  Approvals(ApprovalSettings settings, std::shared_ptr<ApprovalPrompter> prompter);

  ApprovalOutcome Decide(const ApprovalRequest& request, const GuardVerdict& verdict);
  ApprovalMode mode() const { return settings_.mode; }

 private:
  bool AllowedLocked(std::string_view session, const std::vector<GuardReason>& reasons) const;
  void PersistLocked() const;

  const ApprovalSettings settings_;
  const std::shared_ptr<ApprovalPrompter> prompter_;
  mutable std::mutex mu_;
  std::set<std::string, std::less<>> permanent_;  // Guarded by mu_.
  std::map<std::string, std::set<std::string, std::less<>>, std::less<>>
      session_;           // Guarded by mu_.
  std::mutex prompt_mu_;  // one question at a time
};

}  // namespace talaria::safety
