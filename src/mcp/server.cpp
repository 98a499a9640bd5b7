#include "talaria/mcp/server.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include <nlohmann/json.hpp>

#include "mcp/call_gate.h"
#include "mcp/tool_catalog.h"
#include "talaria/base/log.h"

namespace talaria::mcp {
namespace {

constexpr std::array<std::string_view, 4> kVersions = {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"};
constexpr std::array<std::string_view, 8> kLogLevels = {"debug", "info",     "notice", "warning",
                                                         "error", "critical", "alert",  "emergency"};
constexpr std::string_view kCursorPrefix = "after:";

int LogLevelRank(std::string_view level) {
  for (size_t i = 0; i < kLogLevels.size(); ++i) {
    if (kLogLevels[i] == level) return static_cast<int>(i);
  }
  return -1;
}

// A request's answer: a result, or a JSON-RPC error when code != 0.
struct Reply {
  Json result = Json::object();
  int code = 0;
  std::string message;
};

Reply Error(int code, std::string message) {
  Reply r;
  r.code = code;
  r.message = std::move(message);
  return r;
}

// The params object of a request: null params read as {}. Arrays are not MCP.
const Json* ParamsObject(const Message& m) {
  static const Json kEmpty = Json::object();
  const Json& p = m.params();
  if (p.is_null()) return &kEmpty;
  return p.is_object() ? &p : nullptr;
}

GateMode GateModeOf(const ToolEntry& entry) {
  switch (entry.parallel()) {
    case ParallelClass::kSafe:
      return GateMode::kShared;
    case ParallelClass::kPathScoped:
      return entry.path_access() == PathAccess::kRead ? GateMode::kShared : GateMode::kExclusive;
    case ParallelClass::kNever:
      break;
  }
  return GateMode::kExclusive;
}

// CallToolResult: the text as one text block; a JSON object result also as structuredContent.
Json ToCallResult(const ToolResult& r) {
  Json block = Json::object();
  block["type"] = "text";
  block["text"] = r.text;
  Json result = Json::object();
  result["content"] = Json::array({std::move(block)});
  const size_t first = r.text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && r.text[first] == '{') {
    if (auto parsed = ParseJson(r.text); parsed && parsed->is_object()) {
      result["structuredContent"] = std::move(*parsed);
    }
  }
  if (!r.ok()) result["isError"] = true;
  return result;
}

std::string IdText(const Json& id) { return id.is_string() ? id.get<std::string>() : DumpJson(id); }

}  // namespace

std::span<const std::string_view> SupportedProtocolVersions() { return kVersions; }

struct McpServer::Impl {
  enum class State : unsigned char { kNew, kInitializing, kReady };

  struct Call {
    Json id;
    std::string key;
    std::stop_source stop;
    std::atomic<bool> cancelled_by_client{false};
    std::jthread thread;
  };

  // Lets the registry listener outlive the server safely: it reaches the server only through
  // here, and the server unhooks itself under `mu` before it goes away.
  struct ListenerHook {
    std::mutex mu;
    Impl* impl = nullptr;  // Guarded by mu.
  };

  Impl(Dispatcher& d, const Toolsets& toolsets, McpServerOptions o, MessageSink s)
      : dispatcher(d),
        options(std::move(o)),
        sink(std::move(s)),
        catalog(d.registry(), toolsets, options.toolsets),
        gate(options.call_gate ? options.call_gate : NewCallGate()) {}

  void Send(std::string_view line) {
    std::lock_guard lock(send_mu);
    if (sink) sink(line);
  }
  void Answer(const Json& id, const Reply& reply) {
    if (reply.code != 0) {
      Send(EncodeError(&id, reply.code, reply.message));
    } else {
      Send(EncodeResult(id, reply.result));
    }
  }

  State state() const {
    std::lock_guard lock(mu);
    return state_;
  }

  void HandleRequest(const Message& m);
  void HandleNotification(const Message& m);
  Reply Initialize(const Json& params);
  Reply ListTools(const Json& params);
  Reply SetLevel(const Json& params);
  // Answers itself (now on refusal, later from the call's thread).
  void StartCall(const Message& m);
  void RunCall(Call* call, std::shared_ptr<const ToolEntry> entry, Json args, Json progress_token);
  void SendProgress(const Json& token, double progress, std::optional<double> total, std::string_view message);
  void OnRegistryChange();
  void ReapFinished();
  void Shutdown(std::chrono::milliseconds grace);
  void SendLog(std::string_view level, std::string_view logger, const Json& data);

  Dispatcher& dispatcher;
  const McpServerOptions options;
  const MessageSink sink;
  ToolCatalog catalog;
  const std::shared_ptr<CallGate> gate;
  std::shared_ptr<ListenerHook> hook = std::make_shared<ListenerHook>();
  int listener_id = 0;

  std::mutex send_mu;  // one sink call at a time

  mutable std::mutex mu;
  std::condition_variable cv;                          // a call finished
  State state_ = State::kNew;                          // Guarded by mu.
  std::string protocol_version;                        // Guarded by mu.
  int log_threshold = LogLevelRank("warning");         // Guarded by mu.
  bool shutting_down = false;                          // Guarded by mu.
  std::map<std::string, std::unique_ptr<Call>> calls;  // Guarded by mu. Keyed by the id's JSON.
  std::vector<std::unique_ptr<Call>> finished;         // Guarded by mu. To be joined.
  std::vector<std::string> exposed;                    // Guarded by mu. Names last seen.
};

void McpServer::Impl::HandleRequest(const Message& m) {
  const std::string& method = m.method;
  if (method == "ping") return Answer(m.id(), Reply{});
  const bool known = method == "initialize" || method == "tools/list" || method == "tools/call" ||
                     method == "logging/setLevel";
  if (!known) return Answer(m.id(), Error(kMethodNotFound, "Method not found: " + method));
  const Json* params = ParamsObject(m);
  if (params == nullptr) return Answer(m.id(), Error(kInvalidParams, "Invalid params: expected an object"));
  if (method == "initialize") return Answer(m.id(), Initialize(*params));
  if (state() == State::kNew) {
    return Answer(m.id(), Error(kInvalidRequest, "Server not initialized: send initialize first"));
  }
  if (method == "tools/call") return StartCall(m);
  if (method == "tools/list") return Answer(m.id(), ListTools(*params));
  return Answer(m.id(), SetLevel(*params));
}

void McpServer::Impl::HandleNotification(const Message& m) {
  if (m.method == "notifications/initialized") {
    std::lock_guard lock(mu);
    if (state_ == State::kInitializing) state_ = State::kReady;
    return;
  }
  if (m.method == "notifications/cancelled") {
    const Json& p = m.params();
    if (!p.is_object()) return;
    auto id = p.find("requestId");
    if (id == p.end() || !(id->is_string() || id->is_number_integer())) return;
    std::lock_guard lock(mu);
    auto it = calls.find(DumpJson(*id));
    if (it == calls.end()) return;  // unknown or finished: ignored, as the spec asks
    it->second->cancelled_by_client = true;
    it->second->stop.request_stop();
    return;
  }
  // notifications/progress, notifications/roots/list_changed and the like need nothing yet.
}

Reply McpServer::Impl::Initialize(const Json& params) {
  auto version = params.find("protocolVersion");
  if (version == params.end() || !version->is_string()) {
    return Error(kInvalidParams, "Invalid params: protocolVersion (a string) is required");
  }
  const std::string requested = version->get<std::string>();
  const bool supported = std::find(kVersions.begin(), kVersions.end(), requested) != kVersions.end();
  const std::string negotiated = supported ? requested : std::string(kLatestProtocolVersion);
  {
    std::lock_guard lock(mu);
    if (state_ != State::kNew) return Error(kInvalidRequest, "Invalid Request: already initialized");
    state_ = State::kInitializing;
    protocol_version = negotiated;
  }
  if (LogEnabled(LogLevel::kInfo)) {
    std::string client = "unknown client";
    if (auto info = params.find("clientInfo"); info != params.end() && info->is_object()) {
      client = DumpJson(*info);
    }
    LogInfo("mcp: initialize from " + client + ", protocol " + negotiated);
  }
  Reply r;
  r.result["protocolVersion"] = negotiated;
  Json capabilities = Json::object();
  capabilities["logging"] = Json::object();
  capabilities["tools"] = Json::object({{"listChanged", true}});
  r.result["capabilities"] = std::move(capabilities);
  r.result["serverInfo"] = Json::object({{"name", options.server_name}, {"version", options.server_version}});
  if (!options.instructions.empty()) r.result["instructions"] = options.instructions;
  return r;
}

Reply McpServer::Impl::ListTools(const Json& params) {
  std::string after;
  if (auto cursor = params.find("cursor"); cursor != params.end() && !cursor->is_null()) {
    if (!cursor->is_string() || !cursor->get_ref<const std::string&>().starts_with(kCursorPrefix)) {
      return Error(kInvalidParams, "Invalid params: unknown cursor");
    }
    after = cursor->get<std::string>().substr(kCursorPrefix.size());
  }
  auto current = catalog.Current();
  if (!current) return Error(kInternalError, "Internal error: " + current.error().message());
  const std::vector<CatalogTool>& tools = (*current)->tools;
  auto it = tools.begin();
  if (!after.empty()) {
    it = std::upper_bound(tools.begin(), tools.end(), after,
                          [](const std::string& name, const CatalogTool& t) { return name < t.entry->name(); });
  }
  Json page = Json::array();
  for (; it != tools.end() && page.size() < options.page_size; ++it) page.push_back(it->tool);
  Reply r;
  r.result["tools"] = std::move(page);
  if (it != tools.end()) r.result["nextCursor"] = std::string(kCursorPrefix) + std::prev(it)->entry->name();
  return r;
}

Reply McpServer::Impl::SetLevel(const Json& params) {
  auto level = params.find("level");
  const int rank = level != params.end() && level->is_string() ? LogLevelRank(level->get<std::string>()) : -1;
  if (rank < 0) {
    return Error(kInvalidParams, "Invalid params: level must be one of debug, info, notice, warning, error, "
                                 "critical, alert, emergency");
  }
  std::lock_guard lock(mu);
  log_threshold = rank;
  return Reply{};
}

void McpServer::Impl::StartCall(const Message& m) {
  const Json& params = *ParamsObject(m);  // checked by HandleRequest
  auto name = params.find("name");
  if (name == params.end() || !name->is_string()) {
    return Answer(m.id(), Error(kInvalidParams, "Invalid params: tools/call needs a tool name"));
  }
  Json args = Json::object();
  if (auto a = params.find("arguments"); a != params.end() && !a->is_null()) {
    if (!a->is_object()) return Answer(m.id(), Error(kInvalidParams, "Invalid params: arguments must be an object"));
    args = *a;
  }
  auto current = catalog.Current();
  if (!current) return Answer(m.id(), Error(kInternalError, "Internal error: " + current.error().message()));
  const CatalogTool* tool = (*current)->Find(name->get_ref<const std::string&>());
  if (tool == nullptr) {
    return Answer(m.id(), Error(kInvalidParams, "Unknown tool: " + name->get<std::string>()));
  }
  Json progress_token;
  if (auto meta = params.find("_meta"); meta != params.end() && meta->is_object()) {
    if (auto t = meta->find("progressToken"); t != meta->end() && (t->is_string() || t->is_number_integer())) {
      progress_token = *t;
    }
  }
  std::unique_lock lock(mu);
  if (shutting_down) {
    lock.unlock();
    return Answer(m.id(), Error(kInternalError, "Internal error: the server is shutting down"));
  }
  if (calls.size() >= options.max_calls_in_flight) {
    lock.unlock();
    return Answer(m.id(), Error(kInternalError, "Internal error: too many tool calls in flight (" +
                                                    std::to_string(options.max_calls_in_flight) + ")"));
  }
  std::string key = DumpJson(m.id());
  if (calls.contains(key)) {
    lock.unlock();
    return Answer(m.id(), Error(kInvalidRequest, "Invalid Request: request id " + key + " is already in use"));
  }
  auto call = std::make_unique<Call>();
  call->id = m.id();
  call->key = key;
  Call* raw = call.get();
  calls.emplace(std::move(key), std::move(call));
  // Started under the lock: Finish (on the new thread) cannot run before the thread is stored.
  raw->thread = std::jthread([this, raw, entry = tool->entry, args = std::move(args),
                              token = std::move(progress_token)]() mutable {
    RunCall(raw, std::move(entry), std::move(args), std::move(token));
  });
}

void McpServer::Impl::RunCall(Call* call, std::shared_ptr<const ToolEntry> entry, Json args, Json progress_token) {
  const auto started = std::chrono::steady_clock::now();
  try {
    const std::string call_id = "mcp_" + IdText(call->id);
    ToolContext ctx = options.make_context ? options.make_context(call_id) : ToolContext{};
    if (ctx.call_id.empty()) ctx.call_id = call_id;
    ctx.cancel = call->stop.get_token();
    if (options.call_timeout.count() > 0) ctx.deadline = std::min(ctx.deadline, started + options.call_timeout);
    if (!progress_token.is_null()) SendProgress(progress_token, 0, std::nullopt, "started " + entry->name());

    const GateMode mode = GateModeOf(*entry);
    ToolResult result;
    if (gate->Enter(mode, ctx.cancel)) {
      result = dispatcher.DispatchArgs(entry->name(), std::move(args), ctx);
      gate->Leave(mode);
    } else {
      result = dispatcher.Conclude(entry->name(), DumpJson(args), ctx,
                                   ToolResult::Error("Cancelled before it started", CallStatus::kCancelled,
                                                     "cancelled"));
    }
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
    if (!call->cancelled_by_client) {
      if (!progress_token.is_null()) SendProgress(progress_token, 1, 1, "finished " + entry->name());
      Send(EncodeResult(call->id, ToCallResult(result)));
    }
    Json data = Json::object();
    data["tool"] = entry->name();
    data["status"] = std::string(CallStatusName(result.status));
    data["ms"] = ms.count();
    SendLog("debug", "talaria.tools", data);
  } catch (const std::exception& e) {
    LogError(std::string("mcp: tools/call failed: ") + e.what());
    if (!call->cancelled_by_client) Send(EncodeError(&call->id, kInternalError, "Internal error"));
  }
  std::lock_guard lock(mu);
  auto it = calls.find(call->key);
  if (it != calls.end()) {
    finished.push_back(std::move(it->second));
    calls.erase(it);
  }
  cv.notify_all();
}

void McpServer::Impl::SendProgress(const Json& token, double progress, std::optional<double> total,
                                   std::string_view message) {
  Json p = Json::object();
  p["progressToken"] = token;
  p["progress"] = progress;
  if (total) p["total"] = *total;
  p["message"] = std::string(message);
  Send(EncodeNotification("notifications/progress", p));
}

void McpServer::Impl::SendLog(std::string_view level, std::string_view logger, const Json& data) {
  const int rank = LogLevelRank(level);
  {
    std::lock_guard lock(mu);
    if (rank < 0 || rank < log_threshold || state_ == State::kNew) return;
  }
  Json p = Json::object();
  p["level"] = std::string(level);
  p["logger"] = std::string(logger);
  p["data"] = data;
  Send(EncodeNotification("notifications/message", p));
}

void McpServer::Impl::OnRegistryChange() {
  auto current = catalog.Current();
  if (!current) return;
  std::vector<std::string> names;
  for (const CatalogTool& t : (*current)->tools) names.push_back(t.entry->name());
  {
    std::lock_guard lock(mu);
    if (names == exposed) return;
    exposed = std::move(names);
    if (state_ != State::kReady) return;
  }
  Send(EncodeNotification("notifications/tools/list_changed", Json()));
}

void McpServer::Impl::ReapFinished() {
  std::vector<std::unique_ptr<Call>> done;
  {
    std::lock_guard lock(mu);
    done.swap(finished);
  }
  // Each thread's last act was moving itself here; joining is a short wait.
  done.clear();
}

void McpServer::Impl::Shutdown(std::chrono::milliseconds grace) {
  std::unique_lock lock(mu);
  shutting_down = true;
  cv.wait_for(lock, grace, [this] { return calls.empty(); });
  for (auto& [key, call] : calls) call->stop.request_stop();
  // Cancelled calls end promptly (children are killed); warn if one does not.
  while (!cv.wait_for(lock, std::chrono::seconds(10), [this] { return calls.empty(); })) {
    LogWarn("mcp: waiting for " + std::to_string(calls.size()) + " cancelled tool call(s) to end");
  }
  lock.unlock();
  ReapFinished();
}

McpServer::McpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

McpServer::~McpServer() {
  {
    std::lock_guard lock(impl_->hook->mu);
    impl_->hook->impl = nullptr;
  }
  impl_->dispatcher.registry().RemoveListener(impl_->listener_id);
  Shutdown();
}

std::shared_ptr<CallGate> NewCallGate() { return std::make_shared<CallGate>(); }

Result<std::unique_ptr<McpServer>> McpServer::Create(Dispatcher& dispatcher, const Toolsets& toolsets,
                                                     McpServerOptions options, MessageSink sink) {
  if (options.page_size == 0) return Err(InvalidArgumentError("page_size must be at least 1"));
  if (options.max_calls_in_flight == 0) return Err(InvalidArgumentError("max_calls_in_flight must be at least 1"));
  auto impl = std::make_unique<Impl>(dispatcher, toolsets, std::move(options), std::move(sink));
  auto current = impl->catalog.Current();
  if (!current) return Err(current.error());
  for (const CatalogTool& t : (*current)->tools) impl->exposed.push_back(t.entry->name());
  impl->hook->impl = impl.get();
  impl->listener_id = dispatcher.registry().AddListener([hook = impl->hook](const RegistryChange&) {
    std::lock_guard lock(hook->mu);
    if (hook->impl != nullptr) hook->impl->OnRegistryChange();
  });
  return std::unique_ptr<McpServer>(new McpServer(std::move(impl)));
}

void McpServer::HandleMessage(std::string_view text) {
  Decoded decoded = DecodeMessage(text, impl_->options.limits);
  if (!decoded.ok()) {
    impl_->Send(EncodeError(decoded.error.id.get(), decoded.error.code, decoded.error.message));
    return;
  }
  HandleDecoded(*decoded.message);
}

void McpServer::HandleDecoded(const Message& m) {
  impl_->ReapFinished();
  try {
    switch (m.kind) {
      case MessageKind::kRequest:
        impl_->HandleRequest(m);
        break;
      case MessageKind::kNotification:
        impl_->HandleNotification(m);
        break;
      case MessageKind::kResponse:
        // The server sends no requests yet; a stray response is dropped.
        break;
    }
  } catch (const std::exception& e) {
    // Only a bug (or allocation failure) gets here; the peer still gets an answer.
    LogError(std::string("mcp: ") + m.method + ": " + e.what());
    if (m.kind == MessageKind::kRequest) impl_->Send(EncodeError(&m.id(), kInternalError, "Internal error"));
  }
}

void McpServer::RejectMessage(int code, std::string_view message) {
  impl_->Send(EncodeError(nullptr, code, message));
}

void McpServer::Shutdown(std::chrono::milliseconds grace) { impl_->Shutdown(grace); }

void McpServer::SendLog(std::string_view level, std::string_view logger, const Json& data) {
  impl_->SendLog(level, logger, data);
}

size_t McpServer::calls_in_flight() const {
  std::lock_guard lock(impl_->mu);
  return impl_->calls.size();
}

bool McpServer::initialized() const { return impl_->state() == Impl::State::kReady; }

std::string McpServer::protocol_version() const {
  std::lock_guard lock(impl_->mu);
  return impl_->protocol_version;
}

}  // namespace talaria::mcp
