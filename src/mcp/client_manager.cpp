// McpClientManager: one supervisor thread per configured server — connect, publish the tools,
// follow list_changed, notice the process dying, back off and reconnect, open the circuit after
// repeated failures.
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "mcp/client_connection.h"
#include "mcp/client_internal.h"
#include "mcp/http_module.h"
#include "talaria/base/log.h"
#include "talaria/core/registry.h"
#include "talaria/core/runtime.h"
#include "talaria/mcp/client.h"

namespace talaria::mcp {

using client_internal::Connection;
using client_internal::McpToolDef;
using client_internal::SecretMask;
using Clock = std::chrono::steady_clock;

namespace {

constexpr int kMaxListPages = 50;

std::string Tail(std::string text, size_t max_bytes) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) {
    text.pop_back();
  }
  if (text.size() > max_bytes) text = "..." + text.substr(text.size() - max_bytes);
  return text;
}

}  // namespace

// State of one server, shared with its tools' handlers (through weak_ptr) and connection
// callbacks. Outside the anonymous namespace: Impl holds it, and in a unity batch Impl is not
// in the main file, where a member of internal-linkage type is an error (-Wsubobject-linkage).
namespace client_internal {
struct ServerSlot {
  ServerConfig config;
  SecretMask mask;  // built from config; applied to every reason, log line and error
  Registry* registry = nullptr;

  mutable std::mutex mu;
  std::condition_variable_any cv;           // an event for the supervisor, or settled
  std::shared_ptr<Connection> conn;         // Guarded by mu. null when not connected.
  ServerStatus status;                      // Guarded by mu.
  std::vector<McpToolDef> defs;             // Guarded by mu. The last published tools.
  std::shared_ptr<std::atomic<bool>> live;  // Guarded by mu. The published tools' check.
  bool list_changed = false;                // Guarded by mu.
  bool closed = false;                      // Guarded by mu.
  std::string ping_failure;                 // Guarded by mu. Why a keepalive ended it.
  bool settled = false;                     // Guarded by mu. First attempt finished.
};
}  // namespace client_internal
using client_internal::ServerSlot;

namespace {

Clock::time_point DeadlineIn(std::chrono::milliseconds d) { return Clock::now() + d; }

// Everything a server sends reaches the model wrapped as untrusted content (its errors too:
// their text is the server's), with the configured credentials masked out of errors. The
// dispatcher wraps, after the result budget (see ToolResult::untrusted_source).
ToolResult Untrusted(ToolResult result, const std::string& registered_name) {
  result.untrusted_source = registered_name;
  return result;
}

ToolResult CallTool(const std::weak_ptr<ServerSlot>& weak, const std::string& server,
                    const std::string& tool, const std::string& registered_name, const Json& args,
                    ToolContext& ctx) {
  std::shared_ptr<ServerSlot> slot = weak.lock();
  if (!slot) return ToolResult::Error("MCP server '" + server + "' is not connected");
  std::shared_ptr<Connection> conn;
  std::chrono::milliseconds timeout{0};
  {
    std::lock_guard lock(slot->mu);
    conn = slot->conn;
    timeout = slot->config.timeout;
  }
  if (!conn || conn->closed()) {
    return ToolResult::Error("MCP server '" + server + "' is not connected");
  }
  const auto deadline = std::min(ctx.deadline, DeadlineIn(timeout));
  Json params = {{"name", tool}, {"arguments", args.is_object() ? args : Json::object()}};
  auto result = conn->Call("tools/call", std::move(params), deadline, ctx.cancel);
  if (!result) {
    const Status& s = result.error();
    const std::string message = "MCP call failed: " + slot->mask.Apply(s.message());
    if (s.code() == StatusCode::kCancelled)
      return ToolResult::Error(message, CallStatus::kCancelled);
    if (s.code() == StatusCode::kDeadlineExceeded) {
      return ToolResult::Error(message, CallStatus::kTimedOut);
    }
    return Untrusted(ToolResult::Error(message), registered_name);
  }
  return Untrusted(client_internal::RenderCallResult(*result, slot->mask), registered_name);
}

}  // namespace

class McpClientManager::Impl {
 public:
  Impl(Registry& registry, std::vector<ServerConfig> servers, ClientOptions options)
      : registry_(registry), options_(options) {
    for (auto& config : servers) {
      auto slot = std::make_shared<ServerSlot>();
      slot->registry = &registry;
      slot->status.name = config.name;
      if (!config.enabled) {
        slot->status.state = ServerState::kDisabled;
        slot->status.reason = "disabled in config";
        slot->settled = true;
      } else if (!config.unusable_reason.empty()) {
        slot->status.state = ServerState::kUnavailable;
        slot->status.reason = config.unusable_reason;
        slot->settled = true;
      }
      slot->mask = SecretMask(config);
      slot->status.reason = slot->mask.Apply(slot->status.reason);
      slot->config = std::move(config);
      slots_.push_back(slot);
    }
    for (auto& slot : slots_) {
      if (slot->settled) continue;
      threads_.emplace_back(
          [this, slot](const std::stop_token& stop) { Supervise(*slot, slot, stop); });
    }
  }

  ~Impl() { Shutdown(); }

  void Shutdown() {
    std::lock_guard lock(shutdown_mu_);
    if (shut_down_) return;
    shut_down_ = true;
    for (auto& t : threads_) t.request_stop();
    for (auto& t : threads_) {
      if (t.joinable()) t.join();
    }
    threads_.clear();
    for (auto& slot : slots_) {
      std::shared_ptr<Connection> conn;
      std::vector<std::string> names;
      {
        std::lock_guard slot_lock(slot->mu);
        conn = std::move(slot->conn);
        names = slot->status.tools;
        slot->status.tools.clear();
        if (slot->live) slot->live->store(false);
      }
      if (conn) conn->Close(options_.shutdown_grace);
      if (!names.empty()) (void)registry_.Replace(names, {});
    }
  }

  std::vector<ServerStatus> Statuses() const {
    std::vector<ServerStatus> out;
    for (const auto& slot : slots_) {
      std::lock_guard lock(slot->mu);
      out.push_back(slot->status);
    }
    return out;
  }

  std::optional<ServerStatus> StatusOf(std::string_view server) const {
    for (const auto& slot : slots_) {
      std::lock_guard lock(slot->mu);
      if (slot->status.name == server) return slot->status;
    }
    return std::nullopt;
  }

  bool WaitForInitialConnections(std::chrono::milliseconds timeout) const {
    const auto deadline = DeadlineIn(timeout);
    for (const auto& slot : slots_) {
      std::unique_lock lock(slot->mu);
      if (!slot->cv.wait_until(lock, deadline, [&] { return slot->settled; })) return false;
    }
    return true;
  }

 private:
  // Backoff before attempt n+1 after n consecutive failures (n = 0: after a crash).
  std::chrono::milliseconds Backoff(int failures) {
    double ms = static_cast<double>(options_.initial_backoff.count());
    for (int i = 1; i < failures && ms < static_cast<double>(options_.max_backoff.count()); ++i)
      ms *= 2;
    ms = std::min(ms, static_cast<double>(options_.max_backoff.count()));
    std::uniform_real_distribution<double> jitter(1.0 - options_.jitter, 1.0 + options_.jitter);
    {
      std::lock_guard lock(rng_mu_);
      ms *= jitter(rng_);
    }
    return std::chrono::milliseconds(static_cast<int64_t>(ms));
  }

  // Registers `defs` (replacing what the slot published before) with a fresh availability
  // check, so the registry's cached verdict of the old one never leaks into the new state.
  void Publish(ServerSlot& slot, const std::shared_ptr<ServerSlot>& shared,
               std::vector<McpToolDef> defs, bool available) {
    const std::string server = slot.config.name;
    const std::string toolset = "mcp-" + server;
    auto live = std::make_shared<std::atomic<bool>>(available);
    std::weak_ptr<ServerSlot> weak = shared;
    auto spec_for = [&](const McpToolDef& def) {
      ToolSpec spec;
      spec.name = def.name;
      spec.toolset = toolset;
      spec.schema = def.schema;
      spec.description = def.description;
      spec.parallel = def.read_only ? ParallelClass::kSafe : ParallelClass::kNever;
      spec.annotations = {def.read_only, def.destructive, def.idempotent, def.open_world};
      spec.check_fn = [live] { return live->load(); };
      spec.handler = [weak, server, tool = def.server_tool, name = def.name](const Json& args,
                                                                             ToolContext& ctx) {
        return CallTool(weak, server, tool, name, args, ctx);
      };
      return spec;
    };
    std::vector<ToolSpec> specs;
    specs.reserve(defs.size());
    std::vector<std::string> names;
    for (const auto& def : defs) {
      specs.push_back(spec_for(def));
      names.push_back(def.name);
    }
    std::vector<std::string> old;
    {
      std::lock_guard lock(slot.mu);
      old = slot.status.tools;
    }
    Status s = registry_.Replace(old, std::move(specs));
    if (!s.ok()) {
      // One bad tool (a schema we cannot compile, a clash with a built-in) must not hide the
      // others: register them one by one.
      LogWarn("mcp client: server '" + server + "': " + slot.mask.Apply(s.ToString()) +
              "; registering tools one by one");
      (void)registry_.Replace(old, {});
      names.clear();
      for (const auto& def : defs) {
        if (Status one = registry_.Register(spec_for(def)); one.ok()) {
          names.push_back(def.name);
        } else {
          LogWarn("mcp client: server '" + server + "': " + slot.mask.Apply(one.ToString()));
        }
      }
    }
    if (!names.empty() && !registry_.ResolveToolsetAlias(server)) {
      const auto toolsets = registry_.ToolsetNames();
      if (std::find(toolsets.begin(), toolsets.end(), server) == toolsets.end()) {
        registry_.RegisterToolsetAlias(server, toolset);
      }
    }
    std::lock_guard lock(slot.mu);
    if (slot.live) slot.live->store(false);
    slot.live = std::move(live);
    slot.defs = std::move(defs);
    slot.status.tools = std::move(names);
  }

  void MarkUnavailable(ServerSlot& slot, const std::shared_ptr<ServerSlot>& shared,
                       const std::string& reason) {
    std::vector<McpToolDef> defs;
    bool republish = false;
    {
      std::lock_guard lock(slot.mu);
      if (slot.live) {
        slot.live->store(false);
        republish = !slot.status.tools.empty();
      }
      defs = slot.defs;
    }
    // Republished before the state says so: the registry caches the old check's verdict, and
    // whoever sees kUnavailable must not still find the tools available.
    if (republish) Publish(slot, shared, std::move(defs), /*available=*/false);
    std::lock_guard lock(slot.mu);
    slot.status.state = ServerState::kUnavailable;
    slot.status.reason = slot.mask.Apply(reason);
    slot.status.protocol_version.clear();
    slot.status.pid = 0;
  }

  Result<std::vector<Json>> ListTools(Connection& conn, Clock::time_point deadline,
                                      const std::stop_token& stop) {
    std::vector<Json> tools;
    std::string cursor;
    for (int page = 0; page < kMaxListPages; ++page) {
      Json params = cursor.empty() ? Json::object() : Json{{"cursor", cursor}};
      Json result = TALARIA_TRY(conn.Call("tools/list", std::move(params), deadline, stop));
      if (auto t = result.find("tools"); t != result.end() && t->is_array()) {
        for (auto& tool : *t) tools.push_back(std::move(tool));
      }
      auto next = result.find("nextCursor");
      if (next == result.end() || !next->is_string() || next->get<std::string>().empty()) {
        return tools;
      }
      cursor = next->get<std::string>();
    }
    LogWarn("mcp client: tools/list stopped after " + std::to_string(kMaxListPages) + " pages");
    return tools;
  }

  std::vector<McpToolDef> Filter(const ServerSlot& slot, const std::vector<Json>& tools) {
    return client_internal::BuildToolDefs(slot.config.name, tools, slot.config.tools, nullptr);
  }

  // Spawn, initialize, list and publish. On failure the connection is closed.
  Status Connect(ServerSlot& slot, const std::shared_ptr<ServerSlot>& shared,
                 const std::stop_token& stop) {
    const ServerConfig& config = slot.config;
    std::vector<std::string> argv = {config.command};
    argv.insert(argv.end(), config.args.begin(), config.args.end());
    std::weak_ptr<ServerSlot> weak = shared;
    client_internal::ConnectionCallbacks callbacks;
    callbacks.on_notification = [weak](const std::string& method, const Json&) {
      if (method != "notifications/tools/list_changed") return;
      if (auto s = weak.lock()) {
        std::lock_guard lock(s->mu);
        s->list_changed = true;
        s->cv.notify_all();
      }
    };
    callbacks.on_closed = [weak] {
      if (auto s = weak.lock()) {
        std::lock_guard lock(s->mu);
        s->closed = true;
        s->cv.notify_all();
      }
    };
    {
      std::lock_guard lock(slot.mu);
      slot.closed = false;
      slot.list_changed = false;
      slot.ping_failure.clear();
    }
    std::shared_ptr<Connection> conn;
    if (!config.url.empty()) {
      client_internal::HttpConnectionOptions http;
      http.url = config.url;
      http.headers = config.headers;
      auto opened = client_internal::OpenHttpConnection(std::move(http), std::move(callbacks));
      if (!opened) return opened.error();
      conn = std::move(*opened);
    } else {
      auto started = client_internal::StdioConnection::Start(
          argv, client_internal::BuildChildEnv(config.env), std::move(callbacks));
      if (!started) {
        return started.error().WithContext("starting '" + config.command + "'");
      }
      conn = std::move(*started);
    }
    auto fail = [&](const Status& s) {
      conn->Close(std::chrono::milliseconds(0));
      std::string why = s.message();
      if (std::string end = DescribeEnd(*conn);
          !end.empty() && why.find(end) == std::string::npos) {
        why += " (" + end + ")";
      }
      return Status(s.code(), why);
    };
    const auto deadline = DeadlineIn(config.connect_timeout);
    Json init_params = {{"protocolVersion", std::string(kLatestProtocolVersion)},
                        {"capabilities", Json::object()},
                        {"clientInfo", {{"name", "talaria"}, {"version", "0.1"}}}};
    auto init = conn->Call("initialize", std::move(init_params), deadline, stop);
    if (!init) return fail(init.error().WithContext("initialize"));
    std::string version;
    if (auto v = init->find("protocolVersion"); v != init->end() && v->is_string()) {
      version = v->get<std::string>();
    }
    const auto known = SupportedProtocolVersions();
    if (std::find(known.begin(), known.end(), version) == known.end()) {
      return fail(FailedPreconditionError("the server answered unsupported protocol version '" +
                                          version + "'"));
    }
    if (Status s = conn->Notify("notifications/initialized", Json()); !s.ok()) return fail(s);
    conn->Initialized(version, init->contains("capabilities") ? (*init)["capabilities"] : Json());
    {
      std::lock_guard lock(slot.mu);
      slot.list_changed = false;  // the list below covers whatever changed so far
    }
    auto tools = ListTools(*conn, deadline, stop);
    if (!tools) return fail(tools.error().WithContext("tools/list"));
    {
      std::lock_guard lock(slot.mu);
      slot.conn = conn;
    }
    Publish(slot, shared, Filter(slot, *tools), /*available=*/true);
    std::lock_guard lock(slot.mu);
    slot.status.state = ServerState::kConnected;
    slot.status.reason.clear();
    slot.status.protocol_version = version;
    slot.status.consecutive_failures = 0;
    slot.status.circuit_open = false;
    ++slot.status.connections;
    slot.status.pid = conn->pid();
    return {};
  }

  void Refresh(ServerSlot& slot, const std::shared_ptr<ServerSlot>& shared,
               const std::stop_token& stop) {
    std::shared_ptr<Connection> conn;
    std::chrono::milliseconds timeout{0};
    {
      std::lock_guard lock(slot.mu);
      conn = slot.conn;
      timeout = slot.config.connect_timeout;
    }
    if (!conn) return;
    auto tools = ListTools(*conn, DeadlineIn(timeout), stop);
    if (!tools) {
      LogWarn("mcp client: server '" + slot.config.name +
              "': re-listing tools failed: " + slot.mask.Apply(tools.error().ToString()));
      return;
    }
    Publish(slot, shared, Filter(slot, *tools), /*available=*/true);
  }

  // Connected: follows list_changed until the connection closes (or `stop`). A transport that
  // cannot tell when the server goes away (HTTP) is pinged every keepalive_interval; a ping the
  // server cannot answer ends the connection.
  void WatchConnected(ServerSlot& slot, const std::shared_ptr<ServerSlot>& shared,
                      const std::stop_token& stop) {
    std::shared_ptr<Connection> conn;
    {
      std::lock_guard lock(slot.mu);
      conn = slot.conn;
    }
    const bool keepalive = conn && conn->NeedsKeepalive();
    auto next_ping = DeadlineIn(options_.keepalive_interval);
    for (;;) {
      bool changed = false;
      {
        std::unique_lock lock(slot.mu);
        auto ready = [&] { return slot.list_changed || slot.closed; };
        if (keepalive) {
          slot.cv.wait_until(lock, stop, next_ping, ready);
        } else {
          slot.cv.wait(lock, stop, ready);
        }
        if (stop.stop_requested() || slot.closed) return;
        changed = std::exchange(slot.list_changed, false);
      }
      if (changed) Refresh(slot, shared, stop);
      if (keepalive && Clock::now() >= next_ping) {
        auto pong =
            conn->Call("ping", Json::object(), DeadlineIn(slot.config.connect_timeout), stop);
        if (!pong && pong.error().code() != StatusCode::kFailedPrecondition) {
          if (stop.stop_requested()) return;
          // An error answer still proves the server is there; silence or a refusal does not.
          conn->Close(std::chrono::milliseconds(0));
          std::lock_guard lock(slot.mu);
          slot.closed = true;
          slot.ping_failure = "keepalive ping failed: " + pong.error().message();
          return;
        }
        next_ping = DeadlineIn(options_.keepalive_interval);
      }
    }
  }

  // How a connection ended, for statuses: the process's exit and stderr tail (stdio) or the
  // transport's reason (HTTP). Unmasked.
  static std::string DescribeEnd(const Connection& conn) {
    std::string out;
    if (std::string exit = conn.ExitDescription(); !exit.empty()) {
      out = conn.pid() > 0 ? "server process " + exit : exit;
    }
    if (std::string err = Tail(conn.StderrTail(), 400); !err.empty()) {
      out += out.empty() ? "stderr: " : "; stderr: ";
      out += err;
    }
    return out;
  }

  void Supervise(ServerSlot& slot, const std::shared_ptr<ServerSlot>& shared,
                 const std::stop_token& stop) {
    int failures = 0;
    while (!stop.stop_requested()) {
      Status s = Connect(slot, shared, stop);
      {
        std::lock_guard lock(slot.mu);
        slot.settled = true;
        slot.cv.notify_all();
      }
      if (stop.stop_requested()) return;
      if (s.ok()) {
        failures = 0;
        WatchConnected(slot, shared, stop);
        if (stop.stop_requested()) return;
        std::shared_ptr<Connection> conn;
        std::string reason =
            slot.config.url.empty() ? "server process exited" : "server connection lost";
        {
          std::lock_guard lock(slot.mu);
          conn = std::move(slot.conn);
          if (!slot.ping_failure.empty()) reason = slot.ping_failure;
        }
        if (conn) {
          conn->Close(std::chrono::milliseconds(0));
          if (std::string end = DescribeEnd(*conn); !end.empty()) reason = end;
        }
        LogWarn("mcp client: server '" + slot.config.name + "': " + slot.mask.Apply(reason) +
                "; reconnecting");
        MarkUnavailable(slot, shared, reason + "; reconnecting");
      } else {
        ++failures;
        // Once per streak of failures: a server that cannot start would otherwise repeat the
        // same warning at every retry, on every command. The retries are logged at info level;
        // the status (and the giving-up below) says the rest.
        const std::string message =
            "mcp client: server '" + slot.config.name + "': " + slot.mask.Apply(s.ToString());
        if (failures == 1) {
          LogWarn(message + " (retrying in the background)");
        } else {
          LogInfo(message);
        }
        MarkUnavailable(slot, shared, s.message());
      }
      std::chrono::milliseconds wait = Backoff(failures);
      {
        std::lock_guard lock(slot.mu);
        slot.status.consecutive_failures = failures;
        if (failures >= options_.failures_before_break) {
          wait = options_.breaker_pause;
          if (failures == options_.failures_before_break) {
            LogWarn("mcp client: server '" + slot.config.name + "': gave up after " +
                    std::to_string(failures) + " attempts in a row; next probe in " +
                    std::to_string(wait.count() / 1000) + " s");
          }
          slot.status.circuit_open = true;
          slot.status.reason += " (gave up after " + std::to_string(failures) +
                                " attempts in a row; next probe in " +
                                std::to_string(wait.count() / 1000) + " s)";
        }
      }
      std::unique_lock lock(slot.mu);
      slot.cv.wait_until(lock, stop, DeadlineIn(wait), [] { return false; });
    }
  }

  Registry& registry_;
  const ClientOptions options_;
  std::vector<std::shared_ptr<ServerSlot>> slots_;
  std::vector<std::jthread> threads_;  // one supervisor per started server
  std::mutex rng_mu_;
  std::minstd_rand rng_{std::random_device{}()};  // Guarded by rng_mu_.
  std::mutex shutdown_mu_;
  bool shut_down_ = false;  // Guarded by shutdown_mu_.
};

McpClientManager::McpClientManager(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
McpClientManager::~McpClientManager() { Shutdown(); }

std::unique_ptr<McpClientManager> McpClientManager::Start(Registry& registry,
                                                          std::vector<ServerConfig> servers,
                                                          ClientOptions options) {
  return std::unique_ptr<McpClientManager>(
      new McpClientManager(std::make_unique<Impl>(registry, std::move(servers), options)));
}

std::vector<ServerStatus> McpClientManager::Statuses() const { return impl_->Statuses(); }
std::optional<ServerStatus> McpClientManager::StatusOf(std::string_view server) const {
  return impl_->StatusOf(server);
}
bool McpClientManager::WaitForInitialConnections(std::chrono::milliseconds timeout) const {
  return impl_->WaitForInitialConnections(timeout);
}
void McpClientManager::Shutdown() {
  if (impl_) impl_->Shutdown();
}

Result<std::unique_ptr<McpClientManager>> StartConfiguredServers(Runtime& runtime,
                                                                 std::vector<ServerConfig> project,
                                                                 ClientOptions options) {
  std::vector<ServerConfig> servers;
  if (const auto& raw = runtime.config().raw; raw && raw->is_object()) {
    if (auto it = raw->find("mcp_servers"); it != raw->end()) {
      servers = TALARIA_TRY(ParseServerConfigs(*it));
    }
  }
  const size_t user_count = servers.size();
  for (auto& config : project) {
    const bool taken =
        std::any_of(servers.begin(), servers.begin() + static_cast<ptrdiff_t>(user_count),
                    [&](const ServerConfig& c) { return c.name == config.name; });
    if (taken) {
      LogWarn("mcp client: project server '" + config.name +
              "' skipped: config.yaml has one of that name");
      continue;
    }
    servers.push_back(std::move(config));
  }
  return McpClientManager::Start(runtime.registry(), std::move(servers), options);
}

}  // namespace talaria::mcp
