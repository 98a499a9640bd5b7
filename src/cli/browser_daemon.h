// The browser daemon: what lets separate `talaria call` processes act on one page.
//
// A one-shot `talaria call browser_*` forwards the call to a per-task daemon (a detached
// `talaria browser-daemon` in a session of its own) that owns the Chromium and everything the
// browser keeps between calls (refs, the Fetch-interception guard, the idle reaper). The first
// call starts it under a lock, so two racing first calls start one; a socket whose daemon died
// is found stale (nobody listens) and replaced. The daemon ends when its browser does
// (browser_close, `browser.inactivity_timeout`), on SIGTERM, or when its socket was taken away;
// a SIGKILLed daemon takes its Chromium along (the pipe is the browser's lifeline).
//
//   $TALARIA_HOME/run/                 0700, ours
//     browser-<task>.sock              0600; the daemon checks each peer's uid (SO_PEERCRED)
//     browser-<task>.lock              flock'd by whoever starts the daemon
//     browser-<task>.pid               the daemon's pid while it runs
//     browser-<task>.log               the daemon's stderr
//
// Wire (unix_socket.h frames, JSON): the daemon greets {"daemon":"talaria-browser",
// "protocol":2,"pid":N}; the client sends {"protocol":2,"tool","arguments","config","env"}; the
// daemon answers with the ToolResult. A connection closed before the greeting ran nothing, so
// the client may try again; after it, it may not (a click must not happen twice).
// Long-lived hosts (chat, run, mcp, batch) keep their browser in process and never use this.
//
// Hooks run in the caller, not here. `talaria call` dispatches the call through its own
// runtime — the policy, PreToolUse hooks (config's, and a trusted project config's from its
// cwd), argument coercion, PostToolUse hooks, budgets — and only the tool's body travels to the
// daemon, which runs it with no hooks or policy of its own (it still validates the arguments).
// Why there: a daemon serves many callers with different cwds, project configs and plugins;
// whatever it loaded would be its first caller's, for everybody, and run plugin code in the
// process that holds the browser. A caller's hooks see its own cwd and environment and can
// block or rewrite a call before anything reaches the browser. Protocol 2 marks that change:
// an older client that expected the daemon to run hooks is refused, not served unhooked.
// The environment a browser is made from (provider keys and URLs, proxies, TALARIA_CHROMIUM)
// is the daemon's, inherited from the caller that started it; each call sends a digest of its
// own (`BrowserEnvironmentDigest`) and a call whose differs is refused, naming the variables.
// Thread-safety: free functions; RunBrowserDaemon is a process's main.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "talaria/base/json.h"
#include "talaria/base/status.h"
#include "talaria/core/tool_result.h"

namespace talaria::cli {

inline constexpr int kBrowserDaemonProtocol = 2;
inline constexpr std::string_view kBrowserDaemonGreeting = "talaria-browser";
inline constexpr std::string_view kDefaultBrowserTask = "cli";

struct BrowserDaemonPaths {
  std::string dir;
  std::string socket;
  std::string lock;
  std::string pid;
  std::string log;
};
// Under $TALARIA_HOME/run. InvalidArgument for a task outside [A-Za-z0-9._-]{1,64} (it names
// files).
Result<BrowserDaemonPaths> BrowserDaemonPathsFor(std::string_view task);

struct DaemonRequest {
  std::string tool;
  Json arguments = Json::object();
  std::string config;         // the client's --config (absolute), "" for the default
  Json env = Json::object();  // BrowserEnvironmentDigest() of the client
};

// {name: sha256 of the value} for every variable of this process's environment that decides
// how a browser is made or reached (BROWSERBASE_*, BROWSER_USE_*, FIRECRAWL_*, CAMOFOX_*,
// TOOL_GATEWAY_*, TALARIA_CHROMIUM, TMPDIR, the proxy variables). Digests, so no key travels.
Json BrowserEnvironmentDigest();
// The names whose digests differ between `a` and `b` (set in one only counts), sorted.
std::vector<std::string> EnvironmentDifferences(const Json& a, const Json& b);
std::string EncodeDaemonRequest(const DaemonRequest& request);
// InvalidArgument for anything but a well-formed request of our protocol.
Result<DaemonRequest> DecodeDaemonRequest(std::string_view frame);
std::string EncodeDaemonResult(const ToolResult& result);
Result<ToolResult> DecodeDaemonResult(std::string_view frame);

// The client side (`talaria call`).
struct ForwardOptions {
  std::string task = std::string(kDefaultBrowserTask);
  std::string config_path;  // passed to a daemon this call starts, and checked by a running one
  std::string program;      // the talaria binary to start; empty: this process's own
};
// The call's result as the daemon's dispatcher produced it. Errors: the daemon could not be
// started or reached, or it ended during the call (then the call may have happened).
Result<ToolResult> ForwardBrowserCall(const ForwardOptions& options, std::string_view tool,
                                      const Json& arguments);

// The daemon side (`talaria browser-daemon`, hidden). `ready_fd` (>= 0): where the starter waits
// for "ready\n" or "error: <why>\n". Exit 0 when it ended as designed, 1 when it could not start.
struct BrowserDaemonOptions {
  std::string task = std::string(kDefaultBrowserTask);
  std::string config_path;
  int ready_fd = -1;
};
int RunBrowserDaemon(const BrowserDaemonOptions& options);

}  // namespace talaria::cli
