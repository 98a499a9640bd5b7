#include "mcp/http_module.h"

#include <dlfcn.h>

#include <mutex>
#include <utility>

#include "talaria/base/paths.h"

namespace talaria::mcp {
namespace http_internal {

Result<const HttpModule*> LoadHttpModule() {
  static std::once_flag once;
  static const HttpModule* module = nullptr;
  static std::string error;
  std::call_once(once, [] {
    // Never dlclose'd: transports and connections point into it.
    void* handle = OpenSiblingModule(kModuleFile, "the MCP HTTP module", error);
    if (handle == nullptr) return;
    const std::string path(kModuleFile);
    using Entry = const HttpModule* (*)();
    auto entry = reinterpret_cast<Entry>(::dlsym(handle, kModuleEntry));
    const HttpModule* table = entry != nullptr ? entry() : nullptr;
    if (table == nullptr) {
      error = path + " does not export " + kModuleEntry;
      return;
    }
    if (table->abi != kModuleAbi || table->table_size != sizeof(HttpModule)) {
      error = path + " belongs to another build of talaria (module ABI " +
              std::to_string(table->abi) + ", this libtalaria " + std::to_string(kModuleAbi) +
              "); reinstall them together";
      return;
    }
    module = table;
  });
  if (module == nullptr) return Err(UnavailableError(error));
  return module;
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
