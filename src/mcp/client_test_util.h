// What the MCP client tests share: retry timings short enough for tests, polling for a
// condition the client's supervisor threads bring about, and a call through the whole
// dispatcher (where a server's text gets its untrusted wrapper).
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <thread>

#include "support/wait_until.h"
#include "talaria/core/dispatcher.h"
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

using test_support::WaitUntil;

// `name` called as the model would call it: validated, budgeted and wrapped by a Dispatcher.
inline ToolResult Dispatched(Registry& registry, const std::string& name, const Json& args,
                             std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
  Dispatcher dispatcher(registry);
  ToolContext ctx;
  ctx.deadline = std::chrono::steady_clock::now() + timeout;
  return dispatcher.DispatchArgs(name, args, ctx);
}

}  // namespace talaria::mcp::client_testing
