// delegate_task: the Delegator starts a parent's children, each on a thread of its own, waits
// for them within their timeouts, and keeps the background ones' results and everyone's usage.
// A child's own run and result entry: delegation_child.cpp; the config: delegation_settings.cpp.
#include "agent/delegation.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <optional>
#include <set>
#include <stop_token>
#include <utility>

#include "agent/agent_impl.h"
#include "agent/delegation_history.h"
#include "agent/delegation_run.h"
#include "agent/text_util.h"
#include "talaria/base/random.h"
#include "talaria/base/strings.h"

namespace talaria::agent {
namespace {

// How often a waiting parent looks at its cancel token and the clock.
constexpr std::chrono::milliseconds kWaitSlice{20};

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

}  // namespace

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