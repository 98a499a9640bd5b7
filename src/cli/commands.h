// The `talaria` subcommands. main.cpp parses the command line (CLI11 stays in that one file)
// and calls one of these; each returns the process exit code.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "talaria/core/batch_executor.h"
#include "talaria/core/runtime.h"

namespace talaria::mcp {
class ServerFeatures;
}

namespace talaria::cli {

// Exit codes shared by every subcommand.
inline constexpr int kExitOk = 0;
inline constexpr int kExitToolError = 1;
inline constexpr int kExitUsage = 2;

struct ToolsOptions {
  std::vector<std::string> toolsets;  // empty: every toolset
  bool json = false;
};
int RunTools(Runtime& rt, const ToolsOptions& options);

int RunToolsets(Runtime& rt);

// Where the file tools may work: --root DIR (repeatable; default: the current directory).
struct SessionFlags {
  std::vector<std::string> roots;
};

struct CallOptions {
  SessionFlags session;
  std::string name;
  std::vector<std::string> assignments;  // key=value, values arrive as strings
  std::string args_json;                 // --args
  // Browser tools run in the task's browser daemon (browser_daemon.h), so separate calls act
  // on one page; TALARIA_BROWSER_DAEMON=0 runs them in this process instead.
  std::string task;         // --task; empty: the default browser task
  std::string config_path;  // --config as given (the daemon must use the same)
};
int RunCall(Runtime& rt, const CallOptions& options);

// talaria batch FILE|-: exit 0 when every call succeeded, 1 when one failed, 2 for bad input,
// 128+N when signal N cancelled it.
struct BatchCommandOptions {
  SessionFlags session;
  std::string input;  // a file, or "-"/empty for stdin
  bool plan_only = false;
  bool json = false;   // with plan_only: the plan as JSON
  bool quiet = false;  // no progress line
  size_t workers = kDefaultBatchWorkers;
  double timeout_s = static_cast<double>(kDefaultBatchTimeout.count());
};
int RunBatch(Runtime& rt, const BatchCommandOptions& options);

// talaria mcp: an MCP server over stdio until stdin closes. Exit 0 at EOF, 1 when reading
// stdin failed, 2 for a usage error (unknown toolset, bad root), 128+N after signal N.
// With --http HOST:PORT: Streamable HTTP on http://HOST:PORT/mcp until SIGINT/SIGTERM (exit
// 128+N); 2 also when the address is bad, cannot be bound, or is not loopback and no token given.
struct McpCommandOptions {
  SessionFlags session;
  std::vector<std::string> toolsets;       // empty: the talaria-mcp bundle
  std::string http;                        // HOST:PORT; empty: stdio
  std::string token;                       // --token: required as "Authorization: Bearer <token>"
  std::vector<std::string> allow_origins;  // Origins accepted besides the server's own
  std::vector<std::string> allow_hosts;    // Host header values accepted besides the bound ones
  std::vector<std::string> plugin_dirs;    // --plugins: more plugin directories to load
  // The plugins' resources and prompts, served besides the tools.
  std::shared_ptr<mcp::ServerFeatures> features;
};
int RunMcp(Runtime& rt, const McpCommandOptions& options);

// talaria trust [PATH] [--revoke]: trust (or stop trusting) the exact content of a project-local
// config (PATH: the file or its project directory; default ./.talaria/config.yaml), after
// printing what it runs. Exit 0 done, 1 the trust store cannot be written, 2 no such file, a
// broken file, or (--revoke) a file that was not trusted.
struct TrustOptions {
  std::string path;
  bool revoke = false;
};
int RunTrust(const TrustOptions& options);

// talaria audit verify [--file F]: exit 0 when the chain and the head record hold, 1 when the
// log was tampered with (the first break is printed), 2 when there is no log or it cannot be read.
struct AuditOptions {
  std::string file;  // empty: $TALARIA_HOME/audit.jsonl
};
int RunAuditVerify(const AuditOptions& options);

// talaria check-command [--json] -- "CMD": exit 0 allow, 1 approve, 2 block.
struct CheckCommandOptions {
  std::string command;
  bool json = false;
};
int RunCheckCommand(const CheckCommandOptions& options);

// talaria memory show|edit|add TEXT|remove TEXT [--target memory|user] [--json]: the agent's
// memory files. Exit 0 done, 1 refused or failed (the reason on stderr), 2 usage errors.
struct MemoryCommandOptions {
  std::string action;  // show | edit | add | remove | pending | approve | reject
  std::string target;  // memory | user; empty: show both, otherwise memory
  std::string text;    // add: the entry; remove: a substring of the entry; approve/reject: id
  bool json = false;   // show: JSON
};
int RunMemoryCommand(const Config& config, const MemoryCommandOptions& options);

}  // namespace talaria::cli
