#include "mcp/http_module.h"

#include <utility>

#include "talaria/base/sibling_module.h"

namespace talaria::mcp {
namespace http_internal {

Result<const HttpModule*> LoadHttpModule() {
  // Loaded once; never dlclose'd: transports and connections point into it.
  static const Result<const void*> table = LoadSiblingModuleTable(
      kModuleFile, kModuleEntry, "the MCP HTTP module", kModuleAbi, sizeof(HttpModule));
  if (!table) return Err(table.error());
  return static_cast<const HttpModule*>(*table);
}

}  // namespace http_internal

Result<std::unique_ptr<HttpTransport>> HttpTransport::Start(HttpTransportOptions options,
                                                            ServerFactory factory) {
  const http_internal::HttpModule* module = TALARIA_TRY(http_internal::LoadHttpModule());
  return module->start_transport(std::move(options), std::move(factory));
}

namespace client_internal {

Result<std::unique_ptr<Connection>> OpenHttpConnection(HttpConnectionOptions options,
                                                       ConnectionCallbacks callbacks) {
  const http_internal::HttpModule* module = TALARIA_TRY(http_internal::LoadHttpModule());
  return module->open_connection(std::move(options), std::move(callbacks));
}

}  // namespace client_internal
}  // namespace talaria::mcp
