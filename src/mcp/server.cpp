#include "talaria/mcp/server.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "mcp/batch_collector.h"
#include "mcp/outlet.h"
#include "mcp/server_internal.h"
#include "mcp/tool_catalog.h"
#include "talaria/base/elastic_pool.h"
#include "talaria/base/log.h"
#include "talaria/base/uri.h"
#include "talaria/core/conflict_gate.h"
#include "talaria/mcp/features.h"

namespace talaria::mcp {
namespace {

constexpr std::array<std::string_view, 4> kVersions = {"2025-11-25", "2025-06-18", "2025-03-26",
                                                       "2024-11-05"};
constexpr std::string_view kCursorPrefix = "after:";
// How long a roots/list request stays open (at least): an answer after calls stopped waiting for
// it (options.roots_timeout) still applies to later calls.
constexpr auto kRootsAnswerTimeout = std::chrono::seconds(60);

// The params object of a request: null params read as {}. Arrays are not MCP.
const Json* ParamsObject(const Message& m) {
  static const Json kEmpty = Json::object();
  const Json& p = m.params();
  if (p.is_null()) return &kEmpty;
  return p.is_object() ? &p : nullptr;
}

// CallToolResult: the result's rich content blocks, else the text as one text block; a JSON
// object result also as structuredContent.
Json ToCallResult(const ToolResult& r) {
  Json result = Json::object();
  if (r.content && r.content->is_array() && !r.content->empty()) {
    result["content"] = *r.content;
    if (!r.ok()) result["isError"] = true;
    return result;
  }
  Json block = Json::object();
  block["type"] = "text";
  block["text"] = r.text;
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

// Whether a result text that starts like a JSON object can go out as structuredContent as it
// is: one line (stdio frames messages by newlines) of valid JSON. Checked by a scan that builds
// nothing (nlohmann's accept() lexing it was a sixth of a read_file call).
bool IsSpliceableObject(std::string_view text) {
  // Two memchr passes: find_first_of("\r\n") runs a memchr over its set for every byte of text.
  if (text.find('\n') != std::string_view::npos || text.find('\r') != std::string_view::npos)
    return false;
  return IsValidJsonText(text);
}

// The tools/call answer, written directly: the text escaped once, and a JSON-object text spliced
// in as structuredContent after a validating scan. Building it as a Json (parse the text, dump it
// twice) made nlohmann's serializer the largest cost of a read_file round trip. The same message
// as EncodeResult(id, ToCallResult(r)), except that structuredContent keeps the tool's spacing.
std::string EncodeCallResult(const Json& id, const ToolResult& r) {
  if (r.content && r.content->is_array() && !r.content->empty())
    return EncodeResult(id, ToCallResult(r));
  const size_t first = r.text.find_first_not_of(" \t\r\n");
  const bool object_like = first != std::string::npos && r.text[first] == '{';
  const bool splice = object_like && IsSpliceableObject(r.text);
  if (object_like && !splice) return EncodeResult(id, ToCallResult(r));  // the parsing path decides
  std::string out;
  // The text escaped (a little longer) and, spliced, once more: sized once up front.
  out.reserve(r.text.size() + r.text.size() / 8 + (splice ? r.text.size() : 0) + 128);
  out += R"({"jsonrpc":"2.0","id":)";
  out += DumpJson(id);
  out += R"(,"result":{"content":[{"type":"text","text":)";
  AppendJsonQuoted(out, r.text);
  out += "}]";
  if (splice) {
    out += R"(,"structuredContent":)";
    out += r.text;
  }
  if (!r.ok()) out += R"(,"isError":true)";
  out += "}}";
  return out;
}

// The refusal of a request whose id an unanswered request (alone or in a batch) still holds.
std::string IdInUse(std::string_view key) {
  return "Invalid Request: request id " + std::string(key) + " is already in use";
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
    bool returned = false;  // Guarded by mu. RunCall will not touch the call again.
  };

  // Lets the registry and feature listeners outlive the server safely: they reach the server
  // only through here, and the server unhooks itself under `mu` before it goes away.
  struct ListenerHook {
    std::mutex mu;
    Impl* impl = nullptr;  // Guarded by mu.
  };

  Impl(Dispatcher& d, const Toolsets& toolsets, McpServerOptions o, RoutedSink s)
      : dispatcher(d),
        options(std::move(o)),
        outlet(std::make_shared<Outlet>(batches->Wrap(std::move(s)))),
        catalog(d, toolsets, options.toolsets),
        features(options.features, options.toolsets, toolsets, options.page_size),
        gate(options.call_gate ? options.call_gate : std::make_shared<ConflictGate>()) {}

  void Send(std::string_view line) { outlet->Send(line, Routing{}); }
  void Answer(const Json& id, const Reply& reply) {
    const std::string key = DumpJson(id);
    const Routing routing{key, true};
    if (reply.code != 0) {
      outlet->Send(
          EncodeError(&id, reply.code, reply.message, reply.data.is_null() ? nullptr : &reply.data),
          routing);
    } else {
      outlet->Send(EncodeResult(id, reply.result), routing);
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
  Reply Subscribe(const Json& params, bool subscribe);
  // The context of request `id` that began at `started` (a tool call's, or one served on the
  // reader thread: resources/read, prompts/get): session context, call id, call_timeout.
  ToolContext RequestContext(const Json& id, std::chrono::steady_clock::time_point started);
  // Registers request `m` as in flight (cancellable by notifications/cancelled); null after
  // answering a refusal (shutting down, too many in flight, its id in use).
  Call* Admit(const Message& m);
  // Answers itself (now on refusal, later from the call's thread).
  void StartCall(const Message& m);
  // Runs `work` for request `m` on a call thread and answers with its reply (not when the
  // client cancelled the request).
  void StartRequest(const Message& m, std::function<Reply(ToolContext&)> work);
  void RunCall(Call* call, const std::shared_ptr<const ToolEntry>& entry, Json args,
               const Json& progress_token);
  void Retire(Call* call);
  // A request that gets no response (a call the client cancelled): a batch waiting for it
  // goes out without it.
  void Unanswered(const std::string& key) {
    if (auto flush = batches->Abandon(key))
      outlet->Send(flush->line, Routing{flush->batch_key, true});
  }
  bool HandleBatch(std::string_view text, std::string_view batch_key);
  // One decoded message: a request answered (now or from its call's thread), a notification
  // acted on, a response handed to the request of ours waiting for it.
  void Serve(const Message& m);
  bool InFlight(const std::string& key) const {
    std::lock_guard lock(mu);
    return calls.contains(key);
  }
  // Asks the client for its roots in the background (its answer arrives on the reader thread)
  // and hands them to options.on_client_roots. A newer fetch cancels an older one. Calls wait
  // for the answer meanwhile (AwaitRoots).
  void FetchRoots();
  // OK once calls may run: the client's roots are applied, or it has none to wait for. Waits
  // while they are pending, up to roots_deadline or until `stop`; then PermissionDenied (no
  // answer, a failed or refused one) or Cancelled.
  Status AwaitRoots(const std::stop_token& stop);
  void OnRegistryChange();
  void OnFeatureEvent(const FeatureEvent& event);
  void ReapFinished();
  void Shutdown(std::chrono::milliseconds grace);
  void SendLog(std::string_view level, std::string_view logger, const Json& data);

  Dispatcher& dispatcher;
  const McpServerOptions options;
  // Before the outlet, whose sink it wraps.
  const std::shared_ptr<BatchCollector> batches = std::make_shared<BatchCollector>();
  const std::shared_ptr<Outlet> outlet;
  ToolCatalog catalog;
  const FeatureView features;
  const std::shared_ptr<ConflictGate> gate;
  std::shared_ptr<ListenerHook> hook = std::make_shared<ListenerHook>();
  int listener_id = 0;
  int feature_listener_id = 0;

  mutable std::mutex mu;
  std::condition_variable cv;                          // a call finished
  State state_ = State::kNew;                          // Guarded by mu.
  std::string protocol_version;                        // Guarded by mu.
  bool shutting_down = false;                          // Guarded by mu.
  std::map<std::string, std::unique_ptr<Call>> calls;  // Guarded by mu. Keyed by the id's JSON.
  std::vector<std::unique_ptr<Call>> finished;         // Guarded by mu. Until RunCall returns.
  std::vector<std::string> exposed;                    // Guarded by mu. Names last seen.
  std::set<std::string, std::less<>> subscriptions;    // Guarded by mu. Resource URIs.
  // The client's roots: kNone when it declared none (or nobody asked), kPending until its
  // answer is accepted, kRefused after a failed or refused answer (with roots_refusal).
  enum class Roots : unsigned char { kNone, kPending, kKnown, kRefused };
  std::condition_variable_any roots_cv;                  // roots_state left kPending
  Roots roots_state = Roots::kNone;                      // Guarded by mu.
  std::string roots_refusal;                             // Guarded by mu.
  std::chrono::steady_clock::time_point roots_deadline;  // Guarded by mu. Calls wait until then.
  uint64_t roots_generation = 0;                         // Guarded by mu. Which fetch is current.
  std::jthread roots_fetch;                              // Only touched by the reader thread.
  // Runs the calls; last, so destroyed (its threads joined) before anything they use.
  ElasticPool call_threads;
};

void McpServer::Impl::HandleRequest(const Message& m) {
  const std::string& method = m.method;
  if (method == "ping") return Answer(m.id(), Reply{});
  static constexpr std::string_view kTools[] = {"initialize", "tools/list", "tools/call",
                                                "logging/setLevel"};
  static constexpr std::string_view kFeatures[] = {
      "resources/list",      "resources/templates/list", "resources/read",
      "resources/subscribe", "resources/unsubscribe",    "prompts/list",
      "prompts/get",         "completion/complete"};
  const bool known = std::find(std::begin(kTools), std::end(kTools), method) != std::end(kTools) ||
                     (features.enabled() && std::find(std::begin(kFeatures), std::end(kFeatures),
                                                      method) != std::end(kFeatures));
  if (!known) return Answer(m.id(), Error(kMethodNotFound, "Method not found: " + method));
  const Json* params = ParamsObject(m);
  if (params == nullptr)
    return Answer(m.id(), Error(kInvalidParams, "Invalid params: expected an object"));
  if (method == "initialize") return Answer(m.id(), Initialize(*params));
  if (state() == State::kNew) {
    return Answer(m.id(), Error(kInvalidRequest, "Server not initialized: send initialize first"));
  }
  if (method == "tools/call") return StartCall(m);
  if (method == "tools/list") return Answer(m.id(), ListTools(*params));
  if (method == "logging/setLevel") return Answer(m.id(), SetLevel(*params));
  if (method == "resources/list") return Answer(m.id(), features.ListResources(*params));
  if (method == "resources/templates/list") return Answer(m.id(), features.ListTemplates(*params));
  if (method == "resources/subscribe") return Answer(m.id(), Subscribe(*params, true));
  if (method == "resources/unsubscribe") return Answer(m.id(), Subscribe(*params, false));
  if (method == "prompts/list") return Answer(m.id(), features.ListPrompts(*params));
  if (method == "completion/complete") return Answer(m.id(), features.Complete(*params));
  // A plugin's or an embedder's handler runs behind these: off the reader thread, like tools/call,
  // so a slow one never holds up ping or other requests, and notifications/cancelled reaches it.
  if (method == "resources/read") {
    return StartRequest(m, [this, params = *params](ToolContext& ctx) {
      return features.ReadResource(params, ctx);
    });
  }
  return StartRequest(
      m, [this, params = *params](ToolContext& ctx) { return features.GetPrompt(params, ctx); });
}

void McpServer::Impl::HandleNotification(const Message& m) {
  if (m.method == "notifications/initialized") {
    {
      std::lock_guard lock(mu);
      if (state_ == State::kInitializing) state_ = State::kReady;
    }
    return FetchRoots();
  }
  if (m.method == "notifications/roots/list_changed") return FetchRoots();
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
  // notifications/progress and the like need nothing.
}

Reply McpServer::Impl::Initialize(const Json& params) {
  auto version = params.find("protocolVersion");
  if (version == params.end() || !version->is_string()) {
    return Error(kInvalidParams, "Invalid params: protocolVersion (a string) is required");
  }
  const std::string requested = version->get<std::string>();
  const bool supported =
      std::find(kVersions.begin(), kVersions.end(), requested) != kVersions.end();
  const std::string negotiated = supported ? requested : std::string(kLatestProtocolVersion);
  Json client_caps = Json::object();
  if (auto caps = params.find("capabilities"); caps != params.end() && caps->is_object())
    client_caps = *caps;
  {
    std::lock_guard lock(mu);
    if (state_ != State::kNew)
      return Error(kInvalidRequest, "Invalid Request: already initialized");
    state_ = State::kInitializing;
    protocol_version = negotiated;
  }
  outlet->SetClientCapabilities(std::move(client_caps));
  if (options.on_client_roots && outlet->ClientSupports("roots")) {
    // Calls may come before notifications/initialized starts the fetch: they wait too.
    std::lock_guard lock(mu);
    roots_state = Roots::kPending;
    roots_deadline = std::chrono::steady_clock::now() + options.roots_timeout;
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
  features.AddCapabilities(capabilities);
  r.result["capabilities"] = std::move(capabilities);
  r.result["serverInfo"] =
      Json::object({{"name", options.server_name}, {"version", options.server_version}});
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
    it = std::upper_bound(
        tools.begin(), tools.end(), after,
        [](const std::string& name, const CatalogTool& t) { return name < t.entry->name(); });
  }
  // clarify runs here only through the client's user (answered by elicitation): a client that
  // cannot elicit is not offered it. (The other loop-owned tool a server can run,
  // session_search, needs no user.)
  const bool can_elicit = outlet->ClientSupports("elicitation");
  Json page = Json::array();
  for (; it != tools.end() && page.size() < options.page_size; ++it) {
    if (it->entry->owner() == CallOwner::kAgentLoop && !can_elicit &&
        it->entry->name() == "clarify") {
      continue;
    }
    page.push_back(it->tool);
  }
  Reply r;
  r.result["tools"] = std::move(page);
  if (it != tools.end())
    r.result["nextCursor"] = std::string(kCursorPrefix) + std::prev(it)->entry->name();
  return r;
}

Reply McpServer::Impl::SetLevel(const Json& params) {
  auto level = params.find("level");
  const int rank =
      level != params.end() && level->is_string() ? LogLevelRank(level->get<std::string>()) : -1;
  if (rank < 0) {
    return Error(kInvalidParams,
                 "Invalid params: level must be one of debug, info, notice, warning, error, "
                 "critical, alert, emergency");
  }
  outlet->SetLogThreshold(rank);
  return Reply{};
}

Reply McpServer::Impl::Subscribe(const Json& params, bool subscribe) {
  std::string uri;
  if (!subscribe) {
    // Unsubscribing from something never subscribed (or gone since) is harmless.
    auto given = params.find("uri");
    if (given == params.end() || !given->is_string()) {
      return Error(kInvalidParams, "Invalid params: needs a uri (a string)");
    }
    std::lock_guard lock(mu);
    subscriptions.erase(given->get<std::string>());
    return Reply{};
  }
  Reply checked = features.CheckSubscribable(params, &uri);
  if (checked.code != 0) return checked;
  std::lock_guard lock(mu);
  subscriptions.insert(std::move(uri));
  return Reply{};
}

ToolContext McpServer::Impl::RequestContext(const Json& id,
                                            std::chrono::steady_clock::time_point started) {
  const std::string call_id = "mcp_" + IdText(id);
  ToolContext ctx = options.make_context ? options.make_context(call_id) : ToolContext{};
  if (ctx.call_id.empty()) ctx.call_id = call_id;
  if (options.call_timeout.count() > 0)
    ctx.deadline = std::min(ctx.deadline, started + options.call_timeout);
  return ctx;
}

McpServer::Impl::Call* McpServer::Impl::Admit(const Message& m) {
  std::unique_lock lock(mu);
  if (shutting_down) {
    lock.unlock();
    Answer(m.id(), Error(kInternalError, "Internal error: the server is shutting down"));
    return nullptr;
  }
  if (calls.size() >= options.max_calls_in_flight) {
    lock.unlock();
    Answer(m.id(), Error(kInternalError, "Internal error: too many requests in flight (" +
                                             std::to_string(options.max_calls_in_flight) + ")"));
    return nullptr;
  }
  std::string key = DumpJson(m.id());
  if (calls.contains(key)) {
    lock.unlock();
    Answer(m.id(), Error(kInvalidRequest, IdInUse(key)));
    return nullptr;
  }
  auto call = std::make_unique<Call>();
  call->id = m.id();
  call->key = key;
  Call* raw = call.get();
  calls.emplace(std::move(key), std::move(call));
  return raw;
}

void McpServer::Impl::StartRequest(const Message& m, std::function<Reply(ToolContext&)> work) {
  Call* call = Admit(m);
  if (call == nullptr) return;
  call_threads.Run([this, call, work = std::move(work)] {
    Reply reply;
    try {
      const Status roots = AwaitRoots(call->stop.get_token());
      ToolContext ctx = RequestContext(call->id, std::chrono::steady_clock::now());
      ctx.cancel = call->stop.get_token();
      reply = roots.ok() ? work(ctx) : Error(kInternalError, roots.message());
    } catch (const std::exception& e) {
      LogError(std::string("mcp: request failed: ") + e.what());
      reply = Error(kInternalError, "Internal error");
    }
    Retire(call);
    if (call->cancelled_by_client) {
      Unanswered(call->key);
    } else {
      Answer(call->id, reply);
    }
    std::lock_guard lock(mu);
    call->returned = true;
    cv.notify_all();
  });
}

void McpServer::Impl::StartCall(const Message& m) {
  const Json& params = *ParamsObject(m);  // checked by HandleRequest
  auto name = params.find("name");
  if (name == params.end() || !name->is_string()) {
    return Answer(m.id(), Error(kInvalidParams, "Invalid params: tools/call needs a tool name"));
  }
  Json args = Json::object();
  if (auto a = params.find("arguments"); a != params.end() && !a->is_null()) {
    if (!a->is_object())
      return Answer(m.id(), Error(kInvalidParams, "Invalid params: arguments must be an object"));
    args = *a;
  }
  auto current = catalog.Current();
  if (!current)
    return Answer(m.id(), Error(kInternalError, "Internal error: " + current.error().message()));
  const CatalogTool* tool = (*current)->Find(name->get_ref<const std::string&>());
  if (tool == nullptr) {
    // A selected tool that cannot run here says why (tools/list leaves it out), so the client's
    // user learns what to configure.
    if (const std::string* why = (*current)->WithheldReason(name->get_ref<const std::string&>())) {
      return Answer(m.id(), Error(kInvalidParams, "Tool " + name->get<std::string>() +
                                                      " is not available here: " + *why));
    }
    return Answer(m.id(), Error(kInvalidParams, "Unknown tool: " + name->get<std::string>()));
  }
  Json progress_token;
  if (auto meta = params.find("_meta"); meta != params.end() && meta->is_object()) {
    if (auto t = meta->find("progressToken");
        t != meta->end() && (t->is_string() || t->is_number_integer())) {
      progress_token = *t;
    }
  }
  Call* raw = Admit(m);
  if (raw == nullptr) return;
  call_threads.Run([this, raw, entry = tool->entry, args = std::move(args),
                    token = std::move(progress_token)]() mutable {
    RunCall(raw, entry, std::move(args), token);
  });
}

void McpServer::Impl::RunCall(Call* call, const std::shared_ptr<const ToolEntry>& entry, Json args,
                              const Json& progress_token) {
  const auto started = std::chrono::steady_clock::now();
  auto channel = std::make_shared<CallChannel>(outlet, call->key, progress_token);
  try {
    // Before the context is made: it is of the client's roots only once they are known.
    const Status roots = AwaitRoots(call->stop.get_token());
    ToolContext ctx = RequestContext(call->id, started);
    ctx.cancel = call->stop.get_token();
    ctx.client = channel;
    channel->Progress(0, std::nullopt, "started " + entry->name());

    ToolResult result;
    if (!roots.ok()) {
      const bool cancelled = roots.code() == StatusCode::kCancelled;
      result = dispatcher.Conclude(
          entry->name(), DumpJson(args), ctx,
          ToolResult::Error(roots.message(),
                            cancelled ? CallStatus::kCancelled : CallStatus::kBlocked,
                            cancelled ? "cancelled" : "client_roots"));
    } else if (auto pass = gate->Enter(
                   AdmitCall(*entry, args, ctx.services ? ctx.services->cwd() : ""), ctx.cancel)) {
      result = dispatcher.DispatchArgs(entry->name(), std::move(args), ctx);
      pass->Leave();
    } else {
      result = dispatcher.Conclude(
          entry->name(), DumpJson(args), ctx,
          ToolResult::Error("Cancelled before it started", CallStatus::kCancelled, "cancelled"));
    }
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - started);
    // Retired before the answer goes out: a client that sends its next request the moment it
    // reads this answer must not find the call still counted against max_calls_in_flight, nor
    // its id still in use.
    Retire(call);
    // Dropped when the tool reported progress up to or past 1 itself (progress only grows).
    if (!call->cancelled_by_client) channel->Progress(1, 1, "finished " + entry->name());
    channel->End();  // nothing of the call may follow its answer
    if (!call->cancelled_by_client) {
      outlet->Post(EncodeCallResult(call->id, result), Routing{call->key, true});
    } else {
      Unanswered(call->key);
    }
    if (outlet->LogEnabled(LogLevelRank("debug"))) {  // most clients never ask for debug
      Json data = Json::object();
      data["tool"] = entry->name();
      data["status"] = std::string(CallStatusName(result.status));
      data["ms"] = ms.count();
      SendLog("debug", "talaria.tools", data);
    }
  } catch (const std::exception& e) {
    LogError(std::string("mcp: tools/call failed: ") + e.what());
    Retire(call);
    channel->End();
    if (!call->cancelled_by_client) {
      outlet->Send(EncodeError(&call->id, kInternalError, "Internal error"),
                   Routing{call->key, true});
    } else {
      Unanswered(call->key);
    }
  }
  std::lock_guard lock(mu);
  call->returned = true;
  cv.notify_all();
}

// Moves the call to `finished`, where ReapFinished frees it once RunCall has returned (the answer
// may still be on its way out: a reader thread must never wait for that, or a client blocked
// writing to us while we block writing to it would deadlock). Idempotent.
void McpServer::Impl::Retire(Call* call) {
  std::lock_guard lock(mu);
  auto it = calls.find(call->key);
  if (it != calls.end() && it->second.get() == call) {
    finished.push_back(std::move(it->second));
    calls.erase(it);
  }
  cv.notify_all();
}

void McpServer::Impl::SendLog(std::string_view level, std::string_view logger, const Json& data) {
  {
    std::lock_guard lock(mu);
    if (state_ == State::kNew) return;
  }
  if (!outlet->LogEnabled(LogLevelRank(level))) return;
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

void McpServer::Impl::OnFeatureEvent(const FeatureEvent& event) {
  {
    std::lock_guard lock(mu);
    if (state_ != State::kReady) return;
    if (event.kind == FeatureEvent::Kind::kResourceUpdated && !subscriptions.contains(event.uri))
      return;
  }
  switch (event.kind) {
    case FeatureEvent::Kind::kResourceUpdated:
      Send(EncodeNotification("notifications/resources/updated",
                              Json::object({{"uri", event.uri}})));
      break;
    case FeatureEvent::Kind::kResourcesChanged:
      Send(EncodeNotification("notifications/resources/list_changed", Json()));
      break;
    case FeatureEvent::Kind::kPromptsChanged:
      Send(EncodeNotification("notifications/prompts/list_changed", Json()));
      break;
  }
}

void McpServer::Impl::FetchRoots() {
  if (!options.on_client_roots || !outlet->ClientSupports("roots")) return;
  uint64_t generation = 0;
  {
    std::lock_guard lock(mu);
    generation = ++roots_generation;
    roots_state = Roots::kPending;
    roots_deadline = std::chrono::steady_clock::now() + options.roots_timeout;
  }
  roots_fetch = std::jthread([this, generation](const std::stop_token& stop) {
    const auto deadline =
        std::chrono::steady_clock::now() +
        std::max<std::chrono::milliseconds>(options.roots_timeout, kRootsAnswerTimeout);
    auto answer = outlet->Request("roots/list", Json::object(), Routing{}, stop, deadline);
    if (stop.stop_requested()) return;  // a newer fetch, or shutdown
    std::string refusal;
    if (!answer) {
      LogWarn("mcp: roots/list failed: " + answer.error().message());
      refusal = "Refused: the client declared roots, but roots/list failed (" +
                answer.error().message() + "); its calls do not run until it names them.";
    } else {
      std::vector<std::string> paths;
      if (auto roots = answer->find("roots"); roots != answer->end() && roots->is_array()) {
        for (const Json& root : *roots) {
          if (!root.is_object() || !root.contains("uri") || !root["uri"].is_string()) continue;
          if (auto path = FileUriPath(root["uri"].get_ref<const std::string&>()))
            paths.push_back(std::move(*path));
        }
      }
      if (Status applied = options.on_client_roots(paths); !applied.ok())
        refusal = "Refused: " + applied.message();
    }
    std::lock_guard lock(mu);
    if (generation != roots_generation) return;
    roots_state = refusal.empty() ? Roots::kKnown : Roots::kRefused;
    roots_refusal = std::move(refusal);
    roots_cv.notify_all();
  });
}

Status McpServer::Impl::AwaitRoots(const std::stop_token& stop) {
  std::unique_lock lock(mu);
  while (roots_state == Roots::kPending && !stop.stop_requested() &&
         std::chrono::steady_clock::now() < roots_deadline) {
    // The deadline moves when a newer fetch starts; the loop picks that up.
    roots_cv.wait_until(lock, stop, roots_deadline,
                        [this] { return roots_state != Roots::kPending; });
  }
  switch (roots_state) {
    case Roots::kNone:
    case Roots::kKnown:
      return Status::Ok();
    case Roots::kRefused:
      return PermissionDeniedError(roots_refusal);
    case Roots::kPending:
      break;
  }
  if (stop.stop_requested())
    return CancelledError("Cancelled while waiting for the client's roots");
  return PermissionDeniedError(
      "Refused: the client declared roots but has not answered roots/list within " +
      std::to_string(options.roots_timeout.count()) +
      " ms; calls do not run until the client names its roots (answers roots/list), so that they "
      "never reach beyond them.");
}

void McpServer::Impl::ReapFinished() {
  std::vector<std::unique_ptr<Call>> done;
  {
    std::lock_guard lock(mu);
    auto returned = std::stable_partition(finished.begin(), finished.end(),
                                          [](const auto& c) { return !c->returned; });
    std::move(returned, finished.end(), std::back_inserter(done));
    finished.erase(returned, finished.end());
  }
}

void McpServer::Impl::Shutdown(std::chrono::milliseconds grace) {
  std::unique_lock lock(mu);
  shutting_down = true;
  cv.wait_for(lock, grace, [this] { return calls.empty(); });
  for (auto& [key, call] : calls) call->stop.request_stop();
  // Cancelled calls end promptly (children are killed; a wait for the client's answer ends);
  // warn if one does not.
  while (!cv.wait_for(lock, std::chrono::seconds(10), [this] { return calls.empty(); })) {
    LogWarn("mcp: waiting for " + std::to_string(calls.size()) + " cancelled tool call(s) to end");
  }
  // Including any still sending its answer.
  cv.wait(lock, [this] {
    return std::all_of(finished.begin(), finished.end(), [](const auto& c) { return c->returned; });
  });
  std::vector<std::unique_ptr<Call>> rest;
  rest.swap(finished);
  lock.unlock();
}

McpServer::McpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

McpServer::~McpServer() {
  {
    std::lock_guard lock(impl_->hook->mu);
    impl_->hook->impl = nullptr;
  }
  impl_->dispatcher.registry().RemoveListener(impl_->listener_id);
  if (impl_->options.features) impl_->options.features->RemoveListener(impl_->feature_listener_id);
  Shutdown();
  // Channels a tool kept past its call find the way out closed.
  impl_->outlet->Close();
}

Result<std::unique_ptr<McpServer>> McpServer::Create(Dispatcher& dispatcher,
                                                     const Toolsets& toolsets,
                                                     McpServerOptions options, MessageSink sink) {
  RoutedSink routed;
  if (sink)
    routed = [sink = std::move(sink)](std::string_view line, const Routing&) { sink(line); };
  return Create(dispatcher, toolsets, std::move(options), std::move(routed));
}

Result<std::unique_ptr<McpServer>> McpServer::Create(Dispatcher& dispatcher,
                                                     const Toolsets& toolsets,
                                                     McpServerOptions options, RoutedSink sink) {
  if (options.page_size == 0) return Err(InvalidArgumentError("page_size must be at least 1"));
  if (options.max_calls_in_flight == 0)
    return Err(InvalidArgumentError("max_calls_in_flight must be at least 1"));
  auto impl = std::make_unique<Impl>(dispatcher, toolsets, std::move(options), std::move(sink));
  auto current = impl->catalog.Current();
  if (!current) return Err(current.error());
  for (const CatalogTool& t : (*current)->tools) impl->exposed.push_back(t.entry->name());
  impl->hook->impl = impl.get();
  impl->listener_id = dispatcher.registry().AddListener([hook = impl->hook](const RegistryChange&) {
    std::lock_guard lock(hook->mu);
    if (hook->impl != nullptr) hook->impl->OnRegistryChange();
  });
  if (impl->options.features) {
    impl->feature_listener_id =
        impl->options.features->AddListener([hook = impl->hook](const FeatureEvent& event) {
          std::lock_guard lock(hook->mu);
          if (hook->impl != nullptr) hook->impl->OnFeatureEvent(event);
        });
  }
  return std::unique_ptr<McpServer>(new McpServer(std::move(impl)));
}

void McpServer::HandleMessage(std::string_view text) {
  if (IsBatchText(text)) {
    (void)HandleBatch(text);
    return;
  }
  Decoded decoded = DecodeMessage(text, impl_->options.limits);
  if (!decoded.ok()) {
    impl_->Send(EncodeError(decoded.error.id.get(), decoded.error.code, decoded.error.message));
    return;
  }
  HandleDecoded(*decoded.message);
}

void McpServer::HandleDecoded(const Message& m) {
  // A lone request reusing an id an open batch waits on: refused, and its refusal kept out of
  // the batch's array, or each answer would reach the other's sender.
  if (m.kind == MessageKind::kRequest && impl_->batches->AnyOpen()) {
    const std::string key = DumpJson(m.id());
    if (impl_->batches->IsOpen(key)) {
      impl_->outlet->Send(EncodeError(&m.id(), kInvalidRequest, IdInUse(key)),
                          Routing{key, true, /*outside_batch=*/true});
      return;
    }
  }
  impl_->Serve(m);
}

void McpServer::Impl::Serve(const Message& m) {
  ReapFinished();
  try {
    switch (m.kind) {
      case MessageKind::kRequest:
        HandleRequest(m);
        break;
      case MessageKind::kNotification:
        HandleNotification(m);
        break;
      case MessageKind::kResponse:
        // An answer to a request of ours (elicitation, sampling); a stray one is dropped.
        (void)outlet->Resolve(m);
        break;
    }
  } catch (const std::exception& e) {
    // Only a bug (or allocation failure) gets here; the peer still gets an answer.
    LogError(std::string("mcp: ") + m.method + ": " + e.what());
    if (m.kind == MessageKind::kRequest) Answer(m.id(), Error(kInternalError, "Internal error"));
  }
}

bool McpServer::HandleBatch(std::string_view text, std::string_view batch_key) {
  return impl_->HandleBatch(text, batch_key);
}

bool McpServer::Impl::HandleBatch(std::string_view text, std::string_view batch_key) {
  const Routing routing{batch_key, true};
  std::string version;
  {
    std::lock_guard lock(mu);
    version = protocol_version;
  }
  if (version != kBatchProtocolVersion) {
    outlet->Send(EncodeBatchRefusal(text, options.limits), routing);
    return true;
  }
  DecodedBatch batch = DecodeBatch(text, options.limits);
  if (!batch.ok()) {
    outlet->Send(EncodeError(batch.error->id.get(), batch.error->code, batch.error->message),
                 routing);
    return true;
  }
  // Every request's place is taken before any is served: a quick answer must not find its
  // batch complete while later requests are still unserved.
  std::vector<std::string> early;
  std::vector<std::string> requests;
  std::vector<const Message*> serve;
  std::set<std::string, std::less<>> keys;
  for (const Decoded& item : batch.items) {
    if (!item.ok()) {
      early.push_back(EncodeError(item.error.id.get(), item.error.code, item.error.message));
      continue;
    }
    const Message& m = *item.message;
    serve.push_back(&m);
    if (m.kind != MessageKind::kRequest) continue;
    std::string key = DumpJson(m.id());
    std::string refusal;
    if (m.method == "initialize") {
      refusal = "Invalid Request: initialize cannot be part of a batch";
    } else if (keys.contains(key) || batches->IsOpen(key) || InFlight(key)) {
      refusal = IdInUse(key);
    }
    if (!refusal.empty()) {
      early.push_back(EncodeError(&m.id(), kInvalidRequest, refusal));
      serve.pop_back();
      continue;
    }
    keys.insert(key);
    requests.push_back(std::move(key));
  }
  const bool answered = !requests.empty() || !early.empty();
  if (auto flush = batches->Open(std::string(batch_key), requests, std::move(early))) {
    outlet->Send(flush->line, routing);
  }
  for (const Message* m : serve) Serve(*m);
  return answered;
}

void McpServer::RejectMessage(int code, std::string_view message) {
  impl_->Send(EncodeError(nullptr, code, message));
}

void McpServer::Shutdown(std::chrono::milliseconds grace) { impl_->Shutdown(grace); }

void McpServer::SendLog(std::string_view level, std::string_view logger, const Json& data) {
  impl_->SendLog(level, logger, data);
}

Json McpServer::client_capabilities() const { return impl_->outlet->ClientCapabilities(); }

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
