#include "mcp/http/client_http.h"

#include <algorithm>
#include <condition_variable>
#include <iterator>
#include <optional>
#include <utility>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "mcp/client_sse.h"
#include "talaria/base/ascii.h"
#include "talaria/base/log.h"

namespace talaria::mcp::client_internal {
namespace {

// httplib's error names ("Connection") read like a cut-off message in a warning.
std::string DescribeHttpError(httplib::Error error) {
  switch (error) {
    case httplib::Error::Connection:
      return "the connection failed (the name does not resolve or nothing listens)";
    case httplib::Error::ConnectionTimeout:
      return "connecting timed out";
    case httplib::Error::SSLConnection:
      return "the TLS handshake failed";
    case httplib::Error::SSLServerVerification:
      return "the server's TLS certificate was not accepted";
    case httplib::Error::Read:
      return "reading the response failed";
    case httplib::Error::Write:
      return "sending the request failed";
    default:
      return "HTTP client error " + httplib::to_string(error);
  }
}

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr const char* kSessionHeader = "Mcp-Session-Id";
constexpr const char* kVersionHeader = "Mcp-Protocol-Version";
// Notifications, answers to server requests, notifications/cancelled and DELETE are small and
// must not hold anything up for long.
constexpr auto kSideRequestTimeout = 5s;
// An event stream is held open indefinitely; Close stops it.
constexpr auto kStreamReadTimeout = 24h;
constexpr size_t kErrorBodySnippet = 300;
// How often the GET stream is retried after failing (not after ending normally) before the
// client does without it (keepalive pings still notice a dead server).
constexpr int kMaxStreamFailures = 5;

bool IsEventStream(const httplib::Response& res) {
  return AsciiLower(res.get_header_value("Content-Type")).starts_with("text/event-stream");
}

// Visible ASCII only (the spec's rule for session ids; also applied to the version we echo):
// anything else is refused rather than written into a header.
bool ValidSessionId(std::string_view id) {
  if (id.empty() || id.size() > 1024) return false;
  return std::all_of(id.begin(), id.end(), [](char c) { return c >= 0x21 && c <= 0x7e; });
}

// Seconds and microseconds for httplib's timeouts: what is left until `deadline`, at least 1 ms.
std::pair<time_t, time_t> Remaining(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::microseconds>(deadline - Clock::now());
  left = std::clamp<std::chrono::microseconds>(left, 1ms, std::chrono::hours(24 * 365));
  return {static_cast<time_t>(left.count() / 1000000), static_cast<time_t>(left.count() % 1000000)};
}

void Configure(httplib::Client& client, const HttpServerUrl& url, Clock::time_point deadline,
               std::chrono::microseconds read_timeout, bool keep_alive = false) {
  const auto [sec, usec] = Remaining(deadline);
  client.set_tcp_nodelay(true);
  client.set_keep_alive(keep_alive);
  client.set_follow_location(false);  // a redirect must not carry our headers elsewhere
  client.set_connection_timeout(sec, usec);
  client.set_write_timeout(sec, usec);
  client.set_read_timeout(static_cast<time_t>(read_timeout.count() / 1000000),
                          static_cast<time_t>(read_timeout.count() % 1000000));
  if (!url.user.empty() || !url.password.empty()) client.set_basic_auth(url.user, url.password);
}

// The text of a refused request, for the error: "HTTP 500: <JSON-RPC message or body start>".
std::string DescribeRefusal(int status, const std::string& body) {
  std::string out = "HTTP ";
  out += std::to_string(status);
  if (auto doc = ParseJson(body); doc && doc->is_object()) {
    auto err = doc->find("error");
    if (err != doc->end() && err->is_object()) {
      auto message = err->find("message");
      if (message != err->end() && message->is_string()) {
        out += ": ";
        out += message->get<std::string>().substr(0, kErrorBodySnippet);
        return out;
      }
    }
  }
  std::string snippet = body.substr(0, kErrorBodySnippet);
  std::replace_if(
      snippet.begin(), snippet.end(), [](char c) { return c == '\n' || c == '\r'; }, ' ');
  if (!snippet.empty()) {
    out += ": ";
    out += snippet;
  }
  return out;
}

}  // namespace

struct HttpConnection::Exchange {
  const Json* expect_id = nullptr;
  std::optional<Json> response;  // the awaited response document
  int status = 0;
  bool event_stream = false;
  bool too_big = false;
  std::string body;  // a JSON answer, or the start of a refusal
  std::string session_id;
  std::unique_ptr<SseParser> sse;
};

Result<std::unique_ptr<HttpConnection>> HttpConnection::Open(HttpConnectionOptions options,
                                                             ConnectionCallbacks callbacks) {
  HttpServerUrl url = TALARIA_TRY(ParseServerUrl(options.url));
  std::unique_ptr<HttpConnection> conn(new HttpConnection());
  conn->url_ = std::move(url);
  conn->display_url_ = RedactUrl(options.url);
  conn->options_ = std::move(options);
  conn->callbacks_ = std::move(callbacks);
  return conn;
}

HttpConnection::~HttpConnection() { Close(std::chrono::milliseconds(500)); }

std::unique_ptr<httplib::Client> HttpConnection::TakeClient() {
  std::vector<IdleClient> stale;  // closed outside the lock
  {
    std::lock_guard lock(idle_mu_);
    const auto cutoff = Clock::now() - kMaxIdle;
    const auto fresh = std::find_if(idle_.begin(), idle_.end(),
                                    [&](const IdleClient& c) { return c.since >= cutoff; });
    std::move(idle_.begin(), fresh, std::back_inserter(stale));
    idle_.erase(idle_.begin(), fresh);
    if (!idle_.empty()) {
      std::unique_ptr<httplib::Client> client = std::move(idle_.back().client);
      idle_.pop_back();
      return client;
    }
  }
  return std::make_unique<httplib::Client>(url_.origin);
}

void HttpConnection::KeepClient(std::unique_ptr<httplib::Client> client) {
  std::lock_guard lock(idle_mu_);
  if (!idle_closed_ && idle_.size() < kMaxIdleClients)
    idle_.push_back(IdleClient{std::move(client), Clock::now()});
}

bool HttpConnection::closed() const {
  std::lock_guard lock(mu_);
  return closed_;
}

std::string HttpConnection::ExitDescription() const {
  std::lock_guard lock(mu_);
  return close_reason_;
}

void HttpConnection::MarkClosed(std::string why) {
  bool notify = false;
  {
    std::lock_guard lock(mu_);
    if (!closed_) {
      closed_ = true;
      close_reason_ = std::move(why);
    }
    notify = !closed_notified_;
    closed_notified_ = true;
  }
  if (notify && callbacks_.on_closed) callbacks_.on_closed();
}

bool HttpConnection::HandleIncoming(const Message& message, Exchange* exchange) {
  switch (message.kind) {
    case MessageKind::kResponse:
      if (exchange != nullptr && exchange->expect_id != nullptr &&
          message.id() == *exchange->expect_id) {
        exchange->response = *message.doc;
        return true;
      }
      LogInfo("mcp client: ignoring a response to no request of ours from " + display_url_);
      return false;
    case MessageKind::kNotification:
      if (callbacks_.on_notification) callbacks_.on_notification(message.method, message.params());
      return false;
    case MessageKind::kRequest: {
      // The client offers no capabilities, so only ping is served.
      const std::string answer =
          message.method == "ping"
              ? EncodeResult(message.id(), Json::object())
              : EncodeError(&message.id(), kMethodNotFound, "Method not found: " + message.method);
      if (auto sent = Post(answer, nullptr, Clock::now() + kSideRequestTimeout, {}); !sent) {
        LogInfo("mcp client: answering a server request failed: " + sent.error().message());
      }
      return false;
    }
  }
  return false;
}

Result<Json> HttpConnection::Post(const std::string& body, const Json* expect_id,
                                  TimePoint deadline, const std::stop_token& cancel) {
  std::string session_id;
  std::string version;
  {
    std::lock_guard lock(mu_);
    if (closed_) return Err(UnavailableError("the server connection is closed"));
    session_id = session_id_;
    version = protocol_version_;
  }
  std::unique_ptr<httplib::Client> kept = TakeClient();
  httplib::Client& client = *kept;
  if (!client.is_valid())
    return Err(InvalidArgumentError("cannot use the server URL " + display_url_));
  // The socket's own read timeout is a backstop a little past the deadline: the watchdog ends the
  // request at the deadline and says why.
  const auto left =
      std::chrono::duration_cast<std::chrono::microseconds>(deadline - Clock::now()) + 1s;
  Configure(client, url_, deadline,
            std::clamp<std::chrono::microseconds>(left, 1ms, std::chrono::hours(24)),
            /*keep_alive=*/true);

  httplib::Request req;
  req.method = "POST";
  req.path = url_.target;
  for (const auto& [name, value] : options_.headers) req.set_header(name, value);
  req.set_header("Accept", "application/json, text/event-stream");
  req.set_header("Content-Type", "application/json");
  if (!session_id.empty()) req.set_header(kSessionHeader, session_id);
  if (!version.empty()) req.set_header(kVersionHeader, version);
  req.body = body;

  Exchange ex;
  ex.expect_id = expect_id;
  const size_t cap = options_.max_message_bytes;
  RequestWatch::Watched watchdog = watch_.Watch(client, deadline, cancel);
  req.response_handler = [&](const httplib::Response& res) {
    ex.status = res.status;
    ex.event_stream = IsEventStream(res);
    ex.session_id = res.get_header_value(kSessionHeader);
    if (ex.event_stream) ex.sse = std::make_unique<SseParser>(cap);
    return !watchdog.fired();
  };
  req.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
    if (watchdog.fired()) return false;
    if (ex.event_stream && ex.status / 100 == 2) {
      bool found = false;
      const bool ok = ex.sse->Feed(std::string_view(data, n), [&](const SseEvent& event) {
        if (event.type != "message" || event.data.empty()) return true;
        Decoded decoded = DecodeMessage(event.data, MessageLimits{cap});
        if (!decoded.ok()) {
          LogWarn("mcp client: ignoring a malformed event from " + display_url_ + ": " +
                  decoded.error.message);
          return true;
        }
        found = HandleIncoming(*decoded.message, &ex);
        return !found;
      });
      if (!ok) ex.too_big = true;
      return ok && !found;  // our response is in: stop reading (the server may keep the stream)
    }
    const size_t keep = ex.status / 100 == 2 ? cap : kErrorBodySnippet * 4;
    if (ex.body.size() + n > keep) {
      if (ex.status / 100 == 2) {
        ex.too_big = true;
        return false;
      }
      ex.body.append(data, std::min(n, keep - std::min(keep, ex.body.size())));
      return false;
    }
    ex.body.append(data, n);
    return true;
  };
  httplib::Response res;
  httplib::Error error = httplib::Error::Success;
  (void)client.send(req, res, error);
  const Stopped stopped = watchdog.Finish();
  // Only a connection whose answer was read to its end is fit for the next request.
  if (stopped == Stopped::kNo && error == httplib::Error::Success && !ex.too_big)
    KeepClient(std::move(kept));

  // Only initialize's answer names the session (sent while we have none); later answers may
  // repeat it.
  if (session_id.empty() && !ex.session_id.empty() && ex.status / 100 == 2) {
    if (!ValidSessionId(ex.session_id)) {
      return Err(UnavailableError("the server sent a malformed " + std::string(kSessionHeader) +
                                  " header"));
    }
    std::lock_guard lock(mu_);
    session_id_ = ex.session_id;
  }
  if (ex.response) return std::move(*ex.response);
  if (ex.too_big) {
    return Err(ResourceExhaustedError("the server sent a message over the " + std::to_string(cap) +
                                      "-byte limit"));
  }
  if (stopped == Stopped::kNo && error != httplib::Error::Success && Clock::now() >= deadline) {
    return Err(DeadlineExceededError("the request timed out"));
  }
  switch (stopped) {
    case Stopped::kDeadline:
      return Err(DeadlineExceededError("the request timed out"));
    case Stopped::kCancelled:
      return Err(CancelledError("the request was cancelled"));
    case Stopped::kClosed:
      return Err(UnavailableError("the server connection is closed"));
    case Stopped::kNo:
      break;
  }
  if (ex.status == 0) {
    std::string what = "cannot reach " + display_url_ + ": " + DescribeHttpError(error);
    if (error == httplib::Error::Connection || error == httplib::Error::ConnectionTimeout ||
        error == httplib::Error::SSLConnection || error == httplib::Error::SSLServerVerification) {
      MarkClosed(what);
    }
    return Err(UnavailableError(what));
  }
  if (ex.status == 404 && !session_id.empty()) {
    MarkClosed("the server ended the session (HTTP 404)");
    return Err(UnavailableError("the server ended the session (HTTP 404)"));
  }
  if (ex.status / 100 != 2)
    return Err(FailedPreconditionError(DescribeRefusal(ex.status, ex.body)));
  if (error != httplib::Error::Success && error != httplib::Error::Canceled) {
    return Err(UnavailableError("reading the answer from " + display_url_ +
                                " failed: " + httplib::to_string(error)));
  }
  if (expect_id == nullptr) return Json();  // a notification or response: 202 (or any 2xx)
  if (ex.event_stream)
    return Err(UnavailableError("the server's event stream ended without the response"));
  if (ex.status == 202 || ex.body.empty())
    return Err(UnavailableError("the server accepted the request but sent no response"));
  Decoded decoded = DecodeMessage(ex.body, MessageLimits{cap});
  if (!decoded.ok())
    return Err(UnavailableError("the server's answer is not JSON-RPC: " + decoded.error.message));
  if (!HandleIncoming(*decoded.message, &ex)) {
    return Err(
        UnavailableError("the server's answer holds no response to request " + expect_id->dump()));
  }
  return std::move(*ex.response);
}

Result<Json> HttpConnection::Call(std::string_view method, Json params, TimePoint deadline,
                                  std::stop_token cancel) {
  const Json id = next_id_++;
  const std::string request = EncodeRequest(id, method, params);
  const bool initialize = method == "initialize";
  if (initialize) {
    std::lock_guard lock(mu_);
    session_id_.clear();
    protocol_version_.clear();
  }
  auto answer = Post(request, &id, deadline, cancel);
  if (!answer) {
    const StatusCode code = answer.error().code();
    if ((code == StatusCode::kDeadlineExceeded || code == StatusCode::kCancelled) && !initialize) {
      (void)Notify(
          "notifications/cancelled",
          Json{{"requestId", id},
               {"reason", code == StatusCode::kDeadlineExceeded ? "timed out" : "cancelled"}});
    }
    return Err(answer.error());
  }
  Result<Json> result = ResultOfResponse(*answer);
  if (initialize && result) {
    // Every later request names the negotiated version.
    auto v = result->find("protocolVersion");
    if (v != result->end() && v->is_string() && ValidSessionId(v->get<std::string>())) {
      std::lock_guard lock(mu_);
      protocol_version_ = v->get<std::string>();
    }
  }
  return result;
}

Status HttpConnection::Notify(std::string_view method, const Json& params) {
  auto sent =
      Post(EncodeNotification(method, params), nullptr, Clock::now() + kSideRequestTimeout, {});
  if (!sent) return sent.error();
  return {};
}

void HttpConnection::Initialized(const std::string& protocol_version, const Json& capabilities) {
  (void)protocol_version;
  bool list_changed = false;
  if (capabilities.is_object()) {
    auto tools = capabilities.find("tools");
    if (tools != capabilities.end() && tools->is_object()) {
      auto lc = tools->find("listChanged");
      list_changed = lc != tools->end() && lc->is_boolean() && lc->get<bool>();
    }
  }
  std::lock_guard lock(close_mu_);
  if (list_changed && !stream_.joinable() && !closed()) {
    stream_ = std::jthread([this](const std::stop_token& stop) { StreamLoop(stop); });
  }
}

void HttpConnection::StreamLoop(const std::stop_token& stop) {
  SseParser parser(options_.max_message_bytes);
  int failures = 0;
  while (!stop.stop_requested() && !closed()) {
    std::string session_id;
    std::string version;
    {
      std::lock_guard lock(mu_);
      session_id = session_id_;
      version = protocol_version_;
    }
    httplib::Client client(url_.origin);
    Configure(client, url_, Clock::now() + 10s, kStreamReadTimeout);
    httplib::Request req;
    req.method = "GET";
    req.path = url_.target;
    for (const auto& [name, value] : options_.headers) req.set_header(name, value);
    req.set_header("Accept", "text/event-stream");
    if (!session_id.empty()) req.set_header(kSessionHeader, session_id);
    if (!version.empty()) req.set_header(kVersionHeader, version);
    if (!parser.last_event_id().empty()) req.set_header("Last-Event-ID", parser.last_event_id());
    int status = 0;
    bool is_stream = false;
    bool overflow = false;
    RequestWatch::Watched watchdog = watch_.Watch(client, Clock::time_point::max(), stop);
    req.response_handler = [&](const httplib::Response& res) {
      status = res.status;
      is_stream = IsEventStream(res);
      return status == 200 && is_stream;
    };
    req.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
      if (watchdog.fired()) return false;
      failures = 0;
      const bool ok = parser.Feed(std::string_view(data, n), [&](const SseEvent& event) {
        if (event.type != "message" || event.data.empty()) return true;
        Decoded decoded = DecodeMessage(event.data, MessageLimits{options_.max_message_bytes});
        if (decoded.ok()) (void)HandleIncoming(*decoded.message, nullptr);
        return true;
      });
      overflow = !ok;
      return ok;
    };
    httplib::Response res;
    httplib::Error error = httplib::Error::Success;
    (void)client.send(req, res, error);
    if (watchdog.Finish() != Stopped::kNo) return;
    if (status == 405) return;  // the server offers no stream; keepalive pings watch it
    if (status == 404 && !session_id.empty()) {
      MarkClosed("the server ended the session (HTTP 404)");
      return;
    }
    if (status == 0 &&
        (error == httplib::Error::Connection || error == httplib::Error::ConnectionTimeout)) {
      MarkClosed("lost the connection to " + display_url_ + ": " + httplib::to_string(error));
      return;
    }
    if (overflow) {
      LogWarn("mcp client: " + display_url_ +
              " sent an event over the size limit; dropping its event stream");
      parser = SseParser(options_.max_message_bytes);
    }
    if (status != 200 || !is_stream || overflow) {
      if (++failures >= kMaxStreamFailures) {
        LogWarn("mcp client: giving up the event stream of " + display_url_ + " (HTTP " +
                std::to_string(status) + ")");
        return;
      }
    }
    // Ended (the server may close it after a `retry:` hint) or failed: reopen after a pause.
    const auto pause = parser.retry().value_or(1s) * (failures + 1);
    std::mutex mu;
    std::condition_variable_any cv;
    std::unique_lock lock(mu);
    cv.wait_for(lock, stop, std::min<std::chrono::milliseconds>(pause, 60s), [] { return false; });
  }
}

void HttpConnection::Close(std::chrono::milliseconds grace) {
  std::lock_guard close_lock(close_mu_);
  std::string session_id;
  bool was_open = false;
  {
    std::lock_guard lock(mu_);
    was_open = !closed_;
    closed_ = true;
    closed_notified_ = true;  // our own Close is no news for the supervisor
    session_id = std::exchange(session_id_, std::string());
  }
  close_source_.request_stop();
  {
    std::lock_guard lock(idle_mu_);
    idle_closed_ = true;
    idle_.clear();  // their sockets close here
  }
  if (stream_.joinable()) {
    stream_.request_stop();
    if (stream_.get_id() != std::this_thread::get_id()) stream_.join();
  }
  if (!was_open || session_id.empty()) return;
  // End the session politely; a server that does not answer in time is simply left.
  httplib::Client client(url_.origin);
  const auto wait = std::clamp<std::chrono::milliseconds>(grace, 100ms, kSideRequestTimeout);
  Configure(client, url_, Clock::now() + wait, wait);
  httplib::Headers headers;
  for (const auto& [name, value] : options_.headers) headers.emplace(name, value);
  headers.emplace(kSessionHeader, session_id);
  std::string version;
  {
    std::lock_guard lock(mu_);
    version = protocol_version_;
  }
  if (!version.empty()) headers.emplace(kVersionHeader, version);
  (void)client.Delete(url_.target, headers);
}

}  // namespace talaria::mcp::client_internal
