// The one symbol libtalaria_http.so exports for libtalaria (mcp/http_module.h).
#include "mcp/http/client_http.h"
#include "mcp/http_module.h"

namespace talaria::mcp {
namespace {

Result<std::unique_ptr<client_internal::Connection>> OpenConnection(
    client_internal::HttpConnectionOptions options,
    client_internal::ConnectionCallbacks callbacks) {
  auto opened = client_internal::HttpConnection::Open(std::move(options), std::move(callbacks));
  if (!opened) return Err(opened.error());
  return std::unique_ptr<client_internal::Connection>(std::move(*opened));
}

const http_internal::HttpModule kModule{http_internal::kModuleAbi,
                                        sizeof(http_internal::HttpModule), &StartHttpTransport,
                                        &OpenConnection};

}  // namespace
}  // namespace talaria::mcp

extern "C" __attribute__((visibility("default"))) const talaria::mcp::http_internal::HttpModule*
talaria_http_module() {
  return &talaria::mcp::kModule;
}
