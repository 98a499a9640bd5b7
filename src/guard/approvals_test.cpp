// Approval decisions in every mode, with a scripted prompter standing in for the human.
#include "talaria/guard/approvals.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

namespace talaria::safety {
namespace {

class ScriptedPrompter : public ApprovalPrompter {
 public:
  explicit ScriptedPrompter(ApprovalAnswer answer) : answer_(answer) {}
  ApprovalAnswer Ask(const ApprovalRequest& request) override {
    ++asked;
    last = request;
    last.prompter.reset();  // the request may carry this very prompter: keeping it is a cycle
    return answer_;
  }
  int asked = 0;
  ApprovalRequest last;

 private:
  ApprovalAnswer answer_;
};

GuardVerdict Dangerous(const std::string& rule) {
  GuardVerdict v;
  v.decision = GuardDecision::kApprove;
  v.tier = GuardTier::kDangerous;
  v.reasons.push_back({rule, "a " + rule, "cmd", GuardTier::kDangerous});
  return v;
}

ApprovalRequest RequestFor(const GuardVerdict& v, std::string session = "s1") {
  return {std::move(session), "terminal", "cmd", v.reasons, nullptr};
}

TEST(Approvals, HardlineIsRefusedInEveryModeWithoutAsking) {
  GuardVerdict v;
  v.decision = GuardDecision::kBlock;
  v.tier = GuardTier::kHardline;
  v.reasons.push_back(
      {"recursive_delete_root", "recursive delete of /", "rm -rf /", GuardTier::kHardline});
  for (ApprovalMode mode :
       {ApprovalMode::kDeny, ApprovalMode::kAsk, ApprovalMode::kAllowlist, ApprovalMode::kYolo}) {
    auto prompter = std::make_shared<ScriptedPrompter>(ApprovalAnswer::kAlways);
    Approvals approvals({mode, {"recursive_delete_root"}, ""}, prompter);
    ApprovalOutcome o = approvals.Decide(RequestFor(v), v);
    EXPECT_FALSE(o.allowed) << ApprovalModeName(mode);
    EXPECT_EQ(o.how, "hardline");
    EXPECT_NE(o.message.find("Do NOT retry"), std::string::npos);
    EXPECT_EQ(prompter->asked, 0);
  }
}

TEST(Approvals, DenyIsTheDefaultAndNamesTheRuleToAllow) {
  Approvals approvals({}, nullptr);
  ApprovalOutcome o =
      approvals.Decide(RequestFor(Dangerous("git_force_push")), Dangerous("git_force_push"));
  EXPECT_FALSE(o.allowed);
  EXPECT_EQ(o.how, "mode_deny");
  EXPECT_NE(o.message.find("git_force_push"), std::string::npos);
}

TEST(Approvals, AskWithoutAHumanRefuses) {
  Approvals approvals({ApprovalMode::kAsk, {}, ""}, nullptr);
  EXPECT_EQ(approvals.Decide(RequestFor(Dangerous("x")), Dangerous("x")).how, "no_human");
}

TEST(Approvals, TheCallsOwnPrompterAnswersBeforeTheProcessWideOne) {
  // An MCP client that can elicit answers for its call; elsewhere the process-wide prompter.
  auto global = std::make_shared<ScriptedPrompter>(ApprovalAnswer::kDeny);
  auto call = std::make_shared<ScriptedPrompter>(ApprovalAnswer::kOnce);
  Approvals approvals({ApprovalMode::kAsk, {}, ""}, global);
  ApprovalRequest request = RequestFor(Dangerous("x"));
  request.prompter = call;
  EXPECT_EQ(approvals.Decide(request, Dangerous("x")).how, "once");
  EXPECT_EQ(call->asked, 1);
  EXPECT_EQ(global->asked, 0);
  Approvals nobody({ApprovalMode::kAsk, {}, ""}, nullptr);
  EXPECT_EQ(nobody.Decide(request, Dangerous("x")).how, "once");
  Approvals deny({ApprovalMode::kDeny, {}, ""}, nullptr);
  EXPECT_EQ(deny.Decide(request, Dangerous("x")).how, "mode_deny") << "the deny default never asks";
}

TEST(Approvals, AnUnattendedCallIsNeverAskedAbout) {
  // A subagent's call: even in ask mode with a prompter, nobody is asked and it is refused.
  auto global = std::make_shared<ScriptedPrompter>(ApprovalAnswer::kOnce);
  Approvals approvals({ApprovalMode::kAsk, {}, ""}, global);
  ApprovalRequest request = RequestFor(Dangerous("x"));
  request.unattended = true;
  ApprovalOutcome o = approvals.Decide(request, Dangerous("x"));
  EXPECT_FALSE(o.allowed);
  EXPECT_EQ(o.how, "no_human");
  EXPECT_EQ(global->asked, 0);
  Approvals yolo({ApprovalMode::kYolo, {}, ""}, nullptr);
  EXPECT_TRUE(yolo.Decide(request, Dangerous("x")).allowed) << "the configured policy still holds";
}

TEST(Approvals, YoloAllowsTheDangerousTier) {
  Approvals approvals({ApprovalMode::kYolo, {}, ""}, nullptr);
  ApprovalOutcome o = approvals.Decide(RequestFor(Dangerous("x")), Dangerous("x"));
  EXPECT_TRUE(o.allowed);
  EXPECT_EQ(o.how, "yolo");
}

TEST(Approvals, AllowlistModeAllowsOnlyListedRules) {
  Approvals approvals({ApprovalMode::kAllowlist, {"git_reset_hard"}, ""}, nullptr);
  EXPECT_TRUE(approvals.Decide(RequestFor(Dangerous("git_reset_hard")), Dangerous("git_reset_hard"))
                  .allowed);
  EXPECT_EQ(approvals.Decide(RequestFor(Dangerous("chmod_world")), Dangerous("chmod_world")).how,
            "not_allowlisted");
}

TEST(Approvals, AnswersOnceSessionAndDeny) {
  auto once = std::make_shared<ScriptedPrompter>(ApprovalAnswer::kOnce);
  Approvals a({ApprovalMode::kAsk, {}, ""}, once);
  const GuardVerdict v = Dangerous("pipe_to_shell");
  ApprovalOutcome o = a.Decide(RequestFor(v), v);
  EXPECT_TRUE(o.allowed);
  EXPECT_EQ(o.message, "Command required approval (a pipe_to_shell) and was approved by the user.");
  a.Decide(RequestFor(v), v);
  EXPECT_EQ(once->asked, 2) << "once means once";

  auto session = std::make_shared<ScriptedPrompter>(ApprovalAnswer::kSession);
  Approvals b({ApprovalMode::kAsk, {}, ""}, session);
  EXPECT_TRUE(b.Decide(RequestFor(v), v).allowed);
  EXPECT_EQ(b.Decide(RequestFor(v), v).how, "allowlist");
  EXPECT_EQ(session->asked, 1);
  b.Decide(RequestFor(v, "other-session"), v);
  EXPECT_EQ(session->asked, 2) << "a session approval stays in its session";

  auto deny = std::make_shared<ScriptedPrompter>(ApprovalAnswer::kDeny);
  Approvals c({ApprovalMode::kAsk, {}, ""}, deny);
  EXPECT_EQ(c.Decide(RequestFor(v), v).how, "denied_by_user");
  auto timeout = std::make_shared<ScriptedPrompter>(ApprovalAnswer::kTimeout);
  Approvals d({ApprovalMode::kAsk, {}, ""}, timeout);
  EXPECT_EQ(d.Decide(RequestFor(v), v).how, "timeout");
}

TEST(Approvals, AlwaysIsPersistedAndReloaded) {
  std::string tmpl = (std::filesystem::temp_directory_path() / "talaria-approvals-XXXXXX").string();
  ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
  const std::string store = tmpl + "/approvals.json";
  const GuardVerdict v = Dangerous("docker_stop");
  {
    auto always = std::make_shared<ScriptedPrompter>(ApprovalAnswer::kAlways);
    Approvals a({ApprovalMode::kAsk, {}, store}, always);
    EXPECT_TRUE(a.Decide(RequestFor(v), v).allowed);
  }
  auto never_asked = std::make_shared<ScriptedPrompter>(ApprovalAnswer::kDeny);
  Approvals reloaded({ApprovalMode::kDeny, {}, store}, never_asked);
  EXPECT_EQ(reloaded.Decide(RequestFor(v), v).how, "allowlist");
  EXPECT_EQ(never_asked->asked, 0);
  // A corrupt store is ignored, not fatal.
  std::ofstream(store) << "{not json";
  Approvals corrupt({ApprovalMode::kDeny, {}, store}, nullptr);
  EXPECT_FALSE(corrupt.Decide(RequestFor(v), v).allowed);
  std::filesystem::remove_all(tmpl);
}

TEST(Approvals, ModeNamesParse) {
  EXPECT_EQ(*ParseApprovalMode("ask"), ApprovalMode::kAsk);
  EXPECT_FALSE(ParseApprovalMode("off"));
}

}  // namespace
}  // namespace talaria::safety
