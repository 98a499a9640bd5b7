// Stack headroom for the parsers. CPython's parser and compiler recurse up to their own limits
// (about 0.9 MiB of stack for hostile input such as 200,000 unary minus signs), yaml-cpp up to
// its 500-level depth guard; a caller on a small-stack worker thread must not crash on that.
// Thread-safety: thread-safe.
#pragma once

#include <cstddef>
#include <functional>

namespace talaria::lint_internal {

// Headroom a lint needs: below this, the work moves to a thread with kLintThreadStack bytes.
inline constexpr size_t kLintStackNeeded = size_t{4} << 20;
inline constexpr size_t kLintThreadStack = size_t{16} << 20;

// Bytes of stack left below the caller's frame on this thread; 0 when unknown.
size_t RemainingStack();

// Runs `fn` here when the thread has kLintStackNeeded bytes of stack left, otherwise on a
// new thread with kLintThreadStack bytes, waiting for it to finish (falls back to running here
// when no thread can be created).
void RunWithStackHeadroom(const std::function<void()>& fn);

}  // namespace talaria::lint_internal
