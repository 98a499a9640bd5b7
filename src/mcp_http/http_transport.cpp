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

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "talaria/base/ascii.h"
#include "talaria/mcp/http_transport.h"
#include "talaria/base/log.h"

namespace talaria::mcp {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

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
void Refuse(httplib::Response& res, int status, int code, std::string_view message) {
  res.status = status;
  res.set_content(EncodeError(nullptr, code, message), "application/json");
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
bool FlushEvents(httplib::DataSink& sink, const Lines& lines, bool finish, Clock::time_point& last_write) {
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
Accepts ParseAccept(const httplib::Request& req) {
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
  std::deque<std::string> events;       // Guarded by Session::mu. Related messages before the response.
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
    if (auto it = pending.find(p->id_key); it != pending.end() && it->second == p) pending.erase(it);
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

  std::mutex mu;
  std::condition_variable cv;  // a response, event or queued message arrived; or the end
  std::map<std::string, std::shared_ptr<Pending>, std::less<>> pending;  // Guarded by mu. By the id's JSON.
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
  TransportImpl(HttpTransportOptions o, ServerFactory f) : options(std::move(o)), factory(std::move(f)) {}

  void Install();
  httplib::Server::HandlerResponse Screen(const httplib::Request& req, httplib::Response& res);
  bool HostAllowed(const httplib::Request& req) const;
  bool OriginAllowed(const std::string& origin) const;
  bool Authorized(const httplib::Request& req) const;
  void Post(const httplib::Request& req, httplib::Response& res);
  // A POSTed JSON array: a batch, served under protocol 2025-03-26 and refused otherwise.
  void PostBatch(const httplib::Request& req, const Accepts& accepts, httplib::Response& res);
  void Initialize(httplib::Response& res, const Message& m);
  void Get(const httplib::Request& req, httplib::Response& res);
  void Delete(const httplib::Request& req, httplib::Response& res);
  // The session named by the request's header; null after answering 400 or 404.
  std::shared_ptr<Session> FindSession(const httplib::Request& req, httplib::Response& res);
  // False after answering 400 for an unsupported MCP-Protocol-Version.
  bool CheckVersion(const httplib::Request& req, httplib::Response& res) const;
  // Waits for the first message for the request, then answers with JSON or an event stream.
  // `id`: the request's (null for a batch), for the error when no answer comes in time.
  void Answer(std::shared_ptr<Session> session, std::shared_ptr<Pending> p, const Json& id,
              const Accepts& accepts, httplib::Response& res);
  void AnswerStream(std::shared_ptr<Session> session, std::shared_ptr<Pending> p, httplib::Response& res);
  // Frees room for a new session: ends idle expired ones. False when still full.
  bool MakeRoom();
  void Stop();

  const HttpTransportOptions options;
  const ServerFactory factory;
  httplib::Server http;
  int port = 0;
  std::vector<std::string> allowed_hosts;    // lowercased Host values
  std::vector<std::string> allowed_origins;  // lowercased
  std::atomic<bool> stopping{false};
  std::atomic<bool> listen_done{false};
  std::atomic<uint64_t> next_batch{1};  // batch answers route to "batch:<n>", which no id dumps to
  std::jthread listener;

  std::mutex stop_mu;  // Stop() runs once
  bool stopped = false;  // Guarded by stop_mu.

  mutable std::mutex mu;
  std::map<std::string, std::shared_ptr<Session>> sessions;  // Guarded by mu.
};

bool TransportImpl::HostAllowed(const httplib::Request& req) const {
  if (!req.has_header("Host")) return false;
  const std::string host = AsciiLower(req.get_header_value("Host"));
  return std::find(allowed_hosts.begin(), allowed_hosts.end(), host) != allowed_hosts.end();
}

bool TransportImpl::OriginAllowed(const std::string& origin) const {
  const std::string o = AsciiLower(origin);
  if (std::find(allowed_origins.begin(), allowed_origins.end(), o) != allowed_origins.end()) return true;
  std::string_view rest(o);
  if (rest.starts_with("http://")) {
    rest.remove_prefix(7);
  } else if (rest.starts_with("https://")) {
    rest.remove_prefix(8);
  } else {
    return false;  // "null" (sandboxed pages, file://) and anything odd
  }
  std::string_view host;
  if (rest.starts_with('[')) {
    const size_t close = rest.find(']');
    if (close == std::string_view::npos) return false;
    host = rest.substr(0, close + 1);
    rest.remove_prefix(close + 1);
  } else {
    const size_t colon = rest.find(':');
    host = rest.substr(0, colon);
    rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon);
  }
  if (!rest.empty()) {
    // Only ":PORT" may follow the host in an origin.
    if (rest.front() != ':' || rest.size() == 1 ||
        !std::all_of(rest.begin() + 1, rest.end(),
                     [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; })) {
      return false;
    }
  }
  return IsLoopbackHost(host);
}

bool TransportImpl::Authorized(const httplib::Request& req) const {
  if (options.bearer_token.empty()) return true;
  if (!req.has_header("Authorization")) return false;
  const std::string value = req.get_header_value("Authorization");
  if (value.size() < 7 || AsciiLower(std::string_view(value).substr(0, 7)) != "bearer ") return false;
  std::string_view token(value);
  token.remove_prefix(7);
  while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
  while (!token.empty() && token.back() == ' ') token.remove_suffix(1);
  return ConstantTimeEquals(token, options.bearer_token);
}

httplib::Server::HandlerResponse TransportImpl::Screen(const httplib::Request& req, httplib::Response& res) {
  using HR = httplib::Server::HandlerResponse;
  // DNS rebinding: a page on another site that resolves its name to 127.0.0.1 still sends its
  // own Host (and Origin).
  if (!HostAllowed(req)) {
    Refuse(res, 403, kBadRequest, "Forbidden: Host header not allowed");
    return HR::Handled;
  }
  const bool has_origin = req.has_header("Origin");
  const std::string origin = has_origin ? req.get_header_value("Origin") : std::string();
  if (has_origin && !OriginAllowed(origin)) {
    Refuse(res, 403, kBadRequest, "Forbidden: Origin not allowed");
    return HR::Handled;
  }
  if (has_origin) {
    res.set_header("Access-Control-Allow-Origin", origin);
    res.set_header("Vary", "Origin");
    res.set_header("Access-Control-Expose-Headers", "Mcp-Session-Id");
  }
  if (req.method == "OPTIONS") {  // a browser's CORS preflight carries no credentials
    res.status = 204;
    res.set_header("Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS");
    res.set_header("Access-Control-Allow-Headers",
                   "Content-Type, Accept, Authorization, Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID");
    res.set_header("Access-Control-Max-Age", "600");
    return HR::Handled;
  }
  if (!Authorized(req)) {
    res.set_header("WWW-Authenticate", "Bearer");
    Refuse(res, 401, kBadRequest, "Unauthorized: a valid bearer token is required");
    return HR::Handled;
  }
  if (req.method != "POST" && req.method != "GET" && req.method != "DELETE") {
    res.set_header("Allow", "GET, POST, DELETE, OPTIONS");
    Refuse(res, 405, kBadRequest, "Method Not Allowed");
    return HR::Handled;
  }
  if (stopping) {
    Refuse(res, 503, kBadRequest, "Service Unavailable: the server is stopping");
    return HR::Handled;
  }
  return HR::Unhandled;
}

std::shared_ptr<Session> TransportImpl::FindSession(const httplib::Request& req, httplib::Response& res) {
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

bool TransportImpl::CheckVersion(const httplib::Request& req, httplib::Response& res) const {
  // Absent: the client predates the header; 2025-03-26 is assumed, which we serve.
  if (!req.has_header(kVersionHeader)) return true;
  const std::string version = req.get_header_value(kVersionHeader);
  const auto supported = SupportedProtocolVersions();
  if (std::find(supported.begin(), supported.end(), version) != supported.end()) return true;
  std::string list;
  for (std::string_view v : supported) list += (list.empty() ? "" : ", ") + std::string(v);
  Refuse(res, 400, kBadRequest,
         "Bad Request: unsupported MCP-Protocol-Version \"" + version + "\" (supported: " + list + ")");
  return false;
}

void TransportImpl::Post(const httplib::Request& req, httplib::Response& res) {
  if (req.has_header("Content-Type") && !AsciiLower(req.get_header_value("Content-Type")).starts_with("application/json")) {
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
    res.set_content(EncodeError(decoded.error.id.get(), decoded.error.code, decoded.error.message), "application/json");
    return;
  }
  const Message& m = *decoded.message;
  if (m.kind == MessageKind::kRequest && m.method == "initialize") return Initialize(res, m);
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
    res.set_content(EncodeError(&m.id(), kInvalidRequest,
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

void TransportImpl::PostBatch(const httplib::Request& req, const Accepts& accepts,
                                    httplib::Response& res) {
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

void TransportImpl::Answer(std::shared_ptr<Session> session, std::shared_ptr<Pending> p, const Json& id,
                                 const Accepts& accepts, httplib::Response& res) {
  // The choice between a JSON body and an event stream waits for the first thing to send: a
  // response alone goes as JSON (when accepted); a related message first (progress, a log line,
  // an elicitation request) opens the stream, which carries the response last.
  const auto deadline = Clock::now() + options.request_timeout;
  std::unique_lock lock(session->mu);
  while (!p->response && p->events.empty() && !session->ended && !stopping && Clock::now() < deadline) {
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
  if (ended) return Refuse(res, 404, kSessionNotFound, "Session not found: it ended before the response");
  if (stopping) return Refuse(res, 503, kBadRequest, "Service Unavailable: the server is stopping");
  res.status = 504;
  res.set_content(EncodeError(&id, kInternalError, "Internal error: no response within the request timeout"),
                  "application/json");
}

void TransportImpl::AnswerStream(std::shared_ptr<Session> session, std::shared_ptr<Pending> p,
                                       httplib::Response& res) {
  res.set_header("Cache-Control", "no-cache");
  auto last_write = std::make_shared<Clock::time_point>(Clock::now());
  res.set_chunked_content_provider(
      "text/event-stream",
      [this, session, p, last_write](size_t, httplib::DataSink& sink) {
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
      [session, p](bool) { session->Forget(p); });
}

void TransportImpl::Initialize(httplib::Response& res, const Message& m) {
  if (!MakeRoom()) {
    Refuse(res, 503, kBadRequest,
           "Service Unavailable: too many sessions (" + std::to_string(options.max_sessions) + ")");
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
  auto server = factory([raw = session.get()](std::string_view line, const Routing& routing) {
    raw->Route(line, routing);
  });
  if (!server) {
    LogError("mcp http: cannot start a session: " + server.error().message());
    res.status = 500;
    res.set_content(EncodeError(&m.id(), kInternalError, "Internal error: " + server.error().message()),
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
      res.set_content(EncodeError(&m.id(), kInternalError, "Internal error: initialize was not answered"),
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

void TransportImpl::Get(const httplib::Request& req, httplib::Response& res) {
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
      [this, session, last_write](size_t, httplib::DataSink& sink) {
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
          session->cv.wait_for(lock, kWaitSlice,
                               [&] { return !session->queued.empty() || session->ended || stopping; });
          out.swap(session->queued);
          session->queued_bytes = 0;
          finish = session->ended || stopping;
          session->last_used = Clock::now();
        }
        return FlushEvents(sink, out, finish, **last_write);
      },
      [session](bool) {
        std::lock_guard lock(session->mu);
        session->stream_open = false;
        session->last_used = Clock::now();
      });
}

void TransportImpl::Delete(const httplib::Request& req, httplib::Response& res) {
  std::shared_ptr<Session> session = FindSession(req, res);
  if (!session || !CheckVersion(req, res)) return;
  {
    std::lock_guard lock(mu);
    auto it = sessions.find(session->id);
    if (it == sessions.end() || it->second != session) return Refuse(res, 404, kSessionNotFound, "Session not found");
    sessions.erase(it);
  }
  session->End(options.shutdown_grace);
  res.status = 200;
}

bool TransportImpl::MakeRoom() {
  std::vector<std::shared_ptr<Session>> expired;
  bool room = false;
  {
    std::lock_guard lock(mu);
    if (sessions.size() < options.max_sessions) return true;
    const auto cutoff = Clock::now() - options.session_idle_timeout;
    for (auto it = sessions.begin(); it != sessions.end();) {
      if (it->second->Idle(cutoff)) {
        expired.push_back(std::move(it->second));
        it = sessions.erase(it);
      } else {
        ++it;
      }
    }
    room = sessions.size() < options.max_sessions;
  }
  for (auto& s : expired) {
    LogInfo("mcp http: ending idle session " + s->id.substr(0, 8));
    s->End(0ms);
  }
  return room;
}

void TransportImpl::Install() {
  http.new_task_queue = [n = options.worker_threads] { return new httplib::ThreadPool(n); };
  http.set_tcp_nodelay(true);
  http.set_payload_max_length(options.limits.max_bytes);
  http.set_read_timeout(30, 0);
  // Screened in the handlers, not in a pre-routing hook: by then httplib has read the body, so
  // a refused request leaves no unread bytes on a kept-alive connection.
  using Method = void (TransportImpl::*)(const httplib::Request&, httplib::Response&);
  auto screened = [this](Method serve) {
    return [this, serve](const httplib::Request& req, httplib::Response& res) {
      if (Screen(req, res) == httplib::Server::HandlerResponse::Unhandled) (this->*serve)(req, res);
    };
  };
  // Screen answers OPTIONS and methods other than POST, GET and DELETE itself.
  auto refused = [this](const httplib::Request& req, httplib::Response& res) { (void)Screen(req, res); };
  const std::string path(kEndpoint);
  http.Post(path, screened(&TransportImpl::Post));
  http.Get(path, screened(&TransportImpl::Get));  // HEAD too
  http.Delete(path, screened(&TransportImpl::Delete));
  http.Put(path, refused);
  http.Patch(path, refused);
  http.Options(path, refused);
  // Statuses httplib sets by itself (413 for a body over the cap, 400 for a broken request)
  // get a JSON-RPC error body like ours.
  http.set_error_handler(httplib::Server::HandlerWithResponse([](const httplib::Request&, httplib::Response& res) {
    if (!res.body.empty() || res.is_chunked_content_provider_) return httplib::Server::HandlerResponse::Unhandled;
    std::string what = "HTTP error " + std::to_string(res.status);
    if (res.status == 413) what = "Payload Too Large: the message exceeds the size limit";
    if (res.status == 404) what = "Not Found: the MCP endpoint is /mcp";
    res.set_content(EncodeError(nullptr, res.status == 413 ? kInvalidRequest : kBadRequest, what), "application/json");
    return httplib::Server::HandlerResponse::Handled;
  }));
  http.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
    std::string what = "unknown exception";
    try {
      if (ep) std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    LogError("mcp http: " + what);
    Refuse(res, 500, kInternalError, "Internal error");
  });
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
  // stop() is a no-op until the listener is running, so repeat it until the listener is out.
  const auto until = Clock::now() + 10s;
  while (!listen_done && Clock::now() < until) {
    http.stop();
    std::this_thread::sleep_for(5ms);
  }
  if (!listen_done) LogWarn("mcp http: the listener did not stop within 10 s");
  if (listener.joinable()) listener.join();  // the worker threads are joined by then
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
    return "http://" + Bracketed(impl_->options.host) + ":" + std::to_string(impl_->port) + std::string(kEndpoint);
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

Result<std::unique_ptr<HttpTransport>> StartHttpTransport(HttpTransportOptions options, ServerFactory factory) {
  if (!factory) return Err(InvalidArgumentError("no server factory"));
  if (options.host.empty()) return Err(InvalidArgumentError("no host to bind"));
  if (options.port < 0 || options.port > 65535) return Err(InvalidArgumentError("port out of range"));
  if (options.worker_threads == 0 || options.max_sessions == 0) {
    return Err(InvalidArgumentError("worker_threads and max_sessions must be at least 1"));
  }
  if (!IsLoopbackHost(options.host) && options.bearer_token.empty()) {
    return Err(InvalidArgumentError("refusing to serve on " + options.host +
                                    ", which is not a loopback address, without a bearer token (--token): "
                                    "anyone who can reach it could run tools"));
  }
  auto impl = std::make_unique<TransportImpl>(std::move(options), std::move(factory));
  impl->Install();
  const HttpTransportOptions& o = impl->options;
  errno = 0;
  if (o.port == 0) {
    impl->port = impl->http.bind_to_any_port(o.host);
  } else {
    impl->port = impl->http.bind_to_port(o.host, o.port) ? o.port : -1;
  }
  if (impl->port <= 0) {
    const int err = errno;
    return Err(UnavailableError("cannot listen on " + Bracketed(o.host) + ":" + std::to_string(o.port) +
                                (err != 0 ? std::string(": ") + std::strerror(err) : std::string())));
  }
  const std::string port = std::to_string(impl->port);
  for (const std::string& name : {std::string("localhost"), std::string("127.0.0.1"), std::string("[::1]"),
                                  AsciiLower(Bracketed(o.host))}) {
    impl->allowed_hosts.push_back(name + ":" + port);
    if (impl->port == 80) impl->allowed_hosts.push_back(name);
  }
  for (const std::string& h : o.allowed_hosts) impl->allowed_hosts.push_back(AsciiLower(h));
  for (const std::string& origin : o.allowed_origins) impl->allowed_origins.push_back(AsciiLower(origin));
  TransportImpl* raw = impl.get();
  impl->listener = std::jthread([raw] {
    if (!raw->http.listen_after_bind() && !raw->stopping) LogError("mcp http: the listener failed");
    raw->listen_done = true;
  });
  return std::unique_ptr<HttpTransport>(new StreamableHttpTransport(std::move(impl)));
}

}  // namespace talaria::mcp
