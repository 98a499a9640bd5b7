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
//     remote:
//       url: https://mcp.example.com/mcp     # Streamable HTTP (see mcp/client_http.h)
//       headers: {Authorization: "Bearer ..."}
//       timeout: 120
//
// McpClientManager owns one supervisor thread (std::jthread) per enabled server. It connects in
// the background, re-lists on notifications/tools/list_changed (one Registry::Replace), and when
// the server dies it marks the server's tools unavailable (they stay registered; their check_fn
// fails) and reconnects with exponential backoff; after repeated failures a circuit breaker
// pauses the attempts, then probes again. HTTP servers have no process to watch, so a connected
// one is pinged every ClientOptions::keepalive_interval.
// What a server sends reaches the model wrapped as untrusted content (safety/untrusted_content.h);
// configured credentials (header and env values, URL userinfo and query values) are masked out
// of every error, status and log line.
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
  // Streamable HTTP transport (http:// or https://; userinfo becomes Basic credentials)
  std::string url;
  std::map<std::string, std::string> headers;

  std::chrono::milliseconds timeout{std::chrono::seconds(300)};
  std::chrono::milliseconds connect_timeout{std::chrono::seconds(60)};
  bool enabled = true;
  ToolFilter tools;
  // Set when the entry cannot be started (bad shape, bad URL, untrusted project config): the
  // server is reported unavailable with this reason and never started.
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
  // How long a server gets to exit after its stdin is closed before SIGTERM/SIGKILL (stdio), or
  // to answer the DELETE ending its session (HTTP).
  std::chrono::milliseconds shutdown_grace{std::chrono::milliseconds(500)};
  // HTTP servers have no process to watch: a connected one is pinged this often, and a ping it
  // does not answer ends the connection (then reconnect with backoff as usual).
  std::chrono::milliseconds keepalive_interval{std::chrono::seconds(180)};
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
  std::string reason;              // why unavailable/disabled; empty when connected
  std::string protocol_version;    // negotiated, when connected
  std::vector<std::string> tools;  // registered names (kept while unavailable)
  int consecutive_failures = 0;
  bool circuit_open = false;  // waiting out ClientOptions::breaker_pause
  uint64_t connections = 0;   // successful connects so far
  int64_t pid = 0;            // the server process while connected, else 0
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
// `project`: servers from a trusted project-local config, started too; one named like a
// user-level server is skipped (the user's own config wins) with a warning.
Result<std::unique_ptr<McpClientManager>> StartConfiguredServers(
    Runtime& runtime, std::vector<ServerConfig> project = {}, ClientOptions options = {});

}  // namespace talaria::mcp
