// Batch executor: runs one model turn's tool calls — planned into segments by the batch planner —
// and returns exactly one result per call, in call order.
//
//   talaria::Batch batch(dispatcher, calls);
//   std::vector<talaria::ToolResult> results = batch.Run(session->NewContext("turn_3"));
//
// - A parallel segment runs on at most `max_workers` threads: the calling thread plus threads
//   lent by a persistent pool, all done before the next segment starts; sequential stretches
//   run on the calling thread. Workers enter the dispatcher in call order (a start-order gate),
//   so prompts appear in order. A batch run from inside a batch call never deadlocks: the
//   calling thread claims every call no pool thread has.
// - Deadlines: the batch's (default 420 s, the original's) and optionally one per call, counted
//   from the call's start. When one passes, the call's cancel token fires (the pool's alarm
//   thread: no thread per deadline): the handler stops, its child processes are killed, and
//   the call ends timed out.
// - Cancel() / CancelCall(i), or the base context's token, stop running calls the same way; a
//   call that never started gets a cancelled result. Every call — started or not — goes through
//   the dispatcher's post hooks exactly once.
// - When every call is done the per-turn result budget is applied to the batch's results.
// No thread outlives Run: handlers are cooperative (they poll their token) and every worker is
// joined.
// Thread-safety: Run once, from one thread; Cancel, CancelCall and the plan are thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "talaria/core/batch_planner.h"
#include "talaria/core/dispatcher.h"
#include "talaria/core/tool_context.h"
#include "talaria/core/tool_result.h"

namespace talaria {

inline constexpr std::chrono::seconds kDefaultBatchTimeout{420};
inline constexpr size_t kDefaultBatchWorkers = 8;
// Parallel calls beyond the calling thread borrow threads of one process-wide pool of this size
// (started on first use, joined at exit), so a batch costs no thread creation.
inline constexpr size_t kBatchPoolWorkers = 15;
inline constexpr size_t kMaxBatchWorkers = kBatchPoolWorkers + 1;

struct BatchCall {
  std::string name;
  std::string arguments;  // the model's JSON text
  std::string id;         // the model's tool_call id; empty: "call_<index>"
};

// The id a call's result carries: the model's, or "call_<index>" when it gave none.
std::string BatchCallId(const BatchCall& call, size_t index);

// Told from worker threads as calls start and finish (the CLI's progress line); must be
// thread-safe and quick.
struct BatchEvent {
  enum class Kind : unsigned char { kStarted, kFinished };
  Kind kind = Kind::kStarted;
  size_t index = 0;
  std::string_view name;
  const ToolResult* result = nullptr;  // kFinished only
};

struct BatchOptions {
  size_t max_workers = kDefaultBatchWorkers;  // at most kMaxBatchWorkers are used
  // <= 0: no batch deadline.
  std::chrono::milliseconds batch_timeout = kDefaultBatchTimeout;
  // <= 0: a call is bounded by the batch deadline only.
  std::chrono::milliseconds call_timeout{0};
  std::function<void(const BatchEvent&)> on_event;
};

// The plan Run follows for `calls`, with paths resolved against `cwd` (empty: the process's).
BatchPlan PlanBatchCalls(std::span<const BatchCall> calls, const Registry& registry,
                         std::string_view cwd);

// The cwd a batch run with `ctx` plans against: its workspace's, or empty.
std::string BatchCwd(const ToolContext& ctx);

class Batch {
 public:
  Batch(const Dispatcher& dispatcher, std::vector<BatchCall> calls, BatchOptions options = {});
  ~Batch();
  Batch(const Batch&) = delete;
  Batch& operator=(const Batch&) = delete;

  const std::vector<BatchCall>& calls() const { return calls_; }

  // Runs the batch; blocks until every call has its result. `base` supplies the session (ids,
  // workspace, environment, processes); its cancel token cancels the whole batch and its
  // deadline, when earlier, bounds the batch. Call once.
  std::vector<ToolResult> Run(const ToolContext& base);

  // Stops every running call and every call not yet started. Any thread, any time.
  void Cancel();
  // Stops one call (an index into calls()); out of range is ignored.
  void CancelCall(size_t index);

 private:
  struct CallState;
  struct SegmentRun;
  void RunSegment(const PlannedSegment& segment, const ToolContext& base);
  // `started` (may be empty) is called once the call has started or been skipped.
  void RunCall(size_t index, const ToolContext& base, const std::function<void()>& started);
  void Tell(BatchEvent::Kind kind, size_t index) const;

  const Dispatcher& dispatcher_;
  const std::vector<BatchCall> calls_;
  const BatchOptions options_;
  std::unique_ptr<CallState[]> states_;
  std::vector<ToolResult> results_;
  std::chrono::steady_clock::time_point batch_deadline_;

  // The start-order gate: the index (into the current segment's calls) allowed to start next.
  std::mutex gate_mu_;
  std::condition_variable gate_cv_;
  size_t next_to_start_ = 0;  // Guarded by gate_mu_.
};

}  // namespace talaria
