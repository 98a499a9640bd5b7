// The libtalaria side of ConnectWebSocket: the URL's scheme is judged here (a bad URL never
// loads the module) and the rest is handed to libtalaria_browser_ws.so (ws_module.h).
#include <string_view>

#include "browser/ws_module.h"
#include "talaria/base/ascii.h"
#include "talaria/base/sibling_module.h"
#include "talaria/browser/cdp_transport.h"

namespace talaria::browser {

namespace ws_internal {

Result<const WsModule*> LoadWsModule() {
  // Loaded once; never dlclose'd: transports point into it.
  static const Result<const void*> table = LoadSiblingModuleTable(
      kModuleFile, kModuleEntry, "the browser WebSocket module", kModuleAbi, sizeof(WsModule));
  if (!table) return Err(table.error());
  return static_cast<const WsModule*>(*table);
}

}  // namespace ws_internal

Result<std::unique_ptr<CdpTransport>> ConnectWebSocket(const WebSocketOptions& options) {
  const std::string_view url = options.url;
  const bool ws = url.size() > 5 && EqualsIgnoringAsciiCase(url.substr(0, 5), "ws://");
  const bool wss = url.size() > 6 && EqualsIgnoringAsciiCase(url.substr(0, 6), "wss://");
  if (!ws && !wss) {
    return Err(InvalidArgumentError("CDP WebSocket URL must start with ws:// or wss://"));
  }
  if (options.max_message_bytes == 0) {
    return Err(InvalidArgumentError("CDP WebSocket max_message_bytes must be positive"));
  }
  const ws_internal::WsModule* module = TALARIA_TRY(ws_internal::LoadWsModule());
  return module->connect(options);
}

}  // namespace talaria::browser
