// ConnectRemoteBrowser: a provider's session and the WebSocket to it, or neither (providers.h).
#include <string>
#include <utility>

#include "talaria/browser/providers.h"

namespace talaria::browser {

Result<RemoteConnection> ConnectRemoteBrowser(BrowserProvider& provider, std::string_view task_id,
                                              std::stop_token cancel,
                                              std::chrono::milliseconds connect_timeout) {
  RemoteBrowser browser = TALARIA_TRY(provider.Acquire(task_id, std::move(cancel)));
  auto transport = ConnectWebSocket(
      {.url = browser.cdp_url, .headers = browser.cdp_headers, .connect_timeout = connect_timeout});
  if (!transport) {
    // The session exists and costs money until released; the error that matters is the
    // connection's, so a failed release is only mentioned.
    const Status released = provider.Release(browser);
    Status error = transport.error().WithContext(std::string(provider.name()));
    if (!released.ok()) {
      error = Status(error.code(),
                     error.message() + "; releasing the session failed too: " + released.message());
    }
    return Err(std::move(error));
  }
  return RemoteConnection{.browser = std::move(browser), .transport = std::move(*transport)};
}

}  // namespace talaria::browser
