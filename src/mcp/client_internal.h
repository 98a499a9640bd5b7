// Pieces of the MCP client shared between its files: turning a server's tools/list entries into
// ToolSpecs, and a tools/call result into the text the model sees. Internal to the mcp module.
// Thread-safety: free functions, no shared state.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "talaria/base/json.h"
#include "talaria/core/tool_result.h"
#include "talaria/mcp/client.h"

namespace talaria::mcp::client_internal {

// One server tool kept after filtering, with what its registration needs.
struct McpToolDef {
  std::string server_tool;  // the name the server knows it by
  std::string name;         // mcp_<server>_<tool>
  Json schema;              // {"name", "description", "parameters": object schema}
  std::string description;
  bool read_only = false;
  bool destructive = false;
  bool idempotent = false;
  bool open_world = false;
};

// A tool's inputSchema as an object schema: non-objects become {"type":"object",
// "properties":{}}, a missing type becomes "object", missing properties become {}, and the
// top-level "$schema" is dropped (the dialect is ours to choose).
Json NormalizeInputSchema(const Json& input_schema);

// The kept tools of one tools/list result set (all pages), in server order. Entries without a
// string name are skipped; tools whose registered names collide are all skipped (fail closed)
// and listed in `skipped`.
std::vector<McpToolDef> BuildToolDefs(std::string_view server, const std::vector<Json>& tools,
                                      const ToolFilter& filter, std::vector<std::string>* skipped);

// Hides a server's credentials from everything the client shows (errors the model reads,
// statuses, logs): exact configured values first — header values and each word of them (so
// "Bearer X" also hides a bare X), env values given to the server, the URL's userinfo and
// query values — then the generic secret patterns (RedactSecrets). Values shorter than
// kMinMaskedChars are not masked: they would blank out ordinary words.
class SecretMask {
 public:
  static constexpr size_t kMinMaskedChars = 6;
  SecretMask() = default;
  explicit SecretMask(const ServerConfig& config);
  std::string Apply(std::string_view text) const;

 private:
  std::vector<std::string> values_;  // longest first, so a value's substrings never win
};

// {"result": <text parts joined by "\n">, "structuredContent"?: ...}; an isError result
// becomes {"error": "MCP call failed: <masked text>"}.
ToolResult RenderCallResult(const Json& result, const SecretMask& mask = SecretMask());

// The child's environment: PATH and HOME from talaria's, then the configured entries.
std::vector<std::string> BuildChildEnv(const std::map<std::string, std::string>& configured);

}  // namespace talaria::mcp::client_internal
