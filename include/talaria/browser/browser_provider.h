// A cloud browser provider: a REST call creates a session whose browser is reached over CDP at
// the returned WebSocket URL, and another call releases it (the original's Browserbase, Browser
// Use and Firecrawl providers; hermes-wave2.md e.3). Camofox is not one of these: its REST API
// replaces CDP, so it is a PageDriver of its own (page_driver.h).
//
// Thread-safety: Acquire and Release may be called from any thread.
#pragma once

#include <memory>
#include <stop_token>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "talaria/base/status.h"

namespace talaria::browser {

struct RemoteBrowser {
  std::string provider;    // "browserbase", "browser-use", "firecrawl"
  std::string session_id;  // the provider's id, what Release names
  std::string cdp_url;     // ws:// or wss://
  std::vector<std::pair<std::string, std::string>> cdp_headers;  // for ConnectWebSocket
  // How it was made, where a provider has two ways in: "gateway" (the managed tool gateway) or
  // "direct" (the provider's own key); "" for a provider with one. Release goes the same way,
  // also from another process (the cloud session ledger keeps it).
  std::string route;
};

class BrowserProvider {
 public:
  virtual ~BrowserProvider() = default;
  virtual std::string_view name() const = 0;
  // Creates a session for `task_id` (idempotency keys are kept per task across retries).
  // Errors carry the provider's status and message; a missing key is FailedPrecondition.
  virtual Result<RemoteBrowser> Acquire(std::string_view task_id, std::stop_token cancel) = 0;
  virtual Status Release(const RemoteBrowser& browser) = 0;
};

}  // namespace talaria::browser
