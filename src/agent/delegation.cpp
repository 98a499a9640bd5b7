// delegate_task: the Delegator runs a parent's children, each on a thread of its own, and turns
// each child's turn into the reference's per-task result entry.
#include "agent/delegation.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <set>
#include <stop_token>
#include <utility>

#include "agent/agent_impl.h"
#include "agent/text_util.h"
#include "talaria/base/random.h"
#include "talaria/base/strings.h"

namespace talaria::agent {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::string_view kDelegateTool = "delegate_task";
// How often a waiting parent looks at its cancel token and the clock.
constexpr std::chrono::milliseconds kWaitSlice{20};

[[maybe_unused]] const bool kSectionDeclared = (DeclareConfigSection("delegation"), true);

Status Bad(std::string_view key, std::string_view why) {
  return InvalidArgumentError("config.yaml: delegation." + std::string(key) + " " +
                              std::string(why));
}

Result<int> ReadCount(const Json& value, std::string_view key, int low, int high) {
  if (!value.is_number_integer() || value.get<int64_t>() < low || value.get<int64_t>() > high) {
    return Err(Bad(
        key, "must be a whole number from " + std::to_string(low) + " to " + std::to_string(high)));
  }
  return static_cast<int>(value.get<int64_t>());
}

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

double Rounded(double seconds) {
  return static_cast<double>(std::llround(seconds * 1000.0)) / 1000.0;
}

std::string StringField(const Json& object, std::string_view key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::vector<std::string> StringList(const Json& object, std::string_view key) {
  std::vector<std::string> out;
  auto it = object.find(key);
  if (it == object.end() || !it->is_array()) return out;
  for (const Json& v : *it) {
    if (v.is_string() && !Trim(v.get_ref<const std::string&>()).empty()) {
      out.emplace_back(Trim(v.get_ref<const std::string&>()));
    }
  }
  return out;
}

// The absolute, normalized form of a path a tool call named, relative to `cwd`.
std::string AbsolutePath(const std::string& path, const std::string& cwd) {
  std::filesystem::path p(path);
  if (p.is_relative() && !cwd.empty()) p = std::filesystem::path(cwd) / p;
  return p.lexically_normal().string();
}

// The paths of a history's successful calls of `tools` (their "path" argument).
std::set<std::string> PathsOfCalls(const std::vector<Message>& history,
                                   const std::vector<std::string_view>& tools,
                                   const std::string& cwd) {
  std::set<std::string> ok_ids;
  for (const Message& m : history) {
    if (m.role == Role::kTool && m.content.rfind("{\"error\"", 0) != 0)
      ok_ids.insert(m.tool_call_id);
  }
  std::set<std::string> out;
  for (const Message& m : history) {
    for (const ToolCall& call : m.tool_calls) {
      if (std::find(tools.begin(), tools.end(), call.name) == tools.end()) continue;
      if (ok_ids.count(call.id) == 0) continue;
      auto args = ParseJson(call.arguments);
      if (!args || !args->is_object()) continue;
      std::string path = StringField(*args, "path");
      if (!path.empty()) out.insert(AbsolutePath(path, cwd));
    }
  }
  return out;
}

// [{tool, args_bytes, result_bytes, status}], the calls paired with their results by id.
Json ToolTrace(const std::vector<Message>& history) {
  Json trace = Json::array();
  for (size_t i = 0; i < history.size(); ++i) {
    for (const ToolCall& call : history[i].tool_calls) {
      Json step = {{"tool", call.name}, {"args_bytes", call.arguments.size()}};
      for (size_t j = i + 1; j < history.size() && history[j].role == Role::kTool; ++j) {
        if (history[j].tool_call_id != call.id) continue;
        step["result_bytes"] = history[j].content.size();
        step["status"] = history[j].content.rfind("{\"error\"", 0) == 0 ? "error" : "ok";
        break;
      }
      if (!step.contains("status")) step["status"] = "unanswered";
      trace.push_back(std::move(step));
    }
  }
  return trace;
}

std::string LastAssistantText(const std::vector<Message>& history) {
  std::string last;
  for (const Message& m : history) {
    if (m.role == Role::kAssistant && !Trim(m.content).empty()) last = m.content;
  }
  return last;
}

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

std::string_view ExitReason(TurnExit exit) {
  switch (exit) {
    case TurnExit::kAnswered:
      return "completed";
    case TurnExit::kBudgetExhausted:
      return "max_iterations";
    case TurnExit::kModelFailed:
      return "model_failed";
    case TurnExit::kInterrupted:
      return "interrupted";
    case TurnExit::kHalted:
      return "halted";
  }
  return "completed";
}

}  // namespace

Result<DelegationSettings> DelegationSettingsFromConfig(const Config& config) {
  DelegationSettings s;
  if (!config.raw || !config.raw->is_object()) return s;
  auto section = config.raw->find("delegation");
  if (section == config.raw->end() || section->is_null()) return s;
  if (!section->is_object()) {
    return Err(InvalidArgumentError("config.yaml: delegation must be a mapping"));
  }
  for (const auto& [key, value] : section->items()) {
    if (key == "max_concurrent_children") {
      s.max_concurrent_children = TALARIA_TRY(ReadCount(value, key, 1, 16));
    } else if (key == "max_spawn_depth") {
      s.max_spawn_depth = TALARIA_TRY(ReadCount(value, key, 1, 2));
    } else if (key == "max_iterations") {
      s.max_iterations = TALARIA_TRY(ReadCount(value, key, 1, 10'000));
    } else if (key == "orchestrator_enabled") {
      if (!value.is_boolean()) return Err(Bad(key, "must be true or false"));
      s.orchestrator_enabled = value.get<bool>();
    } else if (key == "child_timeout_seconds") {
      if (!value.is_number() || value.get<double>() <= 0 || value.get<double>() > 86'400) {
        return Err(Bad(key, "must be a number of seconds above 0 (at most 86400)"));
      }
      s.child_timeout = std::chrono::milliseconds(
          std::max<int64_t>(1, static_cast<int64_t>(value.get<double>() * 1000.0)));
    } else if (key == "blocked_tools") {
      if (!value.is_array()) return Err(Bad(key, "must be a list of tool names"));
      s.blocked_tools.clear();
      for (const Json& v : value) {
        if (!v.is_string()) return Err(Bad(key, "must be a list of tool names"));
        s.blocked_tools.push_back(v.get<std::string>());
      }
    } else {
      return Err(Bad(key,
                     "is not a setting (max_concurrent_children, max_spawn_depth, "
                     "orchestrator_enabled, max_iterations, child_timeout_seconds, "
                     "blocked_tools)"));
    }
  }
  return s;
}

struct Delegator::Task {
  size_t index = 0;
  std::string id;  // sa-<index>-<hex>
  std::string goal;
  std::string context;
  std::vector<std::string> toolsets;
  bool orchestrator = false;
  bool background = false;
  std::set<std::string> parent_reads;  // files the parent had read, absolute
};

struct Delegator::ChildRun {
  Task task;
  std::stop_source stop;
  std::atomic<bool> timed_out{false};
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;  // Guarded by mu.
  Json entry;         // Guarded by mu; set when done.
  std::thread thread;
  Clock::time_point started;
};

Delegator::Delegator(AgentImpl& owner, DelegationSettings settings, int depth, bool may_delegate)
    : owner_(owner), settings_(std::move(settings)), depth_(depth), may_delegate_(may_delegate) {}

Delegator::~Delegator() { StopAll(); }

void Delegator::StopAll() {
  std::vector<std::shared_ptr<ChildRun>> runs;
  {
    std::lock_guard lock(mu_);
    runs.swap(runs_);
  }
  for (auto& run : runs) run->stop.request_stop();
  for (auto& run : runs) {
    if (run->thread.joinable()) run->thread.join();
  }
}

void Delegator::AddUsage(const Usage& usage, double cost) {
  std::lock_guard lock(mu_);
  usage_ += usage;
  cost_ += cost;
}

void Delegator::TakeUsage(Usage& usage, double& cost) {
  std::lock_guard lock(mu_);
  usage = usage_;
  cost = cost_;
  usage_ = Usage{};
  cost_ = 0;
}

void Delegator::PeekUsage(Usage& usage, double& cost) const {
  std::lock_guard lock(mu_);
  usage = usage_;
  cost = cost_;
}

std::string Delegator::TakeNotices() {
  std::lock_guard lock(mu_);
  return std::exchange(notices_, std::string());
}

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

std::shared_ptr<Delegator::ChildRun> Delegator::Start(Task task) {
  auto run = std::make_shared<ChildRun>();
  run->task = std::move(task);
  run->started = Clock::now();
  std::lock_guard lock(mu_);
  ++live_;
  runs_.push_back(run);
  run->thread = std::thread([this, run] {
    // The timeout: a watchdog stops the child; its turn then ends with what it had.
    std::mutex watch_mu;
    std::condition_variable_any watch_cv;
    std::stop_source watch_stop;
    std::thread watchdog([&, deadline = run->started + settings_.child_timeout] {
      std::unique_lock l(watch_mu);
      if (!watch_cv.wait_until(l, watch_stop.get_token(), deadline, [] { return false; }) &&
          !watch_stop.stop_requested()) {
        run->timed_out = true;
        run->stop.request_stop();
      }
    });
    Usage used;
    double cost = 0;
    Json entry = RunChild(run->task, *run, used, cost);
    watch_stop.request_stop();
    watchdog.join();
    {
      // The usage and the notice together: whoever sees the one sees the other.
      std::lock_guard l(mu_);
      --live_;
      usage_ += used;
      cost_ += cost;
      if (run->task.background) {
        notices_ += "\n\n[Background subagent " + run->task.id +
                    " finished. Its goal was: " + std::string(Utf8Prefix(run->task.goal, 300)) +
                    "\nResult: " + DumpJson(entry) + "]";
      }
    }
    // Last: once done is seen, this thread touches nothing of the delegator's, so it may be
    // joined under the delegator's lock.
    {
      std::lock_guard l(run->mu);
      run->entry = std::move(entry);
      run->done = true;
    }
    run->cv.notify_all();
  });
  return run;
}

Json Delegator::Wait(ChildRun& run, const std::stop_token& cancel) {
  // A child stopped (timeout or the parent's interrupt) ends its turn at once in practice; one
  // that does not within stop_grace is reported and left to end on its own (joined when the
  // parent goes): the parent never waits forever.
  const Clock::time_point timeout_at = run.started + settings_.child_timeout + settings_.stop_grace;
  std::optional<Clock::time_point> cancelled_at;
  std::unique_lock l(run.mu);
  while (!run.cv.wait_for(l, kWaitSlice, [&] { return run.done; })) {
    const Clock::time_point now = Clock::now();
    if (cancel.stop_requested() && !cancelled_at) cancelled_at = now;
    const bool stuck =
        now >= timeout_at || (cancelled_at && now >= *cancelled_at + settings_.stop_grace);
    if (!stuck) continue;
    Json entry = {
        {"task_index", run.task.index},
        {"status", cancelled_at ? "interrupted" : "timeout"},
        {"summary", ""},
        {"exit_reason", cancelled_at ? "interrupted" : "timeout"},
        {"duration_seconds", Rounded(Seconds(now - run.started))},
        {"error", "the subagent did not stop when told to; it was left to end on its own"}};
    return entry;
  }
  return run.entry;
}

ToolResult Delegator::StartBackground(Task task) {
  std::shared_ptr<ChildRun> run = Start(std::move(task));
  Json out = {{"status", "dispatched"},
              {"delegation_id", run->task.id},
              {"goal", run->task.goal},
              {"mode", "background"},
              {"note",
               "The subagent runs on its own. Its result arrives with a later tool result; do "
               "not wait or poll for it, carry on with other work."}};
  return ToolResult::FromJson(out);
}

ToolResult Delegator::Run(const Json& args, ToolContext& ctx) {
  const Clock::time_point started = Clock::now();
  if (!args.is_object()) return ToolResult::Error("delegate_task: arguments must be an object");
  // Depth: a leaf never delegates; an orchestrator only below the cap.
  if (depth_ >= settings_.max_spawn_depth || !may_delegate_) {
    return ToolResult::Error("delegate_task: this agent cannot delegate (depth " +
                             std::to_string(depth_) + ", delegation.max_spawn_depth " +
                             std::to_string(settings_.max_spawn_depth) +
                             (may_delegate_ ? "" : ", role leaf") + "); do the work yourself");
  }

  const bool background = args.value("background", false);
  std::vector<Task> tasks;
  const std::string top_role = StringField(args, "role");
  auto orchestrates = [&](const std::string& r) {
    return r == "orchestrator" && settings_.orchestrator_enabled &&
           depth_ + 1 < settings_.max_spawn_depth;
  };
  if (auto it = args.find("tasks"); it != args.end() && it->is_array() && !it->empty()) {
    if (background) {
      return ToolResult::Error(
          "delegate_task: background=true takes one goal, not tasks; dispatch them one at a time");
    }
    for (size_t i = 0; i < it->size(); ++i) {
      const Json& t = (*it)[i];
      if (!t.is_object())
        return ToolResult::Error("delegate_task: tasks[" + std::to_string(i) +
                                 "] must be an object");
      Task task;
      task.index = i;
      task.goal = std::string(Trim(StringField(t, "goal")));
      if (task.goal.empty()) {
        return ToolResult::Error("delegate_task: tasks[" + std::to_string(i) + "] has no goal");
      }
      task.context = StringField(t, "context");
      task.toolsets = StringList(t, "toolsets");
      std::string r = StringField(t, "role");
      task.orchestrator = orchestrates(r.empty() ? top_role : r);
      tasks.push_back(std::move(task));
    }
  } else {
    Task task;
    task.goal = std::string(Trim(StringField(args, "goal")));
    if (task.goal.empty()) {
      return ToolResult::Error("delegate_task: give a goal (one task) or tasks (a batch)");
    }
    task.context = StringField(args, "context");
    task.toolsets = StringList(args, "toolsets");
    task.orchestrator = orchestrates(top_role);
    task.background = background;
    tasks.push_back(std::move(task));
  }
  const int wanted = static_cast<int>(tasks.size());
  if (wanted > settings_.max_concurrent_children) {
    return ToolResult::Error("delegate_task: " + std::to_string(wanted) + " tasks, but at most " +
                             std::to_string(settings_.max_concurrent_children) +
                             " subagents run at once (delegation.max_concurrent_children); "
                             "send at most that many per call");
  }

  // What the parent has read, for the note on files a child changed under it.
  const std::set<std::string> reads =
      PathsOfCalls(owner_.request_.messages, {"read_file"}, owner_.cwd_);
  {
    std::lock_guard lock(mu_);
    // Reap background children that have finished.
    for (auto it = runs_.begin(); it != runs_.end();) {
      std::shared_ptr<Delegator::ChildRun>& r = *it;
      bool done;
      {
        std::lock_guard l(r->mu);
        done = r->done;
      }
      if (done && r->task.background) {
        if (r->thread.joinable()) r->thread.join();  // it has nothing left to do
        it = runs_.erase(it);
      } else {
        ++it;
      }
    }
    if (live_ + wanted > settings_.max_concurrent_children) {
      return ToolResult::Error("delegate_task: " + std::to_string(live_) +
                               " subagents of this agent are still running and at most " +
                               std::to_string(settings_.max_concurrent_children) +
                               " may run at once; wait for them or do the work yourself");
    }
    for (Task& t : tasks) t.id = "sa-" + std::to_string(next_id_++) + "-" + RandomHex(4);
  }
  for (Task& t : tasks) t.parent_reads = reads;

  if (background) return StartBackground(std::move(tasks.front()));

  std::vector<std::shared_ptr<Delegator::ChildRun>> runs;
  runs.reserve(tasks.size());
  for (Task& t : tasks) runs.push_back(Start(std::move(t)));
  // Interrupting the parent's turn stops every child of this call.
  std::stop_callback on_cancel(ctx.cancel, [&runs] {
    for (auto& r : runs) r->stop.request_stop();
  });

  Json results = Json::array();
  for (auto& r : runs) {
    Json entry = Wait(*r, ctx.cancel);
    results.push_back(std::move(entry));
  }
  {
    std::lock_guard lock(mu_);
    for (auto& r : runs) {
      bool done;
      {
        std::lock_guard l(r->mu);
        done = r->done;
      }
      // A child left behind stays in runs_: the destructor joins it.
      if (!done) continue;
      runs_.erase(std::remove(runs_.begin(), runs_.end(), r), runs_.end());
      if (r->thread.joinable()) r->thread.join();
    }
  }
  Json out = {{"results", std::move(results)},
              {"total_duration_seconds", Rounded(Seconds(Clock::now() - started))}};
  return ToolResult::FromJson(out);
}

}  // namespace talaria::agent
