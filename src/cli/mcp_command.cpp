// talaria mcp: serves the selected toolsets as an MCP server over stdio (newline-delimited
// JSON-RPC on stdin/stdout; logs only on stderr). stdin EOF ends it: the client is gone (MCP's
// stdio shutdown is closing the server's input), so running calls are cancelled at once (their
// children killed), as SIGINT/SIGTERM do. No
// one can answer an approval prompt here, so dangerous commands fall back to the deny default.
// With --http HOST:PORT it serves Streamable HTTP instead (one McpServer per MCP session, all
// sharing one tool session) until SIGINT/SIGTERM.
//
// config.yaml's `mcp` section:
//   mcp:
//     read_guards: false     # read_file/search_files refuse repeats (tools::ReadGuards); off:
//                            #   the server's callers are many conversations, not one context
//     roots_timeout_ms: 5000 # how long calls wait for a client that declared roots to name them
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <stop_token>
#include <thread>

#include "cli/cli_session.h"
#include "cli/client_roots.h"
#include "cli/commands.h"
#include "cli/mcp_session_search.h"
#include "cli/signal_watch.h"
#include "talaria/base/log.h"
#include "talaria/core/config_section.h"
#include "talaria/core/conflict_gate.h"
#include "talaria/mcp/http_transport.h"
#include "talaria/mcp/server.h"
#include "talaria/mcp/stdio_transport.h"
#include "talaria/store/session_store.h"
#include "talaria/tools/clarify.h"
#include "talaria/tools/command_policy.h"
#include "talaria/tools/process_notices.h"
#include "talaria/tools/session.h"

namespace talaria::cli {
namespace {

int FailMcp(const std::string& message) {
  std::fprintf(stderr, "talaria mcp: %s\n", message.c_str());
  return kExitUsage;
}

// The `mcp` section of config.yaml.
struct McpSettings {
  tools::ReadGuards read_guards = tools::ReadGuards::kOff;
  std::chrono::milliseconds roots_timeout{5000};
};

Result<McpSettings> McpSettingsFromConfig(const Config& config) {
  const ConfigSection section = TALARIA_TRY(ConfigSection::Of(config, "mcp"));
  McpSettings settings;
  bool read_guards = false;
  TALARIA_RETURN_IF_ERROR(section.ReadBool("read_guards", read_guards));
  settings.read_guards = read_guards ? tools::ReadGuards::kOn : tools::ReadGuards::kOff;
  int64_t timeout_ms = settings.roots_timeout.count();
  TALARIA_RETURN_IF_ERROR(section.ReadInt("roots_timeout_ms", 1, 600'000, timeout_ms));
  settings.roots_timeout = std::chrono::milliseconds(timeout_ms);
  return settings;
}

// Points one McpServer's calls at the tool session: contexts from `session` (call ids prefixed
// with `call_prefix`), narrowed to the client's roots inside `allowed` once the client names them
// (the server holds calls back until then).
void ServeSession(mcp::McpServerOptions& options, std::shared_ptr<tools::Session> session,
                  const std::vector<std::string>& allowed, std::string call_prefix) {
  auto roots = std::make_shared<ClientRoots>(std::move(session), allowed);
  options.make_context = [call_prefix = std::move(call_prefix), roots](const std::string& call_id) {
    return roots->NewContext(call_prefix + call_id);
  };
  options.on_client_roots = [roots](const std::vector<std::string>& paths) {
    return roots->Update(paths);
  };
}

// Streamable HTTP until a signal. Each MCP session gets its own McpServer; they share the tool
// session (workspace, terminal), and their call ids are prefixed per MCP session so that two
// clients' request ids never collide.
int ServeHttp(Runtime& rt, const McpCommandOptions& options, mcp::McpServerOptions server_options,
              const std::shared_ptr<tools::Session>& session, std::stop_source& stop,
              SignalWatch& signals) {
  auto address = mcp::ParseHostPort(options.http);
  if (!address) return FailMcp("--http: " + address.error().message());
  mcp::HttpTransportOptions http;
  http.host = address->host;
  http.port = address->port;
  http.bearer_token = options.token;
  http.allowed_origins = options.allow_origins;
  http.allowed_hosts = options.allow_hosts;
  auto serial = std::make_shared<std::atomic<uint64_t>>(0);
  // Every HTTP session's calls reach the one tool session: one gate keeps writers apart.
  server_options.call_gate = std::make_shared<ConflictGate>();
  const std::vector<std::string> roots_allowed = options.session.roots;
  auto factory = [&rt, server_options = std::move(server_options), session, serial,
                  roots_allowed](mcp::RoutedSink sink) {
    mcp::McpServerOptions o = server_options;
    const std::string prefix = "s" + std::to_string(++*serial) + "_";
    ServeSession(o, session, roots_allowed, prefix);
    return mcp::McpServer::Create(rt.dispatcher(), rt.toolsets(), std::move(o), std::move(sink));
  };
  // Fails early on a bad toolset, rather than at the first initialize.
  if (auto probe = factory([](std::string_view, const mcp::Routing&) {}); !probe) {
    return FailMcp(probe.error().message());
  }
  auto transport = mcp::HttpTransport::Start(std::move(http), std::move(factory));
  if (!transport) return FailMcp(transport.error().message());
  const std::string url = (*transport)->url();
  std::fprintf(stderr, "talaria mcp: serving MCP (Streamable HTTP) at %s\n", url.c_str());
  std::fprintf(
      stderr, "talaria mcp: connect a client with {\"type\": \"http\", \"url\": \"%s\"%s}\n",
      url.c_str(),
      options.token.empty() ? "" : R"(, "headers": {"Authorization": "Bearer <your token>"})");
  if (!mcp::IsLoopbackHost(address->host) && options.allow_hosts.empty()) {
    std::fprintf(stderr,
                 "talaria mcp: requests must name a bound or loopback Host; add --allow-host "
                 "NAME:%d for each "
                 "name clients use to reach this machine\n",
                 (*transport)->port());
  }
  std::fflush(stderr);
  while (!stop.stop_requested()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  std::fprintf(stderr, "talaria mcp: stopping\n");
  (*transport)->Stop();
  transport->reset();
  if (const int sig = signals.received(); sig != 0) return 128 + sig;
  return kExitOk;
}

// Names on stderr, once at start, the selected tools that are not served and why (a key or a
// config section missing): tools/list leaves them out without a word, and the person running
// the server should not have to guess. Tools only an agent loop runs are never served here and
// go unmentioned.
void ReportWithheldTools(Runtime& rt, const std::vector<std::string>& selection) {
  auto names = rt.toolsets().ResolveSelection(selection, {});
  if (!names) return;  // the server refuses a bad selection with its own message
  for (const std::string& name : **names) {
    std::shared_ptr<const ToolEntry> entry = rt.registry().GetEntry(name);
    if (!entry || entry->owner() == CallOwner::kAgentLoop) continue;
    if (const Availability a = rt.dispatcher().CheckRunnable(*entry); !a.available) {
      std::fprintf(stderr, "talaria mcp: not serving %s: %s\n", name.c_str(), a.reason.c_str());
    }
  }
}

}  // namespace

int RunMcp(Runtime& rt, const McpCommandOptions& options) {
  // A client that goes away must surface as EPIPE on write, not kill us mid-call (children get
  // default dispositions from spawn).
  ::signal(SIGPIPE, SIG_IGN);
  std::stop_source stop;
  // First, before any thread exists: from here on SIGINT/SIGTERM only ever stop the server.
  SignalWatch signals([&stop](int) { stop.request_stop(); }, nullptr);

  const std::vector<std::string> exposed =
      options.toolsets.empty() ? mcp::McpServerOptions().toolsets : options.toolsets;
  if (Status s = InstallSessionTools(rt, /*prompter=*/nullptr, exposed); !s.ok()) {
    return FailMcp(s.message());
  }
  // Of the loop-owned tools, a server can run clarify (its client's user answers) and
  // session_search (read-only over the user's sessions database).
  LoopRouter router = WithSessionSearch(store::DefaultSessionsPath(), tools::ClarifyThroughClient,
                                        tools::ClarifyThroughClientTakes);
  rt.dispatcher().SetAgentLoopRouter(std::move(router.route), std::move(router.takes));
  auto session_options = tools::SessionOptionsFromConfig(rt.config());
  if (!session_options) return FailMcp(session_options.error().message());
  auto settings = McpSettingsFromConfig(rt.config());
  if (!settings) return FailMcp(settings.error().message());
  session_options->roots = options.session.roots;
  // One server, many conversations: the read guardrails would answer a new conversation's first
  // read with "unchanged, refer to the earlier result" it never saw.
  session_options->read_guards = settings->read_guards;
  auto session = tools::OpenSession(std::move(*session_options));
  if (!session) return FailMcp(session.error().message());
  tools::AttachProcessNotices(rt.dispatcher());

  mcp::McpServerOptions server_options;
  if (!options.toolsets.empty()) server_options.toolsets = options.toolsets;
  server_options.features = options.features;
  server_options.roots_timeout = settings->roots_timeout;
  ReportWithheldTools(rt, server_options.toolsets);
  if (!options.http.empty())
    return ServeHttp(rt, options, std::move(server_options), *session, stop, signals);
  ServeSession(server_options, *session, options.session.roots, /*call_prefix=*/"");
  mcp::FdLineWriter out(STDOUT_FILENO, stop);
  auto server = mcp::McpServer::Create(rt.dispatcher(), rt.toolsets(), std::move(server_options),
                                       [&out](std::string_view line) { out.Write(line); });
  if (!server) return FailMcp(server.error().message());

  mcp::StdioOptions stdio;
  stdio.stop = stop.get_token();
  const Status served = mcp::ServeLines(**server, stdio);
  if (!served.ok()) LogError("talaria mcp: " + served.message());
  // stdin is closed: nobody will read an answer, so running calls are cancelled, not awaited.
  (*server)->Shutdown();
  server->reset();
  if (const int sig = signals.received(); sig != 0) return 128 + sig;
  return served.ok() ? kExitOk : kExitToolError;
}

}  // namespace talaria::cli
