// The workspace an MCP client's roots narrow `talaria mcp` to: the client's roots that lie
// inside the operator's --root directories (compared after resolving symlinks). A root outside
// them is ignored with a warning, so a client can shrink what its calls may touch, never widen
// it; with no usable root left the calls keep the --root workspace.
// Thread-safety: thread-safe (Update from the server's roots thread, Apply from call threads).
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "talaria/core/tool_context.h"

namespace talaria::cli {

class ClientRoots {
 public:
  // `allowed`: the --root directories (empty: the current directory).
  explicit ClientRoots(std::vector<std::string> allowed);

  // The client's roots, as absolute paths (from roots/list).
  void Update(const std::vector<std::string>& client_paths);
  // Points the call's workspace at the narrowed one, when there is one.
  void Apply(ToolContext& ctx) const;

 private:
  std::vector<std::string> allowed_;  // canonical
  mutable std::mutex mu_;
  std::shared_ptr<safety::Workspace> narrowed_;  // Guarded by mu_. Null: the session's own.
};

}  // namespace talaria::cli
