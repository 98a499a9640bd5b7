// Async tools on the shared executor: the easy way to write an AsyncHandler.
//
// An async handler returns a std::future<ToolResult>; the dispatcher waits for it with the
// call's deadline through Executor::WaitFor, so a handler whose work dispatches further tools
// (on the same executor) never deadlocks. Run the work with RunAsync, or wrap a blocking body
// with MakeAsyncHandler.
// Thread-safety: thread-safe (Executor::Shared() is).
#pragma once

#include <future>
#include <type_traits>
#include <utility>

#include "talaria/base/executor.h"
#include "talaria/core/tool_entry.h"
#include "talaria/core/tool_result.h"

namespace talaria {

// Runs `fn()` (returning a ToolResult) on Executor::Shared() and returns its future; an exception
// it throws reaches the dispatcher, which reports "Tool execution failed".
// Capture by value what `fn` needs (the arguments, a copy of the ToolContext): after a deadline
// or a cancel the dispatcher returns while the task may still be queued or running.
template <class F>
std::future<ToolResult> RunAsync(F&& fn) {
  static_assert(std::is_convertible_v<std::invoke_result_t<std::decay_t<F>&>, ToolResult>,
                "RunAsync: fn() must return a ToolResult");
  return Executor::Shared().Submit(
      [fn = std::forward<F>(fn)]() mutable -> ToolResult { return fn(); });
}

// An AsyncHandler that runs `body(args, ctx)` on the shared executor with its own copies of the
// arguments and the context, so the body polls ctx.cancel and ctx.deadline exactly as a sync
// handler does. REQUIRES: `body` is callable.
AsyncHandler MakeAsyncHandler(SyncHandler body);

}  // namespace talaria
