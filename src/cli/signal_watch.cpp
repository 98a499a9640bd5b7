#include "cli/signal_watch.h"

#include <ctime>

namespace talaria::cli {

SignalWatch::SignalWatch(std::function<void(int)> on_signal, std::function<void()> on_tick) {
  sigemptyset(&set_);
  sigaddset(&set_, SIGINT);
  sigaddset(&set_, SIGTERM);
  ::pthread_sigmask(SIG_BLOCK, &set_, &old_);
  thread_ = std::jthread(
      [this, on_signal = std::move(on_signal), on_tick = std::move(on_tick)](std::stop_token stop) {
        const timespec tick{0, 100'000'000};
        while (!stop.stop_requested()) {
          const int sig = ::sigtimedwait(&set_, nullptr, &tick);
          if (sig > 0) {
            int none = 0;
            received_.compare_exchange_strong(none, sig);
            on_signal(sig);
          } else if (on_tick) {
            on_tick();
          }
        }
      });
}

SignalWatch::~SignalWatch() {
  thread_.request_stop();
  thread_.join();
  // A signal that came after the watch stopped stays pending; it is delivered (and acted on as
  // usual) when the mask is restored.
  ::pthread_sigmask(SIG_SETMASK, &old_, nullptr);
}

}  // namespace talaria::cli
