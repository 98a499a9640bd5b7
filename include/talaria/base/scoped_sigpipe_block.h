// ScopedSigpipeBlock: while alive, SIGPIPE is blocked in this thread, so writing to a pipe or
// socket whose reader is gone yields EPIPE instead of killing the process (library code cannot
// rely on the program ignoring SIGPIPE). On destruction it consumes the SIGPIPEs this thread's
// writes raised (unless one was already pending, which belongs to someone else) and restores
// the thread's signal mask.
// Thread-safety: per thread; create and destroy on the same thread.
#pragma once

#include <pthread.h>
#include <signal.h>
#include <time.h>

namespace talaria {

class ScopedSigpipeBlock {
 public:
  ScopedSigpipeBlock() {
    sigemptyset(&pipe_set_);
    sigaddset(&pipe_set_, SIGPIPE);
    sigset_t pending;
    sigemptyset(&pending);
    was_pending_ = ::sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1;
    ::pthread_sigmask(SIG_BLOCK, &pipe_set_, &old_mask_);
  }
  ~ScopedSigpipeBlock() {
    if (!was_pending_) {
      const timespec zero{};
      while (::sigtimedwait(&pipe_set_, nullptr, &zero) == SIGPIPE) {
      }
    }
    ::pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
  }
  ScopedSigpipeBlock(const ScopedSigpipeBlock&) = delete;
  ScopedSigpipeBlock& operator=(const ScopedSigpipeBlock&) = delete;

 private:
  sigset_t pipe_set_;
  sigset_t old_mask_;
  bool was_pending_ = false;
};

}  // namespace talaria
