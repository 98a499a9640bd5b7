// The libtalaria side of the HTTP client: the response head's accessors and the loader of
// libtalaria_net.so (net_module.h).
#include "talaria/net/http_client.h"

#include <dlfcn.h>

#include <mutex>
#include <string>

#include "net/net_module.h"
#include "talaria/base/ascii.h"
#include "talaria/base/paths.h"

namespace talaria::net {

std::string HttpResponseHead::Header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (EqualsIgnoringAsciiCase(key, name)) return value;
  }
  return {};
}

bool IsConnectFailure(const Status& status) {
  return status.code() == StatusCode::kUnavailable &&
         status.message().find(net_internal::kConnectFailureMark) != std::string::npos;
}

namespace net_internal {

Result<const NetModule*> LoadNetModule() {
  static std::once_flag once;
  static const NetModule* module = nullptr;
  static std::string error;
  std::call_once(once, [] {
    // Never dlclose'd: clients point into it.
    void* handle = OpenSiblingModule(kModuleFile, "the HTTP client module", error);
    if (handle == nullptr) return;
    const std::string path(kModuleFile);
    using Entry = const NetModule* (*)();
    auto entry = reinterpret_cast<Entry>(::dlsym(handle, kModuleEntry));
    const NetModule* table = entry != nullptr ? entry() : nullptr;
    if (table == nullptr) {
      error = path + " does not export " + kModuleEntry;
      return;
    }
    if (table->abi != kModuleAbi || table->table_size != sizeof(NetModule)) {
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

}  // namespace net_internal

Result<std::unique_ptr<HttpClient>> MakeHttpClient() {
  const net_internal::NetModule* module = TALARIA_TRY(net_internal::LoadNetModule());
  return module->make_client();
}

}  // namespace talaria::net
