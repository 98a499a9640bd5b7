// The libcurl half of the net module lives in libtalaria_net.so, which libtalaria loads from its
// own directory on the first MakeHttpClient: libcurl and the libraries it brings (OpenSSL,
// nghttp2, libssh2, GSSAPI, LDAP, ...) cost every start of talaria ~3 ms of dynamic loading, and
// most starts (an MCP server, a CLI command) never make an outbound request.
//
// The module exports one C symbol, talaria_net_module, returning the table below; it is built
// from the same sources and compiler as libtalaria, so C++ types cross the boundary as they are.
// Thread-safety: LoadNetModule is thread-safe (loaded once).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stop_token>

#include "talaria/base/status.h"
#include "talaria/net/http_client.h"
#include "talaria/net/mail_client.h"

namespace talaria::net::net_internal {

inline constexpr const char* kModuleFile = "libtalaria_net.so";
inline constexpr const char* kModuleEntry = "talaria_net_module";
// Bumped whenever a type crossing the boundary changes; a module from another build is refused.
inline constexpr uint32_t kModuleAbi = 3;

// In the message of every Unavailable error that means no connection was made
// (IsConnectFailure).
inline constexpr const char* kConnectFailureMark = ": cannot connect (";

struct NetModule {
  uint32_t abi = kModuleAbi;
  size_t table_size = sizeof(NetModule);
  Result<std::unique_ptr<HttpClient>> (*make_client)();
  Result<std::shared_ptr<ConnectionPool>> (*make_pool)();
  Result<std::unique_ptr<HttpClient>> (*make_pooled_client)(std::shared_ptr<ConnectionPool> pool);
  Status (*send_mail)(const MailRequest& request, const std::stop_token& stop);
};

// The module's table, loaded once; Unavailable (naming the file and the loader's error) when
// it cannot be loaded.
Result<const NetModule*> LoadNetModule();

// Defined in the module (curl/curl_http_client.cpp).
Result<std::unique_ptr<HttpClient>> MakeCurlHttpClient();
Result<std::shared_ptr<ConnectionPool>> MakeCurlConnectionPool();
Result<std::unique_ptr<HttpClient>> MakeCurlPooledHttpClient(std::shared_ptr<ConnectionPool> pool);
Status CurlSendMail(const MailRequest& request, const std::stop_token& stop);  // curl/curl_mail.cpp
Status StartCurl();  // curl_global_init, once

}  // namespace talaria::net::net_internal
