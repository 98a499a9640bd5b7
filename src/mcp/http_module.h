// The Streamable HTTP pieces of MCP — the server transport (HttpTransport) and the client's
// HTTP connection — live in a module of their own, libtalaria_http.so, that libtalaria loads
// from its own directory on first use: cpp-httplib pulls in OpenSSL, zlib and brotli, whose
// relocations were most of the dynamic loader's work at every start of talaria, and a stdio
// MCP server or a CLI command never needs them.
//
// The module exports one C symbol, talaria_http_module, returning the table below; it is built
// from the same sources and compiler as libtalaria, so C++ types cross the boundary as they are.
// Thread-safety: LoadHttpModule is thread-safe (loaded once).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "mcp/client_connection.h"
#include "talaria/base/status.h"
#include "talaria/mcp/http_transport.h"
#include "talaria/mcp/jsonrpc.h"

namespace talaria::mcp {

namespace client_internal {

struct HttpConnectionOptions {
  std::string url;
  std::map<std::string, std::string> headers;  // sent on every request (Authorization, ...)
  size_t max_message_bytes = kDefaultMaxMessageBytes;
};

// The HTTP connection of client_http.h, through the module. Errors: InvalidArgument for a bad
// URL, Unavailable when the module cannot be loaded.
Result<std::unique_ptr<Connection>> OpenHttpConnection(HttpConnectionOptions options,
                                                       ConnectionCallbacks callbacks);

}  // namespace client_internal

namespace http_internal {

inline constexpr const char* kModuleFile = "libtalaria_http.so";
inline constexpr const char* kModuleEntry = "talaria_http_module";
// Bumped whenever a type crossing the boundary changes; a module from another build is refused.
inline constexpr uint32_t kModuleAbi = 1;

struct HttpModule {
  uint32_t abi = kModuleAbi;
  size_t table_size = sizeof(HttpModule);
  Result<std::unique_ptr<HttpTransport>> (*start_transport)(HttpTransportOptions options,
                                                            ServerFactory factory);
  Result<std::unique_ptr<client_internal::Connection>> (*open_connection)(
      client_internal::HttpConnectionOptions options,
      client_internal::ConnectionCallbacks callbacks);
};

// The module's table, loaded once; Unavailable (naming the file and the loader's error) when
// it cannot be loaded.
Result<const HttpModule*> LoadHttpModule();

}  // namespace http_internal

// Defined in the module (http_transport.cpp there).
Result<std::unique_ptr<HttpTransport>> StartHttpTransport(HttpTransportOptions options,
                                                          ServerFactory factory);

}  // namespace talaria::mcp
