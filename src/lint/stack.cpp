#include "lint/stack.h"

#include <pthread.h>

#include <cstdint>

namespace talaria::lint_internal {
namespace {

void* RunFunction(void* arg) {
  (*static_cast<const std::function<void()>*>(arg))();
  return nullptr;
}

}  // namespace

size_t RemainingStack() {
  // The lowest usable address of this thread's stack, looked up once per thread.
  thread_local uintptr_t stack_low = [] {
    uintptr_t low = 0;
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
      void* addr = nullptr;
      size_t size = 0;
      if (pthread_attr_getstack(&attr, &addr, &size) == 0) low = reinterpret_cast<uintptr_t>(addr);
      pthread_attr_destroy(&attr);
    }
    return low;
  }();
  // The frame address, not a local's: sanitizers may put locals on a heap "fake stack".
  const auto sp = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  return stack_low != 0 && sp > stack_low ? sp - stack_low : 0;
}

void RunWithStackHeadroom(const std::function<void()>& fn) {
  if (RemainingStack() >= kLintStackNeeded) {
    fn();
    return;
  }
  // A raw pthread because std::thread/std::jthread cannot choose a stack size. The thread is
  // joined right away; the work is a bounded, CPU-only parse, so the join needs no deadline.
  pthread_attr_t attr;
  pthread_t thread;
  bool started = false;
  if (pthread_attr_init(&attr) == 0) {
    started =
        pthread_attr_setstacksize(&attr, kLintThreadStack) == 0 &&
        pthread_create(&thread, &attr, &RunFunction, const_cast<std::function<void()>*>(&fn)) == 0;
    pthread_attr_destroy(&attr);
  }
  if (!started) {
    fn();
    return;
  }
  pthread_join(thread, nullptr);
}

}  // namespace talaria::lint_internal
