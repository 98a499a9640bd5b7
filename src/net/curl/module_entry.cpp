// The one symbol libtalaria_net.so exports for libtalaria (net/net_module.h).
#include "net/net_module.h"

namespace talaria::net {
namespace {

const net_internal::NetModule kModule{net_internal::kModuleAbi,
                                      sizeof(net_internal::NetModule),
                                      &net_internal::MakeCurlHttpClient,
                                      &net_internal::MakeCurlConnectionPool,
                                      &net_internal::MakeCurlPooledHttpClient,
                                      &net_internal::CurlSendMail};

}  // namespace
}  // namespace talaria::net

extern "C" __attribute__((visibility("default"))) const talaria::net::net_internal::NetModule*
talaria_net_module() {
  return &talaria::net::kModule;
}
