// The libtalaria side of the HTTP client: the response head's accessors and the loader of
// libtalaria_net.so (net_module.h).
#include "talaria/net/http_client.h"

#include <string>
#include <utility>

#include "net/net_module.h"
#include "talaria/base/ascii.h"
#include "talaria/base/sibling_module.h"

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
  // Loaded once; never dlclose'd: clients point into it.
  static const Result<const void*> table = LoadSiblingModuleTable(
      kModuleFile, kModuleEntry, "the HTTP client module", kModuleAbi, sizeof(NetModule));
  if (!table) return Err(table.error());
  return static_cast<const NetModule*>(*table);
}

}  // namespace net_internal

Result<std::unique_ptr<HttpClient>> MakeHttpClient() {
  const net_internal::NetModule* module = TALARIA_TRY(net_internal::LoadNetModule());
  return module->make_client();
}

Result<std::shared_ptr<ConnectionPool>> MakeConnectionPool() {
  const net_internal::NetModule* module = TALARIA_TRY(net_internal::LoadNetModule());
  return module->make_pool();
}

Result<std::unique_ptr<HttpClient>> MakeHttpClient(std::shared_ptr<ConnectionPool> pool) {
  const net_internal::NetModule* module = TALARIA_TRY(net_internal::LoadNetModule());
  return module->make_pooled_client(std::move(pool));
}

Status SendMail(const MailRequest& request, const std::stop_token& stop) {
  const net_internal::NetModule* module = TALARIA_TRY(net_internal::LoadNetModule());
  return module->send_mail(request, stop);
}

}  // namespace talaria::net
