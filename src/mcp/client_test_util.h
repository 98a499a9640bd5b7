// What the MCP client tests share: retry timings short enough for tests, and polling for a
// condition the client's supervisor threads bring about.
#pragma once

#include <chrono>
#include <functional>
#include <thread>

#include "talaria/mcp/client.h"

namespace talaria::mcp::client_testing {

inline ClientOptions FastRetries() {
  using namespace std::chrono_literals;
  ClientOptions options;
  options.initial_backoff = 100ms;
  options.max_backoff = 400ms;
  options.breaker_pause = 1s;
  options.shutdown_grace = 200ms;
  return options;
}

// Polls `done` every 20 ms; its last answer once `timeout` has passed.
inline bool WaitUntil(const std::function<bool()>& done, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return done();
}

}  // namespace talaria::mcp::client_testing
