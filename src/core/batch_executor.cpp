#include "talaria/core/batch_executor.h"

#include <algorithm>
#include <thread>

#include "talaria/base/executor.h"
#include "talaria/core/budget.h"

namespace talaria {
namespace {

using SteadyClock = std::chrono::steady_clock;

// How long a worker waits for the call before it to start (the original's gate: 120 s); on
// expiry it goes ahead out of order rather than hang.
constexpr std::chrono::seconds kStartOrderGateTimeout{120};

}  // namespace

struct Batch::CallState {
  std::stop_source stop;
};

// The calls of one parallel segment, shared with the pool tasks that help run them: a task that
// starts only after every call was claimed finds nothing to do and never touches the Batch.
struct Batch::SegmentRun {
  explicit SegmentRun(size_t n) : size(n) {}
  const size_t size;
  std::atomic<size_t> next{0};
  std::mutex mu;
  std::condition_variable finished;
  size_t done = 0;  // Guarded by mu.
};

namespace {

Executor& BatchPool() {
  static Executor pool(kBatchPoolWorkers);
  return pool;
}

}  // namespace

std::string BatchCallId(const BatchCall& call, size_t index) {
  return call.id.empty() ? "call_" + std::to_string(index) : call.id;
}

BatchPlan PlanBatchCalls(std::span<const BatchCall> calls, const Registry& registry,
                         std::string_view cwd) {
  std::vector<PlannedCall> planned;
  planned.reserve(calls.size());
  for (const BatchCall& c : calls) planned.push_back({c.name, c.arguments, cwd});
  return PlanBatchDetailed(planned, registry);
}

std::string BatchCwd(const ToolContext& ctx) {
  return ctx.services ? ctx.services->cwd() : std::string();
}

Batch::Batch(const Dispatcher& dispatcher, std::vector<BatchCall> calls, BatchOptions options)
    : dispatcher_(dispatcher),
      calls_(std::move(calls)),
      options_(std::move(options)),
      states_(std::make_unique<CallState[]>(calls_.size())) {}

Batch::~Batch() = default;

void Batch::Cancel() {
  for (size_t i = 0; i < calls_.size(); ++i) states_[i].stop.request_stop();
}

void Batch::CancelCall(size_t index) {
  if (index < calls_.size()) states_[index].stop.request_stop();
}

void Batch::Tell(BatchEvent::Kind kind, size_t index) const {
  if (!options_.on_event) return;
  BatchEvent event;
  event.kind = kind;
  event.index = index;
  event.name = calls_[index].name;
  if (kind == BatchEvent::Kind::kFinished) event.result = &results_[index];
  options_.on_event(event);
}

std::vector<ToolResult> Batch::Run(const ToolContext& base) {
  results_.assign(calls_.size(), ToolResult{});
  batch_deadline_ = base.deadline;
  if (options_.batch_timeout.count() > 0)
    batch_deadline_ = std::min(batch_deadline_, SteadyClock::now() + options_.batch_timeout);
  std::stop_callback cancel_all(base.cancel, [this] { Cancel(); });

  const BatchPlan plan = PlanBatchCalls(calls_, dispatcher_.registry(), BatchCwd(base));
  for (const PlannedSegment& segment : plan.segments) RunSegment(segment, base);

  std::vector<std::string> ids;
  ids.reserve(calls_.size());
  std::vector<TurnResult> turn;
  turn.reserve(calls_.size());
  for (size_t i = 0; i < calls_.size(); ++i) {
    ids.push_back(BatchCallId(calls_[i], i));
    auto entry = dispatcher_.registry().Resolve(calls_[i].name);
    turn.push_back({calls_[i].name, ids.back(), &results_[i], entry && entry->never_spill()});
  }
  EnforceTurnBudget(dispatcher_.options().budget, turn);
  return std::move(results_);
}

void Batch::RunSegment(const PlannedSegment& segment, const ToolContext& base) {
  const size_t size = segment.calls.size();
  const size_t workers =
      std::min({std::max<size_t>(options_.max_workers, 1), size, kMaxBatchWorkers});
  if (!segment.parallel || workers < 2) {
    for (size_t index : segment.calls) RunCall(index, base, {});
    return;
  }
  {
    std::lock_guard lock(gate_mu_);
    next_to_start_ = 0;
  }
  auto run = std::make_shared<SegmentRun>(size);
  // Copied into each pool task: only the shared run is touched before a call is claimed.
  auto work = [this, run, calls = segment.calls.data(), &base] {
    for (size_t k = run->next.fetch_add(1); k < run->size; k = run->next.fetch_add(1)) {
      {
        // Calls start in call order even though workers race for them: call k waits until
        // call k-1 has started.
        std::unique_lock lock(gate_mu_);
        gate_cv_.wait_for(lock, kStartOrderGateTimeout, [&] { return next_to_start_ >= k; });
      }
      RunCall(calls[k], base, [this, k] {
        {
          std::lock_guard lock(gate_mu_);
          next_to_start_ = std::max(next_to_start_, k + 1);
        }
        gate_cv_.notify_all();
      });
      {
        std::lock_guard lock(run->mu);
        ++run->done;
      }
      run->finished.notify_all();
    }
  };
  // The calling thread is the first worker; the pool lends the rest. A busy pool only means
  // fewer helpers: the caller claims whatever they have not.
  for (size_t w = 1; w < workers; ++w) {
    if (!BatchPool().Post(work)) break;
  }
  work();
  std::unique_lock lock(run->mu);
  run->finished.wait(lock, [&] { return run->done == run->size; });
}

void Batch::RunCall(size_t index, const ToolContext& base, const std::function<void()>& started) {
  const BatchCall& call = calls_[index];
  CallState& state = states_[index];
  ToolContext ctx = base;
  ctx.call_id = BatchCallId(call, index);
  ctx.cancel = state.stop.get_token();

  const auto now = SteadyClock::now();
  if (state.stop.stop_requested() || now >= batch_deadline_) {
    const char* why =
        state.stop.stop_requested() ? "the batch was cancelled" : "the batch deadline passed";
    std::string message = "Tool execution cancelled before " + call.name + " started: ";
    message += why;
    if (started) started();
    results_[index] =
        dispatcher_.Conclude(call.name, call.arguments, ctx,
                             ToolResult::Error(message, CallStatus::kCancelled, "cancelled"));
    Tell(BatchEvent::Kind::kFinished, index);
    return;
  }
  SteadyClock::time_point deadline = batch_deadline_;
  if (options_.call_timeout.count() > 0) deadline = std::min(deadline, now + options_.call_timeout);
  ctx.deadline = deadline;
  // At the deadline the call's token fires, so a handler that only polls its token still stops
  // (and its children die) on time; the dispatcher then reports the call timed out.
  const uint64_t alarm =
      deadline == SteadyClock::time_point::max() ? 0 : BatchPool().SetAlarm(deadline, state.stop);
  Tell(BatchEvent::Kind::kStarted, index);
  if (started) started();
  results_[index] = dispatcher_.Dispatch(call.name, call.arguments, ctx);
  if (alarm != 0) (void)BatchPool().CancelAlarm(alarm);
  Tell(BatchEvent::Kind::kFinished, index);
}

}  // namespace talaria
