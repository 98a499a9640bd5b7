// The Streamable HTTP server transport (in libtalaria_http.so; see mcp/http_module.h).
#include "mcp/http_module.h"

#include <sys/random.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include <nlohmann/json.hpp>

#include "mcp/http/http_server.h"
#include "talaria/base/ascii.h"
#include "talaria/base/log.h"
#include "talaria/mcp/http_transport.h"

namespace talaria::mcp {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using http_internal::HttpRequest;
using http_internal::HttpResponse;
using http_internal::StreamSink;

constexpr std::string_view kEndpoint = "/mcp";
constexpr const char* kSessionHeader = "Mcp-Session-Id";
constexpr const char* kVersionHeader = "Mcp-Protocol-Version";
// Error codes for transport-level refusals, as the reference SDK uses them.
constexpr int kBadRequest = -32000;
constexpr int kSessionNotFound = -32001;
// Messages for a session's GET stream wait here while none is open (oldest dropped first).
constexpr size_t kMaxQueuedMessages = 256;
constexpr size_t kMaxQueuedBytes = size_t{4} << 20;
// An idle event stream sends a comment this often, so a vanished client is noticed.
constexpr auto kKeepAliveInterval = 15s;
// Waits are sliced so the stop flag is seen promptly even if a wake-up is missed.
constexpr auto kWaitSlice = 1s;

std::string Bracketed(const std::string& host) {
  return host.find(':') != std::string::npos ? "[" + host + "]" : host;
}

// Time depends only on the secret's length, not on where the strings differ.
bool ConstantTimeEquals(std::string_view given, std::string_view secret) {
  volatile unsigned char diff = given.size() == secret.size() ? 0 : 1;
  for (size_t i = 0; i < secret.size(); ++i) {
    const unsigned char g = i < given.size() ? static_cast<unsigned char>(given[i]) : 0;
    diff = diff | (g ^ static_cast<unsigned char>(secret[i]));
  }
  return diff == 0;
}

Result<std::string> NewSessionId() {
  unsigned char bytes[32];
  size_t got = 0;
  while (got < sizeof bytes) {
    const ssize_t n = ::getrandom(bytes + got, sizeof bytes - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Err(InternalError(std::string("getrandom: ") + std::strerror(errno)));
    got += static_cast<size_t>(n);
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id;
  id.reserve(2 * sizeof bytes);
  for (unsigned char b : bytes) {
    id.push_back(kHex[b >> 4]);
    id.push_back(kHex[b & 15]);
  }
  return id;
}

// A transport-level refusal: the HTTP status plus a JSON-RPC error body with "id": null.
void Refuse(HttpResponse& res, int status, int code, std::string_view message) {
  res.status = status;
  res.set_content(EncodeError(nullptr, code, message), "application/json");
}

// A request whose Origin passed the screen may read the answer in a browser.
void AddCorsHeaders(const HttpRequest& req, HttpResponse& res) {
  if (!req.has_header("Origin")) return;
  res.set_header("Access-Control-Allow-Origin", req.get_header_value("Origin"));
  res.set_header("Vary", "Origin");
  res.set_header("Access-Control-Expose-Headers", "Mcp-Session-Id");
}

std::string SseEvent(std::string_view line) {
  std::string event;
  event.reserve(line.size() + 24);
  event.append("event: message\ndata: ");
  event.append(line);  // one line: the encoders never emit a raw newline
  event.append("\n\n");
  return event;
}

// One round of an event stream: `lines` as events, then the end of the stream (`finish`) or,
// after kKeepAliveInterval without a write, a comment that tells a vanished client from a quiet
// one. False once the client is gone.
template <typename Lines>
bool FlushEvents(StreamSink& sink, const Lines& lines, bool finish, Clock::time_point& last_write) {
  for (const std::string& line : lines) {
    const std::string event = SseEvent(line);
    if (!sink.write(event.data(), event.size())) return false;
    last_write = Clock::now();
  }
  if (finish) {
    sink.done();
    return true;
  }
  if (Clock::now() - last_write >= kKeepAliveInterval) {
    static constexpr std::string_view kPing = ": keepalive\n\n";
    if (!sink.write(kPing.data(), kPing.size())) return false;
    last_write = Clock::now();
  }
  return true;
}

// What an Accept header allows (no header: anything).
struct Accepts {
  bool json = true;
  bool sse = false;
};
Accepts ParseAccept(const HttpRequest& req) {
  if (!req.has_header("Accept")) return {};
  const std::string accept = AsciiLower(req.get_header_value("Accept"));
  const bool any = accept.find("*/*") != std::string::npos;
  Accepts a;
  a.json = any || accept.find("application/json") != std::string::npos ||
           accept.find("application/*") != std::string::npos;
  a.sse = accept.find("text/event-stream") != std::string::npos;
  if (!a.sse && (any || accept.find("text/*") != std::string::npos)) a.sse = true;
  return a;
}

// One POSTed request waiting for its response.
struct Pending {
  std::string id_key;
  // The client accepts an event stream: messages related to the request (progress, log
  // messages, requests to the client) travel on it, ahead of the response.
  bool events_ok = false;
  std::deque<std::string> events;  // Guarded by Session::mu. Related messages before the response.
  std::optional<std::string> response;  // Guarded by Session::mu.
};

// One MCP session: its McpServer and the routing of what it sends.
struct Session {
  explicit Session(std::string session_id) : id(std::move(session_id)), last_used(Clock::now()) {}

  // The McpServer's sink: a response to its POST, a related message to that POST's event
  // stream, anything else to the GET stream (queued while none is open).
  void Route(std::string_view line, const Routing& routing) {
    std::lock_guard lock(mu);
    if (!routing.request.empty()) {
      auto it = pending.find(routing.request);
      if (routing.is_response) {
        // No one waiting (the client went away): dropped; a disconnect is not a cancellation.
        if (it == pending.end()) return;
        std::shared_ptr<Pending> p = it->second;
        p->response.emplace(line);
        pending.erase(it);
        cv.notify_all();
        return;
      }
      if (it != pending.end() && it->second->events_ok) {
        it->second->events.emplace_back(line);
        cv.notify_all();
        return;
      }
    }
    if (ended) return;
    queued.emplace_back(line);
    queued_bytes += line.size();
    while (queued.size() > kMaxQueuedMessages || queued_bytes > kMaxQueuedBytes) {
      queued_bytes -= queued.front().size();
      queued.pop_front();
    }
    cv.notify_all();
  }

  // Registers a request's waiter; null when the id is already waiting for an answer.
  std::shared_ptr<Pending> Expect(std::string id_key, bool events_ok) {
    auto p = std::make_shared<Pending>();
    p->id_key = std::move(id_key);
    p->events_ok = events_ok;
    std::lock_guard lock(mu);
    if (pending.contains(p->id_key)) return nullptr;
    pending.emplace(p->id_key, p);
    return p;
  }

  void Forget(const std::shared_ptr<Pending>& p) {
    std::lock_guard lock(mu);
    if (auto it = pending.find(p->id_key); it != pending.end() && it->second == p)
      pending.erase(it);
  }

  // Serves one message; false once the session has ended.
  bool Handle(const Message& message) {
    std::lock_guard lock(handle_mu);
    if (!server) return false;
    server->HandleDecoded(message);
    return true;
  }

  // Serves a JSON-RPC batch whose answer routes to `batch_key`: nullopt once the session has
  // ended, else whether an answer will come.
  std::optional<bool> HandleBatch(std::string_view body, std::string_view batch_key) {
    std::lock_guard lock(handle_mu);
    if (!server) return std::nullopt;
    return server->HandleBatch(body, batch_key);
  }

  std::string ProtocolVersion() {
    std::lock_guard lock(handle_mu);
    return server ? server->protocol_version() : std::string();
  }

  void Touch() {
    std::lock_guard lock(mu);
    last_used = Clock::now();
  }

  bool Idle(Clock::time_point cutoff) {
    std::lock_guard lock(mu);
    return pending.empty() && !stream_open && last_used < cutoff;
  }

  // Wakes every waiter and stream of this session, then shuts its server down.
  void End(std::chrono::milliseconds grace) {
    {
      std::lock_guard lock(mu);
      ended = true;
      queued.clear();
      queued_bytes = 0;
      cv.notify_all();
    }
    std::unique_ptr<McpServer> doomed;
    {
      std::lock_guard lock(handle_mu);
      doomed = std::move(server);
    }
    if (doomed) doomed->Shutdown(grace);
    // Destroyed here, outside every lock: its last responses may still route through us.
  }

  void Wake() {
    std::lock_guard lock(mu);
    cv.notify_all();
  }

  const std::string id;
  std::string peer;                           // the client address that created it
  std::chrono::milliseconds idle_timeout{0};  // ended after this long unused

  std::mutex mu;
  std::condition_variable cv;  // a response, event or queued message arrived; or the end
  std::map<std::string, std::shared_ptr<Pending>, std::less<>>
      pending;                     // Guarded by mu. By the id's JSON.
  std::deque<std::string> queued;  // Guarded by mu. For the GET stream.
  size_t queued_bytes = 0;         // Guarded by mu.
  bool stream_open = false;        // Guarded by mu. A GET stream is attached.
  bool ended = false;              // Guarded by mu.
  Clock::time_point last_used;     // Guarded by mu.

  std::mutex handle_mu;  // one HandleMessage at a time, in arrival order
  // Last member, so it goes first: its sink points at this session. Guarded by handle_mu.
  std::unique_ptr<McpServer> server;
};

struct TransportImpl {
  TransportImpl(HttpTransportOptions o, ServerFactory f)
      : options(std::move(o)), factory(std::move(f)) {}

  // Run by the server's gate right after the headers, before any body byte is read: Host,
  // Origin, CORS preflight, authentication, path and method. A response refuses the request.
  std::optional<HttpResponse> Screen(const HttpRequest& req) const;
  // Every screened request that reaches a worker.
  void Handle(const HttpRequest& req, HttpResponse& res);
  bool HostAllowed(const HttpRequest& req) const;
  bool OriginAllowed(const std::string& origin) const;
  bool Authorized(const HttpRequest& req) const;
  void Post(const HttpRequest& req, HttpResponse& res);
  // A POSTed JSON array: a batch, served under protocol 2025-03-26 and refused otherwise.
  void PostBatch(const HttpRequest& req, const Accepts& accepts, HttpResponse& res);
  void Initialize(const HttpRequest& req, HttpResponse& res, const Message& m);
  void Get(const HttpRequest& req, HttpResponse& res);
  void Delete(const HttpRequest& req, HttpResponse& res);
  // The session named by the request's header; null after answering 400 or 404.
  std::shared_ptr<Session> FindSession(const HttpRequest& req, HttpResponse& res);
  // False after answering 400 for an unsupported MCP-Protocol-Version.
  bool CheckVersion(const HttpRequest& req, HttpResponse& res) const;
  // Waits for the first message for the request, then answers with JSON or an event stream.
  // `id`: the request's (null for a batch), for the error when no answer comes in time.
  void Answer(std::shared_ptr<Session> session, std::shared_ptr<Pending> p, const Json& id,
              const Accepts& accepts, HttpResponse& res);
  void AnswerStream(std::shared_ptr<Session> session, std::shared_ptr<Pending> p,
                    HttpResponse& res);
  // Room for a new session of `peer`: ends expired idle sessions first. False when the server
  // or the address is still at its cap.
  bool MakeRoom(const std::string& peer);
  // Ends the sessions idle past their timeout (minutes for sessions made without a token).
  void ReapIdle();
  void Stop();

  const HttpTransportOptions options;
  const ServerFactory factory;
  std::unique_ptr<http_internal::HttpServer> http;
  int port = 0;
  std::vector<std::string> allowed_hosts;    // lowercased Host values
  std::vector<std::string> allowed_origins;  // lowercased: the server's own, then --allow-origin
  std::atomic<bool> stopping{false};
  std::atomic<uint64_t> next_batch{1};  // batch answers route to "batch:<n>", which no id dumps to

  std::mutex stop_mu;    // Stop() runs once
  bool stopped = false;  // Guarded by stop_mu.

  mutable std::mutex mu;
  std::condition_variable_any reap_cv;                       // with mu; Stop wakes the reaper
  std::map<std::string, std::shared_ptr<Session>> sessions;  // Guarded by mu.
  std::jthread reaper;                                       // last: stopped first
};

bool TransportImpl::HostAllowed(const HttpRequest& req) const {
  if (!req.has_header("Host")) return false;
  const std::string host = AsciiLower(req.get_header_value("Host"));
  return std::find(allowed_hosts.begin(), allowed_hosts.end(), host) != allowed_hosts.end();
}

bool TransportImpl::OriginAllowed(const std::string& origin) const {
  // Only the server's own origin (a page it served, were it to serve one) and the ones named
  // with --allow-origin: any other local port is another program, whose page must not drive
  // the tools.
  const std::string o = AsciiLower(origin);
  return std::find(allowed_origins.begin(), allowed_origins.end(), o) != allowed_origins.end();
}

bool TransportImpl::Authorized(const HttpRequest& req) const {
  if (options.bearer_token.empty()) return true;
  if (!req.has_header("Authorization")) return false;
  const std::string value = req.get_header_value("Authorization");
  if (value.size() < 7 || AsciiLower(std::string_view(value).substr(0, 7)) != "bearer ")
    return false;
  std::string_view token(value);
  token.remove_prefix(7);
  while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
  while (!token.empty() && token.back() == ' ') token.remove_suffix(1);
  return ConstantTimeEquals(token, options.bearer_token);
}

std::optional<HttpResponse> TransportImpl::Screen(const HttpRequest& req) const {
  HttpResponse res;
  if (req.path != kEndpoint) {
    Refuse(res, 404, kBadRequest, "Not Found: the MCP endpoint is /mcp");
    return res;
  }
  // DNS rebinding: a page on another site that resolves its name to 127.0.0.1 still sends its
  // own Host (and Origin).
  if (!HostAllowed(req)) {
    Refuse(res, 403, kBadRequest, "Forbidden: Host header not allowed");
    return res;
  }
  const bool has_origin = req.has_header("Origin");
  if (has_origin && !OriginAllowed(req.get_header_value("Origin"))) {
    Refuse(res, 403, kBadRequest, "Forbidden: Origin not allowed");
    return res;
  }
  if (req.method == "OPTIONS") {  // a browser's CORS preflight carries no credentials
    res.status = 204;
    AddCorsHeaders(req, res);
    res.set_header("Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS");
    res.set_header(
        "Access-Control-Allow-Headers",
        "Content-Type, Accept, Authorization, Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID");
    res.set_header("Access-Control-Max-Age", "600");
    return res;
  }
  if (!Authorized(req)) {
    res.set_header("WWW-Authenticate", "Bearer");
    Refuse(res, 401, kBadRequest, "Unauthorized: a valid bearer token is required");
    AddCorsHeaders(req, res);
    return res;
  }
  if (req.method != "POST" && req.method != "GET" && req.method != "DELETE") {
    res.set_header("Allow", "GET, POST, DELETE, OPTIONS");
    Refuse(res, 405, kBadRequest, "Method Not Allowed");
    return res;
  }
  if (stopping) {
    Refuse(res, 503, kBadRequest, "Service Unavailable: the server is stopping");
    return res;
  }
  return std::nullopt;
}

void TransportImpl::Handle(const HttpRequest& req, HttpResponse& res) {
  AddCorsHeaders(req, res);
  if (req.method == "POST") return Post(req, res);
  if (req.method == "GET") return Get(req, res);
  return Delete(req, res);  // the screen lets nothing else through
}

std::shared_ptr<Session> TransportImpl::FindSession(const HttpRequest& req, HttpResponse& res) {
  if (!req.has_header(kSessionHeader)) {
    Refuse(res, 400, kBadRequest, "Bad Request: Mcp-Session-Id header is required");
    return nullptr;
  }
  const std::string id = req.get_header_value(kSessionHeader);
  std::shared_ptr<Session> session;
  {
    std::lock_guard lock(mu);
    if (auto it = sessions.find(id); it != sessions.end()) session = it->second;
  }
  if (!session) Refuse(res, 404, kSessionNotFound, "Session not found");
  return session;
}

bool TransportImpl::CheckVersion(const HttpRequest& req, HttpResponse& res) const {
  // Absent: the client predates the header; 2025-03-26 is assumed, which we serve.
  if (!req.has_header(kVersionHeader)) return true;
  const std::string version = req.get_header_value(kVersionHeader);
  const auto supported = SupportedProtocolVersions();
  if (std::find(supported.begin(), supported.end(), version) != supported.end()) return true;
  std::string list;
  for (std::string_view v : supported) list += (list.empty() ? "" : ", ") + std::string(v);
  Refuse(res, 400, kBadRequest,
         "Bad Request: unsupported MCP-Protocol-Version \"" + version + "\" (supported: " + list +
             ")");
  return false;
}

void TransportImpl::Post(const HttpRequest& req, HttpResponse& res) {
  if (req.has_header("Content-Type") &&
      !AsciiLower(req.get_header_value("Content-Type")).starts_with("application/json")) {
    Refuse(res, 415, kBadRequest, "Unsupported Media Type: the body must be application/json");
    return;
  }
  const Accepts accepts = ParseAccept(req);
  if (!accepts.json && !accepts.sse) {
    Refuse(res, 406, kBadRequest, "Not Acceptable: accept application/json or text/event-stream");
    return;
  }
  if (IsBatchText(req.body)) return PostBatch(req, accepts, res);
  const Decoded decoded = DecodeMessage(req.body, options.limits);
  if (!decoded.ok()) {
    res.status = 400;
    res.set_content(EncodeError(decoded.error.id.get(), decoded.error.code, decoded.error.message),
                    "application/json");
    return;
  }
  const Message& m = *decoded.message;
  if (m.kind == MessageKind::kRequest && m.method == "initialize") return Initialize(req, res, m);
  std::shared_ptr<Session> session = FindSession(req, res);
  if (!session || !CheckVersion(req, res)) return;
  session->Touch();
  if (m.kind != MessageKind::kRequest) {
    if (!session->Handle(m)) return Refuse(res, 404, kSessionNotFound, "Session not found");
    res.status = 202;
    return;
  }
  std::shared_ptr<Pending> p = session->Expect(DumpJson(m.id()), accepts.sse);
  if (!p) {
    res.status = 400;
    res.set_content(
        EncodeError(&m.id(), kInvalidRequest,
                    "Invalid Request: request id " + DumpJson(m.id()) + " is already in use"),
        "application/json");
    return;
  }
  if (!session->Handle(m)) {
    session->Forget(p);
    return Refuse(res, 404, kSessionNotFound, "Session not found");
  }
  Answer(std::move(session), std::move(p), m.id(), accepts, res);
}

void TransportImpl::PostBatch(const HttpRequest& req, const Accepts& accepts, HttpResponse& res) {
  std::shared_ptr<Session> session = FindSession(req, res);
  if (!session || !CheckVersion(req, res)) return;
  session->Touch();
  if (session->ProtocolVersion() != kBatchProtocolVersion) {
    res.status = 400;
    res.set_content(EncodeBatchRefusal(req.body, options.limits), "application/json");
    return;
  }
  // A key no request id can dump to (an id's JSON is quoted or a number).
  const std::string key = "batch:" + std::to_string(next_batch.fetch_add(1));
  std::shared_ptr<Pending> p = session->Expect(key, accepts.sse);
  const std::optional<bool> answered = session->HandleBatch(req.body, key);
  if (!answered) {
    session->Forget(p);
    return Refuse(res, 404, kSessionNotFound, "Session not found");
  }
  if (!*answered) {  // notifications and responses only
    session->Forget(p);
    res.status = 202;
    return;
  }
  Answer(std::move(session), std::move(p), Json(), accepts, res);
}

void TransportImpl::Answer(std::shared_ptr<Session> session, std::shared_ptr<Pending> p,
                           const Json& id, const Accepts& accepts, HttpResponse& res) {
  // The choice between a JSON body and an event stream waits for the first thing to send: a
  // response alone goes as JSON (when accepted); a related message first (progress, a log line,
  // an elicitation request) opens the stream, which carries the response last.
  const auto deadline = Clock::now() + options.request_timeout;
  std::unique_lock lock(session->mu);
  while (!p->response && p->events.empty() && !session->ended && !stopping &&
         Clock::now() < deadline) {
    session->cv.wait_for(lock, kWaitSlice);
  }
  const bool stream = !p->events.empty() || (p->response && !accepts.json);
  if (p->response && !stream) {
    res.set_content(*p->response, "application/json");
    return;
  }
  if (stream) {
    lock.unlock();
    return AnswerStream(std::move(session), std::move(p), res);
  }
  const bool ended = session->ended;
  lock.unlock();
  session->Forget(p);
  if (ended)
    return Refuse(res, 404, kSessionNotFound, "Session not found: it ended before the response");
  if (stopping) return Refuse(res, 503, kBadRequest, "Service Unavailable: the server is stopping");
  res.status = 504;
  res.set_content(
      EncodeError(&id, kInternalError, "Internal error: no response within the request timeout"),
      "application/json");
}

void TransportImpl::AnswerStream(std::shared_ptr<Session> session, std::shared_ptr<Pending> p,
                                 HttpResponse& res) {
  res.set_header("Cache-Control", "no-cache");
  auto last_write = std::make_shared<Clock::time_point>(Clock::now());
  res.set_chunked_content_provider(
      "text/event-stream",
      [this, session, p, last_write](StreamSink& sink) {
        std::vector<std::string> out;
        bool finish = false;
        {
          std::unique_lock lock(session->mu);
          session->cv.wait_for(lock, kWaitSlice, [&] {
            return !p->events.empty() || p->response || session->ended || stopping;
          });
          while (!p->events.empty()) {
            out.push_back(std::move(p->events.front()));
            p->events.pop_front();
          }
          if (p->response) {
            out.push_back(std::move(*p->response));
            finish = true;
          } else if (session->ended || stopping) {
            finish = true;
          }
        }
        return FlushEvents(sink, out, finish, *last_write);
      },
      // However the stream ends, the request stops waiting (a late response is dropped).
      [session, p] { session->Forget(p); });
}

void TransportImpl::Initialize(const HttpRequest& req, HttpResponse& res, const Message& m) {
  if (!MakeRoom(req.peer)) {
    Refuse(res, 503, kBadRequest,
           "Service Unavailable: too many sessions (" + std::to_string(options.max_sessions) +
               " in all, " + std::to_string(options.max_sessions_per_address) +
               " per client address)");
    return;
  }
  auto id = NewSessionId();
  if (!id) {
    res.status = 500;
    res.set_content(EncodeError(&m.id(), kInternalError, "Internal error: " + id.error().message()),
                    "application/json");
    return;
  }
  auto session = std::make_shared<Session>(std::move(*id));
  session->peer = req.peer;
  // Without a token anyone who can connect may open sessions: theirs expire in minutes.
  session->idle_timeout = options.bearer_token.empty() ? options.anonymous_session_idle_timeout
                                                       : options.session_idle_timeout;
  auto server = factory([raw = session.get()](std::string_view line, const Routing& routing) {
    raw->Route(line, routing);
  });
  if (!server) {
    LogError("mcp http: cannot start a session: " + server.error().message());
    res.status = 500;
    res.set_content(
        EncodeError(&m.id(), kInternalError, "Internal error: " + server.error().message()),
        "application/json");
    return;
  }
  session->server = std::move(*server);
  std::shared_ptr<Pending> p = session->Expect(DumpJson(m.id()), false);
  session->Handle(m);
  // initialize is answered before HandleMessage returns.
  std::optional<std::string> answer;
  {
    std::lock_guard lock(session->mu);
    answer = std::move(p->response);
  }
  bool accepted = false;
  if (answer) {
    auto parsed = ParseJson(*answer);
    accepted = parsed && parsed->is_object() && parsed->contains("result");
  }
  if (!accepted) {
    session->End(0ms);
    if (!answer) {
      res.status = 500;
      res.set_content(
          EncodeError(&m.id(), kInternalError, "Internal error: initialize was not answered"),
          "application/json");
      return;
    }
    res.set_content(*answer, "application/json");  // the JSON-RPC error, no session
    return;
  }
  {
    std::lock_guard lock(mu);
    sessions.emplace(session->id, session);
  }
  res.set_header(kSessionHeader, session->id);
  res.set_content(*answer, "application/json");
}

void TransportImpl::Get(const HttpRequest& req, HttpResponse& res) {
  std::shared_ptr<Session> session = FindSession(req, res);
  if (!session || !CheckVersion(req, res)) return;
  if (!ParseAccept(req).sse || !req.has_header("Accept")) {
    Refuse(res, 406, kBadRequest, "Not Acceptable: the GET stream needs Accept: text/event-stream");
    return;
  }
  {
    std::lock_guard lock(session->mu);
    if (session->ended) return Refuse(res, 404, kSessionNotFound, "Session not found");
    if (session->stream_open) {
      return Refuse(res, 409, kBadRequest, "Conflict: this session already has an open GET stream");
    }
    session->stream_open = true;
    session->last_used = Clock::now();
  }
  res.set_header("Cache-Control", "no-cache");
  auto last_write = std::make_shared<std::optional<Clock::time_point>>();
  res.set_chunked_content_provider(
      "text/event-stream",
      [this, session, last_write](StreamSink& sink) {
        if (!last_write->has_value()) {
          // A first comment so the client sees the stream is open before any message.
          static constexpr std::string_view kOpen = ": stream open\n\n";
          if (!sink.write(kOpen.data(), kOpen.size())) return false;
          *last_write = Clock::now();
        }
        std::deque<std::string> out;
        bool finish = false;
        {
          std::unique_lock lock(session->mu);
          session->cv.wait_for(lock, kWaitSlice, [&] {
            return !session->queued.empty() || session->ended || stopping;
          });
          out.swap(session->queued);
          session->queued_bytes = 0;
          finish = session->ended || stopping;
          session->last_used = Clock::now();
        }
        return FlushEvents(sink, out, finish, **last_write);
      },
      [session] {
        std::lock_guard lock(session->mu);
        session->stream_open = false;
        session->last_used = Clock::now();
      });
}

void TransportImpl::Delete(const HttpRequest& req, HttpResponse& res) {
  std::shared_ptr<Session> session = FindSession(req, res);
  if (!session || !CheckVersion(req, res)) return;
  {
    std::lock_guard lock(mu);
    auto it = sessions.find(session->id);
    if (it == sessions.end() || it->second != session)
      return Refuse(res, 404, kSessionNotFound, "Session not found");
    sessions.erase(it);
  }
  session->End(options.shutdown_grace);
  res.status = 200;
}

bool TransportImpl::MakeRoom(const std::string& peer) {
  ReapIdle();
  std::lock_guard lock(mu);
  const size_t of_peer =
      static_cast<size_t>(std::count_if(sessions.begin(), sessions.end(), [&](const auto& entry) {
        return entry.second->peer == peer;
      }));
  return sessions.size() < options.max_sessions && of_peer < options.max_sessions_per_address;
}

void TransportImpl::ReapIdle() {
  std::vector<std::shared_ptr<Session>> expired;
  {
    std::lock_guard lock(mu);
    const auto now = Clock::now();
    for (auto it = sessions.begin(); it != sessions.end();) {
      if (it->second->Idle(now - it->second->idle_timeout)) {
        expired.push_back(std::move(it->second));
        it = sessions.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (auto& s : expired) {
    LogInfo("mcp http: ending idle session " + s->id.substr(0, 8));
    s->End(0ms);
  }
}

void TransportImpl::Stop() {
  {
    std::lock_guard lock(stop_mu);
    if (stopped) return;
    stopped = true;
  }
  stopping = true;
  std::vector<std::shared_ptr<Session>> all;
  {
    std::lock_guard lock(mu);
    for (auto& [id, s] : sessions) all.push_back(s);
  }
  for (auto& s : all) s->Wake();  // waiting requests and open streams end now
  if (reaper.joinable()) {
    reaper.request_stop();
    reap_cv.notify_all();
    reaper.join();
  }
  if (http) http->Stop();  // joins the workers: every request has been answered or dropped
  {
    std::lock_guard lock(mu);
    all.clear();
    for (auto& [id, s] : sessions) all.push_back(std::move(s));
    sessions.clear();
  }
  for (auto& s : all) s->End(options.shutdown_grace);
}

// The HttpTransport the module hands out.
class StreamableHttpTransport final : public HttpTransport {
 public:
  explicit StreamableHttpTransport(std::unique_ptr<TransportImpl> impl) : impl_(std::move(impl)) {}
  ~StreamableHttpTransport() override { Stop(); }

  int port() const override { return impl_->port; }
  std::string url() const override {
    return "http://" + Bracketed(impl_->options.host) + ":" + std::to_string(impl_->port) +
           std::string(kEndpoint);
  }
  size_t session_count() const override {
    std::lock_guard lock(impl_->mu);
    return impl_->sessions.size();
  }
  void Stop() override { impl_->Stop(); }

 private:
  std::unique_ptr<TransportImpl> impl_;
};

}  // namespace

Result<std::unique_ptr<HttpTransport>> StartHttpTransport(HttpTransportOptions options,
                                                          ServerFactory factory) {
  if (!factory) return Err(InvalidArgumentError("no server factory"));
  if (options.host.empty()) return Err(InvalidArgumentError("no host to bind"));
  if (options.port < 0 || options.port > 65535)
    return Err(InvalidArgumentError("port out of range"));
  if (options.worker_threads == 0 || options.max_sessions == 0 ||
      options.max_sessions_per_address == 0 || options.max_connections_per_address == 0) {
    return Err(
        InvalidArgumentError("worker_threads, max_sessions, max_sessions_per_address and "
                             "max_connections_per_address must be at least 1"));
  }
  if (options.reap_interval <= std::chrono::milliseconds::zero()) {
    return Err(InvalidArgumentError("reap_interval must be positive"));
  }
  if (!IsLoopbackHost(options.host) && options.bearer_token.empty()) {
    return Err(
        InvalidArgumentError("refusing to serve on " + options.host +
                             ", which is not a loopback address, without a bearer token (--token): "
                             "anyone who can reach it could run tools"));
  }
  auto impl = std::make_unique<TransportImpl>(std::move(options), std::move(factory));
  TransportImpl* raw = impl.get();
  const HttpTransportOptions& o = impl->options;
  http_internal::HttpServerOptions server;
  server.host = o.host;
  server.port = o.port;
  server.worker_threads = o.worker_threads;
  server.header_timeout = o.header_timeout;
  server.body_timeout = o.body_timeout;
  server.max_body_bytes = o.limits.max_bytes;
  server.max_connections_per_address = o.max_connections_per_address;
  auto bound = http_internal::HttpServer::Bind(server);
  if (!bound) return Err(bound.error());
  impl->http = std::move(*bound);
  impl->port = impl->http->port();
  const std::string port = std::to_string(impl->port);
  std::vector<std::string> own_hosts = {"localhost", "127.0.0.1", "[::1]"};
  const std::string bound_name = AsciiLower(Bracketed(o.host));
  if (std::find(own_hosts.begin(), own_hosts.end(), bound_name) == own_hosts.end())
    own_hosts.push_back(bound_name);
  for (const std::string& name : own_hosts) {
    impl->allowed_hosts.push_back(name + ":" + port);
    if (impl->port == 80) impl->allowed_hosts.push_back(name);
    // The server's own origin: the scheme, a name of the address it listens on, its port.
    impl->allowed_origins.push_back("http://" + name + ":" + port);
  }
  for (const std::string& h : o.allowed_hosts) impl->allowed_hosts.push_back(AsciiLower(h));
  for (const std::string& origin : o.allowed_origins)
    impl->allowed_origins.push_back(AsciiLower(origin));
  impl->http->Run([raw](const HttpRequest& req) { return raw->Screen(req); },
                  [raw](const HttpRequest& req, HttpResponse& res) { raw->Handle(req, res); });
  impl->reaper = std::jthread([raw](std::stop_token stop) {
    std::unique_lock lock(raw->mu);
    while (!stop.stop_requested()) {
      raw->reap_cv.wait_for(lock, stop, raw->options.reap_interval, [] { return false; });
      if (stop.stop_requested()) break;
      lock.unlock();
      raw->ReapIdle();
      lock.lock();
    }
  });
  return std::unique_ptr<HttpTransport>(new StreamableHttpTransport(std::move(impl)));
}

}  // namespace talaria::mcp
