// The MCP client's Streamable HTTP transport: the SSE parser, URL handling and credential
// masking as units; HttpConnection and the manager against a scripted server on 127.0.0.1
// (httplib) that answers the way hostile or broken servers do.
#include "mcp/http/client_http.h"
#include "mcp/http/request_watch.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <poll.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>

#include "mcp/client_internal.h"
#include "mcp/client_sse.h"
#include "mcp/client_test_util.h"
#include "support/loopback_listener.h"
#include "talaria/core/registry.h"
#include "talaria/mcp/client.h"

namespace talaria::mcp::client_internal {
namespace {

using namespace std::chrono_literals;
using talaria::mcp::client_testing::Dispatched;
using talaria::mcp::client_testing::FastRetries;
using talaria::mcp::client_testing::WaitUntil;
using Clock = std::chrono::steady_clock;
using talaria::test_support::ThreadIds;

std::vector<SseEvent> FeedAll(SseParser& parser, const std::vector<std::string>& chunks) {
  std::vector<SseEvent> events;
  for (const auto& chunk : chunks) {
    EXPECT_TRUE(parser.Feed(chunk, [&](const SseEvent& e) {
      events.push_back(e);
      return true;
    }));
  }
  return events;
}

TEST(SseParser, SplitsEventsAcrossChunksAndLineEndings) {
  SseParser parser(1024);
  auto events =
      FeedAll(parser, {"id: 1\r", "\ndata: {\"a\":", "1}\r\n\r", "\n: keep-alive\n\n",
                       "event: other\ndata: x\ndata:y\n\nretry: 1500\nid: 7\ndata:  z\r\r"});
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].data, "{\"a\":1}");
  EXPECT_EQ(events[0].type, "message");
  EXPECT_EQ(events[0].id, "1");
  EXPECT_EQ(events[1].type, "other");
  EXPECT_EQ(events[1].data, "x\ny");
  EXPECT_EQ(events[2].data, " z");  // only one leading space is dropped
  EXPECT_EQ(parser.last_event_id(), "7");
  EXPECT_EQ(parser.retry(), 1500ms);
}

TEST(SseParser, RefusesAnEndlessLineOrEvent) {
  SseParser line(100);
  std::string long_line = "data: ";
  long_line.append(200, 'x');
  EXPECT_FALSE(line.Feed(long_line, [](const SseEvent&) { return true; }));
  EXPECT_FALSE(line.Feed("\n\n", [](const SseEvent&) { return true; }));  // stays failed
  SseParser event(100);
  bool ok = true;
  for (int i = 0; i < 20 && ok; ++i)
    ok = event.Feed("data: 0123456789\n", [](const SseEvent&) { return true; });
  EXPECT_FALSE(ok);
}

TEST(HttpUrl, ParsesAndRedacts) {
  auto url = ParseServerUrl("https://user:p%40ss@example.com:8443/v1/mcp?token=abc&x#frag");
  ASSERT_TRUE(url) << url.error().ToString();
  EXPECT_EQ(url->origin, "https://example.com:8443");
  EXPECT_EQ(url->target, "/v1/mcp?token=abc&x");
  EXPECT_EQ(url->user, "user");
  EXPECT_EQ(url->password, "p%40ss");
  EXPECT_EQ(ParseServerUrl("http://127.0.0.1:5")->target, "/");
  EXPECT_EQ(ParseServerUrl("http://h?q=1")->target, "/?q=1");
  EXPECT_FALSE(ParseServerUrl("ftp://h/mcp"));
  EXPECT_FALSE(ParseServerUrl("http:///mcp"));
  EXPECT_FALSE(ParseServerUrl("localhost:8080/mcp"));
  EXPECT_EQ(RedactUrl("https://user:secret@h:1/mcp?token=abc&x&k=v#f"),
            "https://[REDACTED]@h:1/mcp?token=[REDACTED]&x&k=[REDACTED]");
  EXPECT_EQ(RedactUrl("http://h/mcp"), "http://h/mcp");
}

TEST(SecretMask, HidesConfiguredValuesAndKnownShapes) {
  ServerConfig config;
  config.url = "https://bob:hunter2hunter2@h/mcp?api_key=querysecret123";
  config.headers = {{"Authorization", "Bearer opaque-token-42"}, {"X-Short", "abc"}};
  config.env = {{"DB_PASSWORD", "correct horse"}};
  SecretMask mask(config);
  const std::string masked = mask.Apply(
      "401 for opaque-token-42 (Bearer opaque-token-42), pw hunter2hunter2, key querysecret123, "
      "env correct horse, abc stays, ghp_abcdefghijklmnopqrstuvwxyz0123456789");
  for (const char* secret : {"opaque-token-42", "hunter2hunter2", "querysecret123", "correct horse",
                             "ghp_abcdefghijklmnopqrstuvwxyz0123456789"}) {
    EXPECT_EQ(masked.find(secret), std::string::npos) << secret << " in " << masked;
  }
  EXPECT_NE(masked.find("abc stays"), std::string::npos) << masked;
  EXPECT_EQ(mask.Apply("Bearer"), "Bearer");  // a scheme name is no secret
}

// A scripted Streamable HTTP server on 127.0.0.1. tools/call behaves by tool name: "echo"
// answers as JSON, "sse" as an event stream after a notification and a ping request, "hang"
// never answers, "drip" sends keep-alive comments forever, "huge" sends one endless event,
// "badjson" an event that is not JSON and then ends, "wrongid" answers another id, "error" a
// 500, "expire" ends the session (404 from then on).
class ScriptedServer {
 public:
  ScriptedServer() {
    server_.set_tcp_nodelay(true);
    server_.set_keep_alive_max_count(1000);  // httplib's default closes after 5 requests
    server_.Post("/mcp",
                 [this](const httplib::Request& req, httplib::Response& res) { Post(req, res); });
    server_.Get("/mcp",
                [this](const httplib::Request& req, httplib::Response& res) { Get(req, res); });
    server_.Delete("/mcp", [this](const httplib::Request& req, httplib::Response&) {
      deleted_session = req.get_header_value("Mcp-Session-Id");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    for (int i = 0; i < 2000 && !server_.is_running(); ++i) std::this_thread::sleep_for(1ms);
  }
  ~ScriptedServer() {
    stopping_ = true;
    server_.stop();
    thread_.join();
  }

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/mcp"; }
  void ChangeTools() {
    ++tools_version;
    list_changed_pending = true;
  }

  std::atomic<int> tools_version{1};
  std::atomic<bool> list_changed_pending{false};
  std::atomic<bool> offer_stream{true};
  std::atomic<bool> expired{false};
  std::atomic<int> cancelled_notifications{0};
  std::atomic<int> pings_answered{0};
  std::atomic<int> gets{0};
  std::atomic<int> hangs{0};  // "hang" calls received (and now held)
  std::mutex ports_mu;
  std::vector<int> post_ports;  // Guarded by ports_mu. The client's port of each POST, in order.
  std::string deleted_session;  // written by the server thread before the test reads it
  std::string last_version_header;
  std::string last_authorization;

 private:
  static std::string Sse(const nlohmann::json& message) {
    return "data: " + message.dump() + "\n\n";
  }

  void Post(const httplib::Request& req, httplib::Response& res) {
    {
      std::lock_guard lock(ports_mu);
      post_ports.push_back(req.remote_port);
    }
    last_authorization = req.get_header_value("Authorization");
    const auto msg = nlohmann::json::parse(req.body, nullptr, false);
    if (!msg.is_object()) {
      res.status = 400;
      return;
    }
    const std::string method = msg.value("method", "");
    if (method.empty()) {  // a response (to our ping)
      if (msg.contains("result")) ++pings_answered;
      res.status = 202;
      return;
    }
    if (method != "initialize") {
      if (req.get_header_value("Mcp-Session-Id") != "session-1" || expired) {
        res.status = expired ? 404 : 400;
        return;
      }
      last_version_header = req.get_header_value("Mcp-Protocol-Version");
    }
    if (!msg.contains("id")) {
      if (method == "notifications/cancelled") ++cancelled_notifications;
      res.status = 202;
      return;
    }
    const auto id = msg["id"];
    auto reply = [&](nlohmann::json result) {
      res.set_content(
          nlohmann::json{{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}}.dump(),
          "application/json");
    };
    if (method == "initialize") {
      res.set_header("Mcp-Session-Id", "session-1");
      reply({{"protocolVersion", "2025-06-18"},
             {"capabilities", {{"tools", {{"listChanged", true}}}}},
             {"serverInfo", {{"name", "scripted"}, {"version", "1"}}}});
      return;
    }
    if (method == "ping") return reply(nlohmann::json::object());
    if (method == "tools/list") {
      nlohmann::json tools = nlohmann::json::array();
      for (const char* name :
           {"echo", "sse", "hang", "drip", "huge", "badjson", "wrongid", "error", "expire"}) {
        tools.push_back({{"name", name}, {"inputSchema", {{"type", "object"}}}});
      }
      if (tools_version > 1)
        tools.push_back({{"name", "added" + std::to_string(tools_version.load())}});
      return reply({{"tools", tools}});
    }
    const std::string tool = msg["params"].value("name", "");
    if (tool == "hang") ++hangs;
    const auto text = [](const std::string& t) {
      return nlohmann::json{{"content", {{{"type", "text"}, {"text", t}}}}};
    };
    if (tool == "echo") return reply(text("echo " + msg["params"]["arguments"].dump()));
    if (tool == "error") {
      res.status = 500;
      res.set_content(
          "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32603,\"message\":\"boom for "
          "Bearer sekrit-token-99\"}}",
          "application/json");
      return;
    }
    if (tool == "expire") {
      expired = true;
      res.status = 404;
      return;
    }
    if (tool == "wrongid") {
      res.set_content(
          nlohmann::json{{"jsonrpc", "2.0"}, {"id", 999999}, {"result", text("no")}}.dump(),
          "application/json");
      return;
    }
    res.set_chunked_content_provider(
        "text/event-stream", [this, tool, id, text](size_t, httplib::DataSink& sink) {
          auto write = [&](const std::string& s) { return sink.write(s.data(), s.size()); };
          if (tool == "sse") {
            write(Sse({{"jsonrpc", "2.0"},
                       {"method", "notifications/message"},
                       {"params", {{"level", "info"}, {"data", "hi"}}}}));
            write(Sse({{"jsonrpc", "2.0"}, {"id", "srv-1"}, {"method", "ping"}}));
            write(": comment\n\n");
            write(Sse({{"jsonrpc", "2.0"}, {"id", id}, {"result", text("streamed")}}));
          } else if (tool == "huge") {
            write("data: \"");
            const std::string block(64 * 1024, 'A');
            for (int i = 0; i < 4096 && !stopping_ && sink.is_writable(); ++i) {
              if (!write(block)) break;
            }
          } else if (tool == "badjson") {
            write("data: {not json\n\n");
          } else {  // hang, drip
            while (!stopping_ && sink.is_writable()) {
              if (tool == "drip" && !write(": tick\n\n")) break;
              std::this_thread::sleep_for(50ms);
            }
          }
          sink.done();
          return true;
        });
  }

  void Get(const httplib::Request& req, httplib::Response& res) {
    ++gets;
    if (!offer_stream) {
      res.status = 405;
      return;
    }
    if (req.get_header_value("Mcp-Session-Id") != "session-1") {
      res.status = 400;
      return;
    }
    res.set_chunked_content_provider("text/event-stream", [this](size_t, httplib::DataSink& sink) {
      while (!stopping_ && sink.is_writable()) {
        if (list_changed_pending.exchange(false)) {
          const std::string event =
              "id: ev" + std::to_string(tools_version.load()) +
              "\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n";
          if (!sink.write(event.data(), event.size())) break;
        }
        std::this_thread::sleep_for(20ms);
      }
      sink.done();
      return true;
    });
  }

  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::atomic<bool> stopping_{false};
};

struct Opened {
  std::unique_ptr<HttpConnection> conn;
  std::vector<std::string> notifications;
  std::mutex mu;
  std::atomic<int> closed{0};
};

std::unique_ptr<Opened> OpenAndInitialize(ScriptedServer& server,
                                          size_t max_bytes = kDefaultMaxMessageBytes) {
  auto out = std::make_unique<Opened>();
  HttpConnectionOptions options;
  options.url = server.url();
  options.max_message_bytes = max_bytes;
  ConnectionCallbacks callbacks;
  Opened* raw = out.get();
  callbacks.on_notification = [raw](const std::string& method, const Json&) {
    std::lock_guard lock(raw->mu);
    raw->notifications.push_back(method);
  };
  callbacks.on_closed = [raw] { ++raw->closed; };
  auto conn = HttpConnection::Open(options, callbacks);
  EXPECT_TRUE(conn) << conn.error().ToString();
  out->conn = std::move(*conn);
  auto init =
      out->conn->Call("initialize", Json{{"protocolVersion", "2025-06-18"}}, Clock::now() + 5s);
  EXPECT_TRUE(init) << init.error().ToString();
  EXPECT_TRUE(out->conn->Notify("notifications/initialized", Json()).ok());
  return out;
}

Result<Json> CallTool(HttpConnection& conn, const std::string& tool,
                      std::chrono::milliseconds timeout, std::stop_token cancel = {}) {
  return conn.Call("tools/call", Json{{"name", tool}, {"arguments", Json::object()}},
                   Clock::now() + timeout, std::move(cancel));
}

TEST(HttpConnection, JsonAndStreamedAnswersWithSessionHeaders) {
  ScriptedServer server;
  auto opened = OpenAndInitialize(server);
  auto echo = CallTool(*opened->conn, "echo", 5s);
  ASSERT_TRUE(echo) << echo.error().ToString();
  EXPECT_EQ((*echo)["content"][0]["text"], "echo {}");
  EXPECT_EQ(server.last_version_header, "2025-06-18");
  auto streamed = CallTool(*opened->conn, "sse", 5s);
  ASSERT_TRUE(streamed) << streamed.error().ToString();
  EXPECT_EQ((*streamed)["content"][0]["text"], "streamed");
  EXPECT_EQ(server.pings_answered.load(), 1);  // the server's ping inside the stream was answered
  {
    std::lock_guard lock(opened->mu);
    EXPECT_NE(std::find(opened->notifications.begin(), opened->notifications.end(),
                        "notifications/message"),
              opened->notifications.end());
  }
  opened->conn->Close(500ms);
  EXPECT_EQ(server.deleted_session, "session-1");
  EXPECT_EQ(opened->closed.load(), 0);  // our own Close is not reported as the server going away
}

// Sequential POSTs share one kept-alive connection (one client port); a POST the deadline cut
// short leaves its connection behind, and the next POST works on a new one.
TEST(HttpConnection, ReusesItsConnectionUntilARequestIsCutShort) {
  ScriptedServer server;
  auto opened = OpenAndInitialize(server);
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(CallTool(*opened->conn, "echo", 5s));
  std::vector<int> ports;
  {
    std::lock_guard lock(server.ports_mu);
    ports = server.post_ports;
  }
  ASSERT_EQ(ports.size(), 7u);  // initialize, notifications/initialized, five calls
  for (int port : ports)
    EXPECT_EQ(port, ports[0]) << "a POST opened a connection of its own: "
                              << testing::PrintToString(ports);

  ASSERT_FALSE(CallTool(*opened->conn, "hang", 200ms));
  ASSERT_TRUE(CallTool(*opened->conn, "echo", 5s));
  {
    std::lock_guard lock(server.ports_mu);
    ports = server.post_ports;
  }
  EXPECT_NE(ports.back(), ports[0]) << "the cut-short connection was used again";
}

TEST(HttpConnection, HangingServerHonoursDeadlineAndCancel) {
  ScriptedServer server;
  auto opened = OpenAndInitialize(server);
  for (const char* tool : {"hang", "drip"}) {
    auto r = CallTool(*opened->conn, tool, 300ms);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code(), StatusCode::kDeadlineExceeded)
        << tool << ": " << r.error().ToString();
  }
  // Cancels once the server holds the request; only the cancel ends it before its 20 s.
  std::stop_source cancel;
  const int hangs_before = server.hangs.load();
  std::jthread canceller([&] {
    WaitUntil([&] { return server.hangs.load() > hangs_before; }, 10s);
    cancel.request_stop();
  });
  auto r = CallTool(*opened->conn, "hang", 20s, cancel.get_token());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), StatusCode::kCancelled);
  // Every abandoned request was followed by notifications/cancelled.
  EXPECT_EQ(server.cancelled_notifications.load(), 3);
}

// One thread watches every request of a connection: a later request with an earlier deadline
// is still stopped on time, and closing the connection stops the ones still waiting.
TEST(HttpConnection, ConcurrentRequestsEachEndOnTimeAndCloseStopsTheRest) {
  ScriptedServer server;
  auto opened = OpenAndInitialize(server);
  std::optional<Result<Json>> slow;
  const int hangs_before = server.hangs.load();
  std::jthread slow_caller([&] { slow.emplace(CallTool(*opened->conn, "hang", 20s)); });
  // The 20 s request is watched first (before it is sent).
  ASSERT_TRUE(WaitUntil([&] { return server.hangs.load() > hangs_before; }, 10s));
  auto quick = CallTool(*opened->conn, "hang", 300ms);
  ASSERT_FALSE(quick);
  EXPECT_EQ(quick.error().code(), StatusCode::kDeadlineExceeded) << quick.error().ToString();
  // (That the watch, not the socket's own backstop a second later, ended it is
  // RequestWatch.ALaterRequestWithAnEarlierDeadlineIsStoppedAtIt.)

  // Only the close can end the slow request before its 20 s (it would end DeadlineExceeded).
  opened->conn->Close(100ms);
  slow_caller.join();
  ASSERT_TRUE(slow.has_value());
  ASSERT_FALSE(*slow);
  EXPECT_EQ(slow->error().code(), StatusCode::kUnavailable) << slow->error().ToString();
}

// The watch's one thread wakes for a request watched after one with a later deadline: nothing
// but the watch can end this request (the server never answers, the socket's read timeout is
// a minute away), so a watch that slept until the first deadline would find it unfinished.
TEST(RequestWatch, ALaterRequestWithAnEarlierDeadlineIsStoppedAtIt) {
  const test_support::LoopbackListener listener = test_support::ListenOnLoopback();
  ASSERT_TRUE(listener.fd);
  std::stop_source close;
  RequestWatch watch(close.get_token());
  httplib::Client idle("http://127.0.0.1:1");
  RequestWatch::Watched first = watch.Watch(idle, Clock::time_point::max(), {});
  httplib::Client silent("http://127.0.0.1:" + std::to_string(listener.port));
  silent.set_read_timeout(60, 0);
  RequestWatch::Watched later = watch.Watch(silent, Clock::now() + 300ms, {});
  const auto answer = silent.Get("/");
  EXPECT_FALSE(answer);
  EXPECT_EQ(later.Finish(), Stopped::kDeadline);
  EXPECT_EQ(first.Finish(), Stopped::kNo);
}

// A stop() that has to wait (httplib holds the client's socket while a TLS handshake with a
// server that never answers is in progress) holds up only its own request: watching and
// finishing others goes on.
TEST(RequestWatch, AStopThatWaitsHoldsUpNoOtherRequest) {
  // A listener that never accepts: the kernel completes TCP connects into its backlog, and the
  // TLS handshake then waits for a ServerHello that never comes.
  const test_support::LoopbackListener listener = test_support::ListenOnLoopback();
  ASSERT_TRUE(listener.fd);

  std::stop_source close;
  RequestWatch watch(close.get_token());
  httplib::Client silent("https://127.0.0.1:" + std::to_string(listener.port));
  silent.set_connection_timeout(3, 0);
  silent.set_read_timeout(3, 0);
  std::stop_source cancel;
  std::atomic<bool> silent_ended{false};
  std::jthread request([&] {
    RequestWatch::Watched watched =
        watch.Watch(silent, Clock::time_point::max(), cancel.get_token());
    (void)silent.Get("/");
    EXPECT_EQ(watched.Finish(), Stopped::kCancelled);
    silent_ended = true;
  });
  // Inside the handshake once the connect waits in the listener's backlog.
  ASSERT_TRUE(WaitUntil(
      [&] {
        pollfd p{listener.fd.get(), POLLIN, 0};
        return ::poll(&p, 1, 0) == 1;
      },
      10s));
  const std::set<std::string> before = ThreadIds();
  cancel.request_stop();  // its stop() now waits for the handshake to give up (3 s)
  // The stop runs on a thread of its own, started now: wait until it sleeps in that stop().
  ASSERT_TRUE(WaitUntil(
      [&] {
        for (const std::string& id : ThreadIds()) {
          if (!before.contains(id) && test_support::ThreadAsleep(std::stoi(id))) return true;
        }
        return false;
      },
      10s));

  httplib::Client other("http://127.0.0.1:1");
  {
    RequestWatch::Watched watched = watch.Watch(other, Clock::now() + 10s, {});
    EXPECT_FALSE(watched.fired());
    EXPECT_EQ(watched.Finish(), Stopped::kNo);
  }
  EXPECT_FALSE(silent_ended) << "watching another request waited for the stuck stop()";
  request.join();
}

TEST(HttpConnection, HostileAnswersFailTheCallNotTheClient) {
  ScriptedServer server;
  auto opened = OpenAndInitialize(server, /*max_bytes=*/256 * 1024);
  auto huge = CallTool(*opened->conn, "huge", 10s);
  ASSERT_FALSE(huge);
  EXPECT_EQ(huge.error().code(), StatusCode::kResourceExhausted) << huge.error().ToString();

  auto bad = CallTool(*opened->conn, "badjson", 5s);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find("ended without the response"), std::string::npos)
      << bad.error().ToString();

  auto wrong = CallTool(*opened->conn, "wrongid", 5s);
  ASSERT_FALSE(wrong);
  EXPECT_NE(wrong.error().message().find("no response to request"), std::string::npos)
      << wrong.error().ToString();

  auto error = CallTool(*opened->conn, "error", 5s);
  ASSERT_FALSE(error);
  EXPECT_EQ(error.error().message(), "HTTP 500: boom for Bearer sekrit-token-99");

  // Still usable afterwards.
  EXPECT_TRUE(CallTool(*opened->conn, "echo", 5s));
  EXPECT_FALSE(opened->conn->closed());

  // A 404 for our session ends the connection (the supervisor then re-initializes).
  auto expire = CallTool(*opened->conn, "expire", 5s);
  ASSERT_FALSE(expire);
  EXPECT_EQ(expire.error().code(), StatusCode::kUnavailable);
  EXPECT_TRUE(opened->conn->closed());
  EXPECT_EQ(opened->closed.load(), 1);
}

TEST(HttpConnection, RefusedConnectionClosesIt) {
  int port = 0;
  {
    ScriptedServer gone;  // bound and then released: nothing listens there any more
    port = std::stoi(gone.url().substr(std::string("http://127.0.0.1:").size()));
  }
  HttpConnectionOptions options;
  options.url = "http://127.0.0.1:" + std::to_string(port) + "/mcp?token=qsecret";
  std::atomic<int> closed{0};
  ConnectionCallbacks callbacks;
  callbacks.on_closed = [&] { ++closed; };
  auto conn = HttpConnection::Open(options, callbacks);
  ASSERT_TRUE(conn);
  auto r = (*conn)->Call("initialize", Json::object(), Clock::now() + 2s);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), StatusCode::kUnavailable);
  EXPECT_EQ(r.error().message().find("qsecret"), std::string::npos) << r.error().message();
  EXPECT_TRUE((*conn)->closed());
  EXPECT_EQ(closed.load(), 1);
}

ToolResult RunTool(Registry& registry, const std::string& name,
                   std::chrono::milliseconds timeout = 5s) {
  auto entry = registry.GetEntry(name);
  if (!entry) return ToolResult::Error("no tool " + name);
  ToolContext ctx;
  ctx.deadline = Clock::now() + timeout;
  return entry->handler()(Json::object(), ctx);
}

TEST(McpHttpClient, FollowsListChangedOnTheEventStream) {
  ScriptedServer server;
  Registry registry;
  ServerConfig config;
  config.name = "scripted";
  config.url = server.url();
  config.headers = {{"Authorization", "Bearer sekrit-token-99"}};
  auto manager = McpClientManager::Start(registry, {config}, FastRetries());
  ASSERT_TRUE(manager->WaitForInitialConnections(5s));
  ASSERT_EQ(manager->StatusOf("scripted")->state, ServerState::kConnected)
      << manager->StatusOf("scripted")->reason;
  EXPECT_EQ(manager->StatusOf("scripted")->protocol_version, "2025-06-18");
  EXPECT_EQ(server.last_authorization, "Bearer sekrit-token-99");
  EXPECT_TRUE(registry.GetEntry("mcp_scripted_echo"));
  ASSERT_TRUE(WaitUntil([&] { return server.gets.load() >= 1; }, 3s));
  server.ChangeTools();
  ASSERT_TRUE(WaitUntil([&] { return registry.GetEntry("mcp_scripted_added2") != nullptr; }, 3s));
  EXPECT_TRUE(registry.GetEntry("mcp_scripted_echo"));

  // The server's error text reaches the model masked and wrapped as untrusted.
  ToolResult error = Dispatched(registry, "mcp_scripted_error", Json::object());
  EXPECT_EQ(error.status, CallStatus::kError);
  EXPECT_EQ(error.text.find("sekrit-token-99"), std::string::npos) << error.text;
  EXPECT_EQ(error.text.rfind("<untrusted_tool_result source=\"mcp_scripted_error\">", 0), 0u)
      << error.text;

  ToolResult hang = RunTool(registry, "mcp_scripted_hang", 300ms);
  EXPECT_EQ(hang.status, CallStatus::kTimedOut) << hang.text;
  manager->Shutdown();
  EXPECT_EQ(server.deleted_session, "session-1");
}

TEST(McpHttpClient, ExpiredSessionReinitializes) {
  ScriptedServer server;
  server.offer_stream = false;  // 405: keepalive pings are the only watch
  Registry registry;
  ServerConfig config;
  config.name = "scripted";
  config.url = server.url();
  auto manager = McpClientManager::Start(registry, {config}, FastRetries());
  ASSERT_TRUE(manager->WaitForInitialConnections(5s));
  ASSERT_EQ(manager->StatusOf("scripted")->connections, 1u);
  (void)RunTool(registry, "mcp_scripted_expire");
  server.expired = false;  // a new initialize gets a fresh session
  ASSERT_TRUE(WaitUntil([&] { return manager->StatusOf("scripted")->connections >= 2; }, 5s))
      << manager->StatusOf("scripted")->reason;
  EXPECT_TRUE(RunTool(registry, "mcp_scripted_echo").ok());
}

}  // namespace
}  // namespace talaria::mcp::client_internal
