// What an MCP client's roots narrow `talaria mcp` to: the client's roots that lie inside the
// operator's --root directories (compared after resolving symlinks). A root outside them is
// ignored with a warning, so a client can shrink what its calls may touch, never widen it; with
// no usable root left the calls keep the --root session. Narrowing covers the terminal too: the
// calls get a session of those roots (tools::Session::Narrowed), whose shell starts in the first
// of them and, sandboxed, can write only inside them.
// Thread-safety: thread-safe (Update from the server's roots thread, Apply from call threads).
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "talaria/core/tool_context.h"
#include "talaria/tools/session.h"

namespace talaria::cli {

class ClientRoots {
 public:
  // `session`: the --root session; `allowed`: the --root directories (empty: the current
  // directory).
  ClientRoots(std::shared_ptr<tools::Session> session, std::vector<std::string> allowed);

  // The client's roots, as absolute paths (from roots/list).
  void Update(const std::vector<std::string>& client_paths);
  // A context for one call: of the narrowed session when there is one.
  ToolContext NewContext(std::string call_id) const;

 private:
  const std::shared_ptr<tools::Session> session_;
  std::vector<std::string> allowed_;  // canonical
  mutable std::mutex mu_;
  std::shared_ptr<tools::Session> narrowed_;  // Guarded by mu_. Null: session_.
};

}  // namespace talaria::cli
