// The MCP client: talaria as the client of the MCP servers listed under `mcp_servers:` in
// $TALARIA_HOME/config.yaml. Each server's tools are registered as `mcp_<server>_<tool>` in
// toolset `mcp-<server>` (registry alias `<server>`).
//
//   mcp_servers:
//     everything:
//       command: node
//       args: [server.js, stdio]
//       env: {API_TOKEN: "..."}        # the child gets this plus PATH and HOME, nothing else
//       timeout: 300                   # seconds per tools/call
//       connect_timeout: 60            # seconds for spawn + initialize + tools/list
//       enabled: true
//       tools: {include: ["echo", "get-*"], exclude: ["dangerous"]}
//
// McpClientManager owns one supervisor thread (std::jthread) per enabled server. It connects in
// the background, re-lists on notifications/tools/list_changed (one Registry::Replace), and when
// the server dies it marks the server's tools unavailable (they stay registered; their check_fn
// fails) and reconnects with exponential backoff; after repeated failures a circuit breaker
// pauses the attempts, then probes again. Only stdio servers are implemented; `url` entries are
// reported unavailable ("http transport not supported yet").
// Destroying the manager stops the supervisors, ends the server processes (their whole process
// groups) and deregisters their tools.
// Thread-safety: thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "talaria/base/json.h"
#include "talaria/base/status.h"
#include "talaria/mcp/server.h"

namespace talaria {
class Registry;
class Runtime;
}  // namespace talaria

namespace talaria::mcp {

// The client offers kLatestProtocolVersion in initialize and accepts any of
// SupportedProtocolVersions() (server.h) in the answer.

struct ToolFilter {
  // Whitelist of exact names or fnmatch globs; when present (even empty) it wins over exclude.
  std::optional<std::vector<std::string>> include;
  std::vector<std::string> exclude;  // blacklist (exact names or globs)

  // True when the server tool `tool_name` (its own name, not the registered one) is kept.
  bool Allows(std::string_view tool_name) const;
};

struct ServerConfig {
  std::string name;
  // stdio transport
  std::string command;
  std::vector<std::string> args;
  std::map<std::string, std::string> env;
  // http transport (parsed, not implemented)
  std::string url;
  std::map<std::string, std::string> headers;

  std::chrono::milliseconds timeout{std::chrono::seconds(300)};
  std::chrono::milliseconds connect_timeout{std::chrono::seconds(60)};
  bool enabled = true;
  ToolFilter tools;
  // Set when the entry cannot be started (bad shape, http): the server is reported unavailable
  // with this reason and never spawned.
  std::string unusable_reason;
};

// Parses the `mcp_servers` section (an object of name -> entry; null gives none).
// InvalidArgument when the section itself is not an object. A malformed entry does not fail the
// whole section: it is returned with `unusable_reason` set, so it shows up as unavailable.
Result<std::vector<ServerConfig>> ParseServerConfigs(const Json& mcp_servers);

// `mcp_<server>_<tool>` with every byte that is not [A-Za-z0-9_] replaced by '_'.
std::string McpToolName(std::string_view server, std::string_view tool);

// Reconnection policy; the defaults are the original's.
struct ClientOptions {
  std::chrono::milliseconds initial_backoff{std::chrono::seconds(1)};
  std::chrono::milliseconds max_backoff{std::chrono::seconds(60)};
  double jitter = 0.2;  // each wait is scaled by a uniform factor in [1 - jitter, 1 + jitter]
  int failures_before_break = 5;  // consecutive failed connects that open the circuit
  std::chrono::milliseconds breaker_pause{std::chrono::seconds(300)};
  // How long a server gets to exit after its stdin is closed before SIGTERM/SIGKILL.
  std::chrono::milliseconds shutdown_grace{std::chrono::milliseconds(500)};
};

enum class ServerState : unsigned char {
  kConnecting,   // first attempt not finished yet
  kConnected,    // initialized and tools registered
  kUnavailable,  // failed, died, or waiting to retry; `reason` says why
  kDisabled,     // enabled: false
};

std::string_view ServerStateName(ServerState state);

struct ServerStatus {
  std::string name;
  ServerState state = ServerState::kConnecting;
  std::string reason;                  // why unavailable/disabled; empty when connected
  std::string protocol_version;        // negotiated, when connected
  std::vector<std::string> tools;      // registered names (kept while unavailable)
  int consecutive_failures = 0;
  bool circuit_open = false;           // waiting out ClientOptions::breaker_pause
  uint64_t connections = 0;            // successful connects so far
  int64_t pid = 0;                     // the server process while connected, else 0
};

class McpClientManager {
 public:
  // Starts one supervisor per server (disabled and unusable ones only get a status). Never
  // blocks on a server. `registry` must outlive the manager.
  static std::unique_ptr<McpClientManager> Start(Registry& registry,
                                                 std::vector<ServerConfig> servers,
                                                 ClientOptions options = {});
  ~McpClientManager();  // Shutdown()
  McpClientManager(const McpClientManager&) = delete;
  McpClientManager& operator=(const McpClientManager&) = delete;

  std::vector<ServerStatus> Statuses() const;
  std::optional<ServerStatus> StatusOf(std::string_view server) const;

  // Blocks until every enabled, usable server has finished its first connection attempt
  // (connected or failed) or `timeout` passes. Returns true when all of them settled.
  bool WaitForInitialConnections(std::chrono::milliseconds timeout) const;

  // Stops the supervisors, ends the servers and deregisters their tools. Idempotent.
  void Shutdown();

  class Impl;

 private:
  explicit McpClientManager(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Reads `mcp_servers` from the runtime's config and starts them into runtime.registry().
// InvalidArgument when the section has the wrong shape. The returned manager must be kept alive
// as long as the tools should work (typically for the process's lifetime).
Result<std::unique_ptr<McpClientManager>> StartConfiguredServers(Runtime& runtime,
                                                                 ClientOptions options = {});

}  // namespace talaria::mcp
