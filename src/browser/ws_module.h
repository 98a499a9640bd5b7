// The WebSocket half of the CDP transport lives in libtalaria_browser_ws.so, which libtalaria
// loads from its own directory on the first ConnectWebSocket: it links OpenSSL (wss) and holds
// Boost.Beast, and most starts of talaria never reach a remote browser.
//
// The module exports one C symbol, talaria_browser_ws_module, returning the table below; it is
// built from the same sources and compiler as libtalaria, so C++ types cross the boundary as
// they are.
// Thread-safety: LoadWsModule is thread-safe (loaded once).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "talaria/base/status.h"
#include "talaria/browser/cdp_transport.h"

namespace talaria::browser::ws_internal {

inline constexpr const char* kModuleFile = "libtalaria_browser_ws.so";
inline constexpr const char* kModuleEntry = "talaria_browser_ws_module";
// Bumped whenever a type crossing the boundary changes; a module from another build is refused.
inline constexpr uint32_t kModuleAbi = 1;

struct WsModule {
  uint32_t abi = kModuleAbi;
  size_t table_size = sizeof(WsModule);
  Result<std::unique_ptr<CdpTransport>> (*connect)(const WebSocketOptions& options);
};

// The module's table, loaded once; Unavailable (naming the file and the loader's error) when it
// cannot be loaded.
Result<const WsModule*> LoadWsModule();

// Defined in the module (ws/websocket_transport.cpp). REQUIRES: options.url is ws:// or wss://.
Result<std::unique_ptr<CdpTransport>> ConnectBeastWebSocket(const WebSocketOptions& options);

}  // namespace talaria::browser::ws_internal
