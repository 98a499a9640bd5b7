// What an MCP client's roots narrow `talaria mcp` to: the part of the client's roots that lies
// inside the operator's --root directories (compared after resolving symlinks): a client root
// inside a --root directory is kept, one that holds a --root directory gives that directory, one
// that shares nothing with them is ignored with a warning. So a client can shrink what its calls
// may touch, never widen it. When the client names roots and none of them meets --root, Update
// fails (the server then refuses the calls: they never fall back to the wider --root); a client
// that names no root at all keeps the --root session. Narrowing covers the terminal too: the
// calls get a session of those roots (tools::Session::Narrowed), whose shell starts in the first
// of them and, sandboxed, can write only inside them.
// Until the roots are known the MCP server holds calls back (McpServerOptions::on_client_roots).
// Thread-safety: thread-safe (Update from the server's roots thread, Apply from call threads).
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "talaria/base/status.h"
#include "talaria/core/tool_context.h"
#include "talaria/tools/session.h"

namespace talaria::cli {

class ClientRoots {
 public:
  // `session`: the --root session; `allowed`: the --root directories (empty: the current
  // directory).
  ClientRoots(std::shared_ptr<tools::Session> session, std::vector<std::string> allowed);

  // The client's roots, as absolute paths (from roots/list). PermissionDenied when the client
  // names roots but none of them meets the --root directories; FailedPrecondition when the
  // narrowed session cannot be opened. Either way calls are not to run.
  Status Update(const std::vector<std::string>& client_paths);
  // A context for one call: of the narrowed session when there is one.
  ToolContext NewContext(std::string call_id) const;

 private:
  const std::shared_ptr<tools::Session> session_;
  std::vector<std::string> allowed_;  // canonical
  mutable std::mutex mu_;
  std::shared_ptr<tools::Session> narrowed_;  // Guarded by mu_. Null: session_.
};

}  // namespace talaria::cli
