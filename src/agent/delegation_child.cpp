// One subagent's run: its tools, its prompt, its turn, and the per-task result entry the
// parent gets back (Delegator::RunChild).
#include <algorithm>
#include <memory>
#include <utility>

#include "agent/agent_impl.h"
#include "agent/delegation.h"
#include "agent/delegation_history.h"
#include "agent/delegation_run.h"
#include "agent/text_util.h"
#include "talaria/base/strings.h"

namespace talaria::agent {
namespace {

constexpr std::string_view kDelegateTool = "delegate_task";

std::string ChildPrompt(const std::string& goal, const std::string& context,
                        const std::string& workspace, bool orchestrator, int depth,
                        const DelegationSettings& settings) {
  std::string p =
      "You are a focused subagent: a parent agent handed you one task. Work on it alone with "
      "the tools you have; nobody can answer questions, so decide for yourself and say what "
      "you assumed.\n\nYOUR TASK:\n";
  p += goal;
  if (!Trim(context).empty()) {
    p += "\n\nCONTEXT:\n";
    p += context;
  }
  if (!workspace.empty()) {
    p += "\n\nWORKSPACE PATH:\n";
    p += workspace;
    p += "\nUse this path; never assume others such as /workspace.";
  }
  p += "\n\nWhen you are done, answer with a summary for the parent: what you did, what you "
       "found, the files you created or changed (absolute paths), and any problems. Only that "
       "summary reaches the parent.";
  if (orchestrator) {
    p += "\n\nYou are an orchestrator (depth " + std::to_string(depth) + " of at most " +
         std::to_string(settings.max_spawn_depth) +
         "): you may hand independent parts of your task to workers with delegate_task, at "
         "most " +
         std::to_string(settings.max_concurrent_children) +
         " at once. Your workers cannot delegate further. Do small things yourself.";
  }
  return p;
}

}  // namespace

Json Delegator::RunChild(const Task& task, ChildRun& run, Usage& used, double& cost) {
  const Clock::time_point started = Clock::now();
  const ModelSettings& model = owner_.model_;
  Json entry = {{"task_index", task.index},
                {"status", "error"},
                {"summary", ""},
                {"api_calls", 0},
                {"duration_seconds", 0},
                {"model", model.model},
                {"exit_reason", "error"},
                {"tokens", {{"input", 0}, {"output", 0}}},
                {"tool_trace", Json::array()}};
  if (task.background) entry["delegation_id"] = task.id;
  auto fail = [&](std::string error) {
    entry["error"] = std::move(error);
    entry["duration_seconds"] = Rounded(Seconds(Clock::now() - started));
    return entry;
  };

  // The child's tools: what it asked for ∩ what the parent offers, minus the blocked ones (an
  // orchestrator keeps delegate_task).
  ChildRole role;
  role.parent_session_id = owner_.session_id_;
  role.depth = depth_ + 1;
  role.may_delegate = task.orchestrator;
  for (const std::string& name : owner_.offered_) {
    const bool blocked = std::find(settings_.blocked_tools.begin(), settings_.blocked_tools.end(),
                                   name) != settings_.blocked_tools.end();
    if (!blocked || (name == kDelegateTool && role.may_delegate))
      role.allowed_tools.push_back(name);
  }

  AgentOptions options;
  options.roots = owner_.options_.roots;
  if (options.roots.empty() && !owner_.cwd_.empty()) options.roots = {owner_.cwd_};
  options.toolsets = task.toolsets.empty() ? owner_.options_.toolsets : task.toolsets;
  if (role.may_delegate && !options.toolsets.empty()) options.toolsets.emplace_back("delegation");
  options.max_iterations = settings_.max_iterations;
  options.compression_threshold = owner_.options_.compression_threshold;
  options.compaction_tail_ratio = owner_.options_.compaction_tail_ratio;
  options.reserved_output_tokens = owner_.options_.reserved_output_tokens;
  options.load_context_files = false;
  options.config_path = owner_.options_.config_path;
  options.runtime = owner_.runtime_;
  options.enable_code_execution = false;
  options.extra_system_prompt =
      ChildPrompt(task.goal, task.context, owner_.cwd_, role.may_delegate, role.depth, settings_);

  auto client = ModelClient::Open(model);
  if (!client) return fail("the subagent could not start: " + client.error().message());
  auto child =
      std::make_unique<AgentImpl>(std::move(options), model, owner_.store_, std::move(*client));
  child->child_ = std::make_unique<ChildRole>(std::move(role));
  if (Status s = child->Init(); !s.ok()) {
    return fail("the subagent could not start: " + s.message());
  }
  entry["session_id"] = child->session_id();

  TurnResult r = child->RunTurn(task.goal, nullptr, run.stop.get_token());

  const bool timed_out = run.timed_out.load();
  const std::vector<Message>& history = child->request_.messages;
  std::string summary = r.text;
  if (Trim(summary).empty()) summary = LastAssistantText(history);
  std::string status = "completed";
  std::string exit_reason(ExitReason(r.exit));
  switch (r.exit) {
    case TurnExit::kAnswered:
    case TurnExit::kBudgetExhausted:
      if (Trim(summary).empty()) {
        status = "failed";
        entry["error"] = "the subagent ended without a summary";
      }
      break;
    case TurnExit::kModelFailed:
    case TurnExit::kHalted:
      status = "failed";
      entry["error"] = r.error;
      break;
    case TurnExit::kInterrupted:
      status = timed_out ? "timeout" : "interrupted";
      if (timed_out) {
        exit_reason = "timeout";
        entry["error"] = "the subagent was stopped after " +
                         std::to_string(settings_.child_timeout.count() / 1000.0).substr(0, 5) +
                         " s (delegation.child_timeout_seconds); the summary is what it had";
      }
      break;
  }
  entry["status"] = status;
  entry["summary"] = summary;
  entry["exit_reason"] = exit_reason;
  entry["api_calls"] = r.api_calls;
  entry["tokens"] = {{"input", r.usage.input_tokens}, {"output", r.usage.output_tokens}};
  entry["tool_trace"] = ToolTrace(history);

  std::vector<std::string> changed;
  for (const std::string& path : PathsOfCalls(history, {"write_file", "patch"}, child->cwd_)) {
    if (task.parent_reads.count(path) != 0) changed.push_back(path);
  }
  if (!changed.empty()) {
    entry["note"] = "This subagent changed files you read earlier: " + Join(changed, ", ") +
                    ". Read them again before relying on what you saw.";
  }

  (void)owner_.store_->EndSession(child->session_id(), status);
  // The child's usage, its own children's included, is the parent's too (added with the
  // result, in Start).
  used = child->SessionUsage();
  cost = child->SessionCostUsd();
  child.reset();  // its processes end with its tool session
  entry["duration_seconds"] = Rounded(Seconds(Clock::now() - started));
  return entry;
}

}  // namespace talaria::agent
