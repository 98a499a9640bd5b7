// HttpTransport over real sockets on 127.0.0.1 (ephemeral ports), driven by cpp-httplib's client.
// The sessions serve the process registry's read_file plus a test tool in a toolset of its own
// (so a test can change what is exposed); every wait is bounded.
#include "talaria/mcp/http_transport.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "support/wait_until.h"
#include "talaria/core/dispatcher.h"
#include "talaria/core/registry.h"
#include "talaria/core/toolsets.h"
#include "talaria/tools/session.h"

namespace talaria::mcp {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;

constexpr const char* kTestToolset = "http-test";

// Registers a tool answering "pong" in the test toolset.
Status AddTestTool(Registry& registry, const std::string& name) {
  ToolSpec spec;
  spec.name = name;
  spec.toolset = kTestToolset;
  const std::string schema =
      R"({"name": ")" + name +
      R"(", "description": "test tool", "parameters": {"type": "object", "properties": {}}})";
  spec.schema = std::string_view(schema);  // borrowed for the Register call only
  spec.handler = [](const Json&, ToolContext&) { return ToolResult::Text("pong"); };
  spec.parallel = ParallelClass::kSafe;
  return registry.Register(std::move(spec));
}

Json Rpc(int id, std::string_view method, Json params = Json::object()) {
  return Json{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}};
}

Json InitializeRequest(int id = 1, std::string_view version = "2025-11-25") {
  return Rpc(id, "initialize",
             {{"protocolVersion", version},
              {"capabilities", Json::object()},
              {"clientInfo", {{"name", "http-test"}, {"version", "1"}}}});
}

// A raw client socket, for what cpp-httplib's client will not send. Closed on destruction.
class RawConnection {
 public:
  explicit RawConnection(int port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd_ >= 0 && ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      ::close(fd_);
      fd_ = -1;
    }
  }
  ~RawConnection() {
    if (fd_ >= 0) ::close(fd_);
  }
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  bool ok() const { return fd_ >= 0; }
  // False once the server has closed the connection (or reset it).
  bool Send(std::string_view data) {
    while (!data.empty()) {
      const ssize_t n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (n <= 0) return false;
      data.remove_prefix(static_cast<size_t>(n));
    }
    return true;
  }
  // Everything the server sends until it has sent `until` (or closes, or `timeout` passes).
  std::string Read(std::string_view until = {}, std::chrono::milliseconds timeout = 5000ms) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (until.empty() || received_.find(until) == std::string::npos) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) break;
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) break;
      char buf[4096];
      const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) {
        closed_ = true;
        break;
      }
      received_.append(buf, static_cast<size_t>(n));
    }
    return received_;
  }
  // The status of the first response (0 when none came in time).
  int Status(std::chrono::milliseconds timeout = 5000ms) {
    const std::string r = Read("\r\n", timeout);
    if (!r.starts_with("HTTP/1.1 ") || r.size() < 12) return 0;
    return std::atoi(r.substr(9, 3).c_str());
  }
  // One whole response with a Content-Length (head and body), taken off what was received; empty
  // when it did not come in time.
  std::string Response() {
    const size_t head_end = Read("\r\n\r\n").find("\r\n\r\n");
    if (head_end == std::string::npos) return {};
    size_t length = 0;
    const std::string lower = AsciiLowerCopy(received_.substr(0, head_end));
    if (size_t at = lower.find("content-length: "); at != std::string::npos) {
      length = std::stoul(lower.substr(at + 16));
    }
    const size_t total = head_end + 4 + length;
    const auto deadline = std::chrono::steady_clock::now() + 5s;
    while (received_.size() < total && !closed_ && std::chrono::steady_clock::now() < deadline) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      char buf[4096];
      const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) closed_ = true;
      if (n > 0) received_.append(buf, static_cast<size_t>(n));
    }
    if (received_.size() < total) return {};
    std::string response = received_.substr(0, total);
    received_.erase(0, total);
    return response;
  }
  bool closed() const { return closed_; }

  static std::string AsciiLowerCopy(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  }

 private:
  int fd_ = -1;
  std::string received_;
  bool closed_ = false;
};

Json Body(const httplib::Result& r) {
  if (!r) return Json();
  return Json::parse(r->body, nullptr, /*allow_exceptions=*/false);
}

class HttpTransportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/talaria-http-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    std::ofstream(dir_ + "/hello.txt") << "hello over http\n";
    tools::SessionOptions so;
    so.roots = {dir_};
    so.audit = false;
    auto session = tools::OpenSession(std::move(so));
    ASSERT_TRUE(session) << session.error().message();
    session_ = *session;
    (void)registry_.Deregister("http_test_ping");
    ASSERT_TRUE(AddTestTool(registry_, "http_test_ping").ok());
  }
  void TearDown() override {
    transport_.reset();
    (void)registry_.Deregister("http_test_ping");
    (void)registry_.Deregister("http_test_extra");
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  void Start(HttpTransportOptions options = {}) {
    auto started = HttpTransport::Start(std::move(options), [this](RoutedSink sink) {
      McpServerOptions o;
      o.toolsets = {"file", kTestToolset};
      o.make_context = [s = session_](const std::string& call_id) {
        return s->NewContext(call_id);
      };
      return McpServer::Create(dispatcher_, toolsets_, std::move(o), std::move(sink));
    });
    ASSERT_TRUE(started) << started.error().message();
    transport_ = std::move(*started);
    ASSERT_GT(transport_->port(), 0);
  }

  std::unique_ptr<httplib::Client> Client() {
    auto c = std::make_unique<httplib::Client>("127.0.0.1", transport_->port());
    c->set_tcp_nodelay(true);
    c->set_connection_timeout(2, 0);
    c->set_read_timeout(5, 0);
    c->set_write_timeout(5, 0);
    return c;
  }

  // POSTs a raw body to /mcp.
  httplib::Result Send(const std::string& body, httplib::Headers headers = {}) {
    if (!headers.contains("Accept"))
      headers.emplace("Accept", "application/json, text/event-stream");
    return Client()->Post("/mcp", headers, body, "application/json");
  }
  // POSTs a message in a session.
  httplib::Result Call(const Json& message, const std::string& session,
                       httplib::Headers headers = {}) {
    if (!session.empty()) headers.emplace("Mcp-Session-Id", session);
    return Send(message.dump(), std::move(headers));
  }

  // initialize + notifications/initialized; returns the session id.
  std::string Initialize(httplib::Headers headers = {}) {
    auto r = Send(InitializeRequest().dump(), headers);
    EXPECT_TRUE(r);
    if (!r) return {};
    EXPECT_EQ(r->status, 200) << r->body;
    EXPECT_EQ(r->get_header_value("Content-Type"), "application/json");
    const std::string id = r->get_header_value("Mcp-Session-Id");
    EXPECT_GE(id.size(), 32u);
    for (char c : id) EXPECT_TRUE(c >= 0x21 && c <= 0x7e) << id;
    Json body = Body(r);
    EXPECT_EQ(body["result"]["protocolVersion"], "2025-11-25") << r->body;
    auto done =
        Call(Json{{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}}, id, headers);
    EXPECT_TRUE(done);
    if (done) {
      EXPECT_EQ(done->status, 202);
      EXPECT_TRUE(done->body.empty());
    }
    return id;
  }

  std::string dir_;
  Registry& registry_ = Registry::Global();
  Toolsets toolsets_{registry_};
  Dispatcher dispatcher_{registry_};
  std::shared_ptr<tools::Session> session_;
  std::unique_ptr<HttpTransport> transport_;  // last: stopped before the rest goes
};

TEST_F(HttpTransportTest, ServesInitializeToolsListAndReadFile) {
  Start();
  EXPECT_EQ(transport_->url(), "http://127.0.0.1:" + std::to_string(transport_->port()) + "/mcp");
  const std::string session = Initialize();
  ASSERT_FALSE(session.empty());
  EXPECT_EQ(transport_->session_count(), 1u);

  auto listed = Call(Rpc(2, "tools/list"), session, {{"Mcp-Protocol-Version", "2025-11-25"}});
  ASSERT_TRUE(listed);
  EXPECT_EQ(listed->status, 200);
  std::vector<std::string> names;
  const Json list = Body(listed);
  for (const Json& t : list["result"]["tools"]) names.push_back(t["name"]);
  EXPECT_THAT(names, ::testing::Contains("read_file"));
  EXPECT_THAT(names, ::testing::Contains("http_test_ping"));

  auto read =
      Call(Rpc(3, "tools/call", {{"name", "read_file"}, {"arguments", {{"path", "hello.txt"}}}}),
           session);
  ASSERT_TRUE(read);
  EXPECT_EQ(read->status, 200);
  Json result = Body(read);
  EXPECT_EQ(result["id"], 3);
  ASSERT_TRUE(result["result"]["content"].is_array()) << read->body;
  EXPECT_THAT(result["result"]["content"][0]["text"].get<std::string>(),
              HasSubstr("hello over http"));
  EXPECT_FALSE(result["result"].value("isError", false)) << read->body;

  // A string id comes back as the same string.
  Json ping = Rpc(0, "ping");
  ping["id"] = "p-1";
  auto pong = Call(ping, session);
  ASSERT_TRUE(pong);
  EXPECT_EQ(Body(pong)["id"], "p-1");

  // A client's response (to nothing we asked) is accepted like a notification.
  auto response = Call(Json{{"jsonrpc", "2.0"}, {"id", 99}, {"result", Json::object()}}, session);
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 202);
}

TEST_F(HttpTransportTest, EachInitializeStartsItsOwnSession) {
  Start();
  const std::string a = Initialize();
  const std::string b = Initialize();
  EXPECT_NE(a, b);
  EXPECT_EQ(transport_->session_count(), 2u);
  // A failed initialize leaves no session behind.
  auto bad = Send(Rpc(1, "initialize", Json::object()).dump());
  ASSERT_TRUE(bad);
  EXPECT_EQ(Body(bad)["error"]["code"], kInvalidParams);
  EXPECT_FALSE(bad->has_header("Mcp-Session-Id"));
  EXPECT_EQ(transport_->session_count(), 2u);
}

TEST_F(HttpTransportTest, ChecksOriginAndHostOnEveryRequest) {
  Start();
  const std::string port = std::to_string(transport_->port());
  auto evil = Send(InitializeRequest().dump(), {{"Origin", "http://evil.example"}});
  ASSERT_TRUE(evil);
  EXPECT_EQ(evil->status, 403);
  for (const char* origin :
       {"null", "http://localhost.evil.example", "ftp://localhost", "http://127.0.0.1.nip.io"}) {
    auto r = Send(InitializeRequest().dump(), {{"Origin", origin}});
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 403) << origin;
  }
  auto rebound = Send(InitializeRequest().dump(), {{"Host", "evil.example:" + port}});
  ASSERT_TRUE(rebound);
  EXPECT_EQ(rebound->status, 403);
  auto wrong_port = Send(InitializeRequest().dump(), {{"Host", "127.0.0.1:1"}});
  ASSERT_TRUE(wrong_port);
  EXPECT_EQ(wrong_port->status, 403);
  EXPECT_EQ(transport_->session_count(), 0u);

  // The server's own origin and loopback host names pass.
  const std::string session =
      Initialize({{"Origin", "http://localhost:" + port}, {"Host", "localhost:" + port}});
  ASSERT_FALSE(session.empty());
  auto with_origin = Call(Rpc(2, "ping"), session, {{"Origin", "http://127.0.0.1:" + port}});
  ASSERT_TRUE(with_origin);
  EXPECT_EQ(with_origin->status, 200);
  EXPECT_EQ(with_origin->get_header_value("Access-Control-Allow-Origin"),
            "http://127.0.0.1:" + port);
  // ... and a later request of a good session is still screened.
  auto later = Call(Rpc(3, "ping"), session, {{"Origin", "https://evil.example"}});
  ASSERT_TRUE(later);
  EXPECT_EQ(later->status, 403);
}

// Regression (issue 17, finding 9): any `http://localhost:<port>` origin was accepted and echoed
// back, so a page served by any local program could drive every tool when no token was set.
TEST_F(HttpTransportTest, OriginOfAnotherLocalPortIsRefused) {
  Start();
  const std::string port = std::to_string(transport_->port());
  ASSERT_NE(port, "9999");
  for (const char* origin : {"http://localhost:9999", "http://127.0.0.1:9999", "http://[::1]:3000",
                             "https://localhost:9999"}) {
    auto r = Send(InitializeRequest().dump(), {{"Origin", origin}});
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 403) << origin;
    EXPECT_FALSE(r->has_header("Access-Control-Allow-Origin")) << origin;
  }
  // Another scheme or port for our own host name is another origin too.
  auto https = Send(InitializeRequest().dump(), {{"Origin", "https://127.0.0.1:" + port}});
  ASSERT_TRUE(https);
  EXPECT_EQ(https->status, 403);
  EXPECT_EQ(transport_->session_count(), 0u);
  for (const std::string& own :
       {"http://127.0.0.1:" + port, "http://localhost:" + port, "HTTP://LOCALHOST:" + port}) {
    auto r = Send(InitializeRequest().dump(), {{"Origin", own}});
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200) << own;
    EXPECT_EQ(r->get_header_value("Access-Control-Allow-Origin"), own);
  }
}

TEST_F(HttpTransportTest, AllowOriginAdmitsALocalWebUi) {
  HttpTransportOptions o;
  o.allowed_origins = {"http://localhost:9999"};
  Start(std::move(o));
  auto listed = Send(InitializeRequest().dump(), {{"Origin", "http://localhost:9999"}});
  ASSERT_TRUE(listed);
  EXPECT_EQ(listed->status, 200) << listed->body;
  EXPECT_EQ(listed->get_header_value("Access-Control-Allow-Origin"), "http://localhost:9999");
  auto other = Send(InitializeRequest().dump(), {{"Origin", "http://localhost:9998"}});
  ASSERT_TRUE(other);
  EXPECT_EQ(other->status, 403);
}

TEST_F(HttpTransportTest, AllowlistsExtendOriginsAndHosts) {
  HttpTransportOptions o;
  o.allowed_origins = {"https://App.Example"};
  o.allowed_hosts = {"mcp.internal:8765"};
  Start(std::move(o));
  auto r = Send(InitializeRequest().dump(),
                {{"Origin", "https://app.example"}, {"Host", "mcp.internal:8765"}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
}

TEST_F(HttpTransportTest, EnforcesSessionAndVersionHeaders) {
  Start();
  const std::string session = Initialize();

  auto missing = Send(Rpc(2, "tools/list").dump());
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 400);
  EXPECT_TRUE(Body(missing).contains("error")) << missing->body;

  auto unknown = Call(Rpc(2, "tools/list"), "no-such-session");
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->status, 404);

  auto bad_version = Call(Rpc(2, "tools/list"), session, {{"Mcp-Protocol-Version", "1999-01-01"}});
  ASSERT_TRUE(bad_version);
  EXPECT_EQ(bad_version->status, 400);
  auto old_version = Call(Rpc(3, "tools/list"), session, {{"Mcp-Protocol-Version", "2025-03-26"}});
  ASSERT_TRUE(old_version);
  EXPECT_EQ(old_version->status, 200);

  auto get_without = Client()->Get("/mcp", {{"Accept", "text/event-stream"}});
  ASSERT_TRUE(get_without);
  EXPECT_EQ(get_without->status, 400);
}

TEST_F(HttpTransportTest, DeleteEndsTheSession) {
  Start();
  const std::string session = Initialize();
  auto deleted = Client()->Delete("/mcp", {{"Mcp-Session-Id", session}});
  ASSERT_TRUE(deleted);
  EXPECT_EQ(deleted->status, 200);
  EXPECT_EQ(transport_->session_count(), 0u);

  auto after = Call(Rpc(2, "ping"), session);
  ASSERT_TRUE(after);
  EXPECT_EQ(after->status, 404);
  auto again = Client()->Delete("/mcp", {{"Mcp-Session-Id", session}});
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, 404);
  auto no_id = Client()->Delete("/mcp");
  ASSERT_TRUE(no_id);
  EXPECT_EQ(no_id->status, 400);
}

TEST_F(HttpTransportTest, BearerTokenIsRequiredWhenConfigured) {
  HttpTransportOptions o;
  o.bearer_token = "s3cret-token";
  Start(std::move(o));
  auto none = Send(InitializeRequest().dump());
  ASSERT_TRUE(none);
  EXPECT_EQ(none->status, 401);
  EXPECT_EQ(none->get_header_value("WWW-Authenticate"), "Bearer");
  for (const char* value : {"Bearer wrong", "Bearer s3cret-toke", "Bearer s3cret-token2",
                            "Basic s3cret-token", "s3cret-token"}) {
    auto r = Send(InitializeRequest().dump(), {{"Authorization", value}});
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 401) << value;
  }
  const std::string session = Initialize({{"Authorization", "Bearer s3cret-token"}});
  ASSERT_FALSE(session.empty());
  // Every request needs it, not only initialize.
  auto unauthenticated = Call(Rpc(2, "ping"), session);
  ASSERT_TRUE(unauthenticated);
  EXPECT_EQ(unauthenticated->status, 401);
}

TEST_F(HttpTransportTest, RefusesANonLoopbackAddressWithoutAToken) {
  HttpTransportOptions o;
  o.host = "0.0.0.0";
  auto refused = HttpTransport::Start(o, [](RoutedSink) -> Result<std::unique_ptr<McpServer>> {
    return Err(InternalError("unused"));
  });
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.error().message(), HasSubstr("--token"));
}

TEST_F(HttpTransportTest, GetStreamCarriesServerNotifications) {
  Start();
  const std::string session = Initialize();
  std::atomic<bool> opened{false};
  std::string received;
  std::mutex mu;
  int status = 0;
  std::string content_type;
  std::jthread reader([&] {
    auto c = Client();
    c->Get(
        "/mcp", {{"Accept", "text/event-stream"}, {"Mcp-Session-Id", session}},
        [&](const httplib::Response& r) {
          status = r.status;
          content_type = r.get_header_value("Content-Type");
          return true;
        },
        [&](const char* data, size_t n) {
          std::lock_guard lock(mu);
          received.append(data, n);
          opened = true;
          return received.find("notifications/tools/list_changed") == std::string::npos;
        });
  });
  const auto until = std::chrono::steady_clock::now() + 3s;
  while (!opened && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(5ms);
  ASSERT_TRUE(opened);

  // A second GET stream for the same session is refused while the first is open.
  auto second =
      Client()->Get("/mcp", {{"Accept", "text/event-stream"}, {"Mcp-Session-Id", session}});
  ASSERT_TRUE(second);
  EXPECT_EQ(second->status, 409);

  ASSERT_TRUE(AddTestTool(registry_, "http_test_extra").ok());
  reader.join();  // ends when the notification arrived (or the client's 5 s read timeout)
  std::lock_guard lock(mu);
  EXPECT_THAT(received, HasSubstr(R"(event: message
data: {"jsonrpc":"2.0","method":"notifications/tools/list_changed")"));
  EXPECT_EQ(status, 200);
  EXPECT_EQ(content_type, "text/event-stream");
}

TEST_F(HttpTransportTest, ProgressTokenGetsAnEventStreamEndingWithTheResponse) {
  Start();
  const std::string session = Initialize();
  Json call =
      Rpc(5, "tools/call", {{"name", "http_test_ping"}, {"_meta", {{"progressToken", "tok"}}}});
  auto r = Call(call, session);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->get_header_value("Content-Type"), "text/event-stream");
  std::vector<Json> events;
  std::istringstream in(r->body);
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("data: ")) events.push_back(Json::parse(line.substr(6)));
  }
  ASSERT_GE(events.size(), 2u) << r->body;
  EXPECT_EQ(events.front()["method"], "notifications/progress");
  EXPECT_EQ(events.front()["params"]["progressToken"], "tok");
  EXPECT_EQ(events.back()["id"], 5);
  EXPECT_EQ(events.back()["result"]["content"][0]["text"], "pong");

  // Accepting JSON only: the same call is answered as JSON.
  call["id"] = 6;
  auto json = Call(call, session, {{"Accept", "application/json"}});
  ASSERT_TRUE(json);
  EXPECT_EQ(json->get_header_value("Content-Type"), "application/json");
  EXPECT_EQ(Body(json)["id"], 6);

  // Accepting event streams only: any request is answered as one.
  auto sse_only = Call(Rpc(7, "ping"), session, {{"Accept", "text/event-stream"}});
  ASSERT_TRUE(sse_only);
  EXPECT_EQ(sse_only->get_header_value("Content-Type"), "text/event-stream");
  EXPECT_THAT(sse_only->body, HasSubstr(R"(data: {"jsonrpc":"2.0","id":7,"result":{}})"));
  // Accepting neither: 406.
  auto neither = Call(Rpc(8, "ping"), session, {{"Accept", "text/html"}});
  ASSERT_TRUE(neither);
  EXPECT_EQ(neither->status, 406);
}

TEST_F(HttpTransportTest, OversizedBodyGets413) {
  HttpTransportOptions o;
  o.limits.max_bytes = 4096;
  Start(std::move(o));
  const std::string session = Initialize();
  Json big = Rpc(2, "tools/call",
                 {{"name", "http_test_ping"}, {"arguments", {{"pad", std::string(8192, 'x')}}}});
  auto r = Call(big, session);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 413);
  // The server is fine afterwards.
  auto ping = Call(Rpc(3, "ping"), session);
  ASSERT_TRUE(ping);
  EXPECT_EQ(ping->status, 200);
}

TEST_F(HttpTransportTest, MalformedJsonGets400WithAParseError) {
  Start();
  const std::string session = Initialize();
  auto r = Send("{\"jsonrpc\": \"2.0\", \"id\": 1, ", {{"Mcp-Session-Id", session}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  Json body = Body(r);
  EXPECT_EQ(body["error"]["code"], kParseError) << r->body;
  EXPECT_TRUE(body["id"].is_null());

  auto batch = Send("[" + Rpc(2, "ping").dump() + "]", {{"Mcp-Session-Id", session}});
  ASSERT_TRUE(batch);
  EXPECT_EQ(batch->status, 400);
  EXPECT_EQ(Body(batch)["error"]["code"], kInvalidRequest);

  auto ping = Call(Rpc(3, "ping"), session);
  ASSERT_TRUE(ping);
  EXPECT_EQ(ping->status, 200);
}

// Protocol 2025-03-26 had JSON-RPC batches: a POSTed array is served and answered with one
// array; a batch of notifications only gets 202.
TEST_F(HttpTransportTest, BatchesAreServedUnder20250326) {
  Start();
  auto init = Send(InitializeRequest(1, "2025-03-26").dump());
  ASSERT_TRUE(init);
  ASSERT_EQ(Body(init)["result"]["protocolVersion"], "2025-03-26") << init->body;
  const std::string session = init->get_header_value("Mcp-Session-Id");
  const httplib::Headers version{{"Mcp-Session-Id", session},
                                 {"MCP-Protocol-Version", "2025-03-26"}};
  auto done =
      Send(Json{{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}}.dump(), version);
  ASSERT_TRUE(done);
  ASSERT_EQ(done->status, 202);

  const std::string body =
      "[" + Rpc(2, "ping").dump() + "," +
      Rpc(3, "tools/call", {{"name", "http_test_ping"}, {"arguments", Json::object()}}).dump() +
      R"(,{"jsonrpc":"2.0","method":"notifications/whatever"},{"oops":true}])";
  auto batch = Send(body, version);
  ASSERT_TRUE(batch);
  ASSERT_EQ(batch->status, 200) << batch->body;
  EXPECT_EQ(batch->get_header_value("Content-Type"), "application/json");
  const Json answers = Body(batch);
  ASSERT_TRUE(answers.is_array()) << batch->body;
  ASSERT_EQ(answers.size(), 3u) << batch->body;
  std::map<std::string, Json> by_id;
  for (const Json& a : answers) by_id[a["id"].dump()] = a;
  EXPECT_EQ(by_id["2"]["result"], Json::object());
  EXPECT_TRUE(by_id["3"]["result"].contains("content")) << batch->body;
  EXPECT_EQ(by_id["null"]["error"]["code"], kInvalidRequest);

  auto quiet = Send(R"([{"jsonrpc":"2.0","method":"notifications/whatever"}])", version);
  ASSERT_TRUE(quiet);
  EXPECT_EQ(quiet->status, 202);
  EXPECT_TRUE(quiet->body.empty());
}

TEST_F(HttpTransportTest, OtherPathsAndMethodsAreRefused) {
  Start();
  auto path = Client()->Post("/other", InitializeRequest().dump(), "application/json");
  ASSERT_TRUE(path);
  EXPECT_EQ(path->status, 404);
  auto put = Client()->Put("/mcp", InitializeRequest().dump(), "application/json");
  ASSERT_TRUE(put);
  EXPECT_EQ(put->status, 405);
  const std::string own_origin = "http://localhost:" + std::to_string(transport_->port());
  auto preflight = Client()->Options("/mcp", {{"Origin", own_origin}});
  ASSERT_TRUE(preflight);
  EXPECT_EQ(preflight->status, 204);
  EXPECT_THAT(preflight->get_header_value("Access-Control-Allow-Headers"),
              HasSubstr("Mcp-Session-Id"));
}

// The stream never ends on its own: only Stop can end the reader's GET.
TEST_F(HttpTransportTest, StopEndsOpenStreams) {
  Start();
  const std::string session = Initialize();
  std::atomic<bool> opened{false};
  std::atomic<bool> returned{false};
  std::jthread reader([&] {
    auto c = Client();
    c->set_read_timeout(30, 0);  // a backstop only: a Stop that left the stream open fails below
    c->Get("/mcp", {{"Accept", "text/event-stream"}, {"Mcp-Session-Id", session}},
           [&](const char*, size_t) {
             opened = true;
             return true;
           });
    returned = true;
  });
  ASSERT_TRUE(test_support::WaitUntil([&] { return opened.load(); }, 10s, 5ms));
  transport_->Stop();
  EXPECT_TRUE(test_support::WaitUntil([&] { return returned.load(); }, 10s))
      << "Stop left the open stream open";
  reader.join();
  EXPECT_EQ(transport_->session_count(), 0u);
}

// Regression (issue 17, finding 9): cpp-httplib read heads in its 32 worker threads, so 32
// connections that never finished a head blocked every client, even with a token.
TEST_F(HttpTransportTest, HalfOpenConnectionsDoNotStarveAnAuthenticatedClient) {
  HttpTransportOptions o;
  o.bearer_token = "s3cret-token";
  Start(std::move(o));
  const std::string port = std::to_string(transport_->port());
  std::vector<std::unique_ptr<RawConnection>> idle;
  for (int i = 0; i < 40; ++i) {
    auto c = std::make_unique<RawConnection>(transport_->port());
    ASSERT_TRUE(c->ok());
    // A partial head (every one but a few that send nothing at all): cpp-httplib's workers
    // waited 30 s per read on each.
    if (i % 8 != 0) {
      ASSERT_TRUE(c->Send("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:" + port + "\r\nContent-Le"));
    }
    idle.push_back(std::move(c));
  }
  // The token holder is served within its client's deadline (5 s reads) while all 40 wait.
  const httplib::Headers auth{{"Authorization", "Bearer s3cret-token"}};
  const std::string session = Initialize(auth);
  ASSERT_FALSE(session.empty());
  for (int id = 2; id < 6; ++id) {
    auto pong = Call(Rpc(id, "ping"), session, auth);
    ASSERT_TRUE(pong) << httplib::to_string(pong.error());
    EXPECT_EQ(pong->status, 200);
  }
  // Unauthenticated requests that do finish their head are answered by the gate, at once.
  auto refused = Send(InitializeRequest().dump());
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 401);
}

TEST_F(HttpTransportTest, AnAddressAtItsConnectionCapLosesItsOldestWaitingConnection) {
  HttpTransportOptions o;
  o.max_connections_per_address = 8;
  Start(std::move(o));
  std::vector<std::unique_ptr<RawConnection>> idle;
  for (int i = 0; i < 20; ++i) {
    idle.push_back(std::make_unique<RawConnection>(transport_->port()));
    ASSERT_TRUE(idle.back()->ok());
  }
  // Each new connection evicted the oldest waiting one, so a real client still gets in.
  const std::string session = Initialize();
  ASSERT_FALSE(session.empty());
  idle.front()->Read({}, 5000ms);
  EXPECT_TRUE(idle.front()->closed());
}

// Regression (issue 17, finding 9): a sender of one byte at a time kept its connection (and a
// worker) for as long as it kept sending, as the read timeout was per read.
TEST_F(HttpTransportTest, SlowHeaderSenderIsCutOffAtTheHeaderDeadline) {
  HttpTransportOptions o;
  o.header_timeout = 300ms;
  Start(std::move(o));
  RawConnection slow(transport_->port());
  ASSERT_TRUE(slow.ok());
  const std::string head =
      "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(transport_->port()) +
      "\r\nX-Slow: " + std::string(200, 'a');
  std::atomic<size_t> sent{0};
  std::jthread sender([&](std::stop_token stop) {
    for (char ch : head) {  // bounded: the whole head would take 20 s
      if (stop.stop_requested() || !slow.Send(std::string_view(&ch, 1))) return;
      ++sent;
      std::this_thread::sleep_for(100ms);
    }
  });
  EXPECT_EQ(slow.Status(10000ms), 408);
  slow.Read({}, 5000ms);
  EXPECT_TRUE(slow.closed());
  sender.request_stop();
  sender.join();
  EXPECT_LT(sent.load(), head.size());
}

// Regression (issue 17, finding 9): with no token, 64 initialize calls filled the session cap
// for an hour.
TEST_F(HttpTransportTest, SessionsMadeWithoutATokenAreReapedInMinutes) {
  HttpTransportOptions o;
  o.max_sessions_per_address = 4;
  o.anonymous_session_idle_timeout = 200ms;
  o.reap_interval = 50ms;
  Start(std::move(o));
  for (int i = 0; i < 4; ++i) {
    auto r = Send(InitializeRequest().dump());
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200);
  }
  auto full = Send(InitializeRequest().dump());
  ASSERT_TRUE(full);
  EXPECT_EQ(full->status, 503);
  // The reaper ends them without any new initialize asking for room.
  const auto until = std::chrono::steady_clock::now() + 10s;
  while (transport_->session_count() > 0 && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_EQ(transport_->session_count(), 0u);
  EXPECT_FALSE(Initialize().empty());
}

TEST_F(HttpTransportTest, UnauthenticatedInitializeFloodDoesNotLockOutATokenHolder) {
  HttpTransportOptions o;
  o.bearer_token = "s3cret-token";
  o.max_sessions = 4;
  Start(std::move(o));
  // Initialize requests without the token whose bodies never come: refused at their head, so
  // they hold nothing (cpp-httplib's workers waited for the bodies).
  const std::string body = InitializeRequest().dump();
  std::vector<std::unique_ptr<RawConnection>> stalled;
  for (int i = 0; i < 40; ++i) {
    auto c = std::make_unique<RawConnection>(transport_->port());
    ASSERT_TRUE(c->ok());
    ASSERT_TRUE(c->Send(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(transport_->port()) +
        "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
        "\r\n\r\n" + body.substr(0, 10)));
    stalled.push_back(std::move(c));
  }
  EXPECT_EQ(stalled.back()->Status(), 401);
  for (int i = 0; i < 100; ++i) {
    auto r =
        Send(InitializeRequest().dump(), {{"Authorization", i % 2 ? "Bearer wrong" : "Basic x"}});
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 401);
  }
  EXPECT_EQ(transport_->session_count(), 0u);
  EXPECT_FALSE(Initialize({{"Authorization", "Bearer s3cret-token"}}).empty());
}

// Regression (issue 17, finding 9): duplicate Host/Origin headers, a negative Content-Length and
// 10,000 headers hung or passed.
TEST_F(HttpTransportTest, MalformedHeadsAreRefusedAtOnce) {
  HttpTransportOptions o;
  o.limits.max_bytes = 4096;
  Start(std::move(o));
  const std::string host = "Host: 127.0.0.1:" + std::to_string(transport_->port()) + "\r\n";
  const std::string own = "Origin: http://127.0.0.1:" + std::to_string(transport_->port()) + "\r\n";
  const std::string body = InitializeRequest().dump();
  const std::string length = "Content-Length: " + std::to_string(body.size()) + "\r\n";
  struct Case {
    const char* what;
    std::string head;
    int status;
  };
  const std::vector<Case> cases = {
      {"duplicate Host", host + host + length, 400},
      {"duplicate Host, one evil", host + "Host: evil.example\r\n" + length, 400},
      {"duplicate Origin", host + own + "Origin: http://evil.example\r\n" + length, 400},
      {"negative Content-Length", host + "Content-Length: -1\r\n", 400},
      {"non-numeric Content-Length", host + "Content-Length: 12abc\r\n", 400},
      {"signed Content-Length", host + "Content-Length: +12\r\n", 400},
      {"conflicting Content-Lengths", host + length + "Content-Length: 5\r\n", 400},
      {"repeated Content-Length", host + length + length, 400},
      {"list Content-Length", host + "Content-Length: 5, 5\r\n", 400},
      {"huge Content-Length", host + "Content-Length: 99999999999999999999999\r\n", 400},
      {"Content-Length over the cap", host + "Content-Length: 4097\r\n", 413},
      {"Transfer-Encoding with Content-Length", host + length + "Transfer-Encoding: chunked\r\n",
       400},
      {"folded header", host + length + "X-A: 1\r\n  folded\r\n", 400},
      {"space before colon", host + length + "X-A : 1\r\n", 400},
      {"no Host", length, 400},
  };
  for (const Case& c : cases) {
    RawConnection conn(transport_->port());
    ASSERT_TRUE(conn.ok());
    ASSERT_TRUE(
        conn.Send("POST /mcp HTTP/1.1\r\n" + c.head + "\r\n"));  // no body: it must not be awaited
    EXPECT_EQ(conn.Status(), c.status) << c.what << ": " << conn.Read();
  }

  // 10,000 headers: 431 as soon as the limit is crossed, while the client is still sending.
  RawConnection flood(transport_->port());
  ASSERT_TRUE(flood.ok());
  std::jthread sender([&] {
    std::string all = "POST /mcp HTTP/1.1\r\n" + host;
    for (int i = 0; i < 10000; ++i) all += "X-Flood-" + std::to_string(i) + ": y\r\n";
    (void)flood.Send(all + "\r\n");
  });
  EXPECT_EQ(flood.Status(), 431);
  sender.join();
  // One header too long is refused the same way.
  RawConnection long_header(transport_->port());
  ASSERT_TRUE(long_header.ok());
  ASSERT_TRUE(
      long_header.Send("POST /mcp HTTP/1.1\r\n" + host + "X-Long: " + std::string(20000, 'a')));
  EXPECT_EQ(long_header.Status(), 431);

  // None of it left a session behind, and the server still serves.
  EXPECT_EQ(transport_->session_count(), 0u);
  EXPECT_FALSE(Initialize().empty());
}

// What cpp-httplib handled for us: chunked request bodies, Expect: 100-continue, several
// requests on one kept-alive connection.
TEST_F(HttpTransportTest, ServesChunkedBodiesAndKeptAliveConnections) {
  Start();
  const std::string host = "Host: 127.0.0.1:" + std::to_string(transport_->port()) + "\r\n";
  const std::string body = InitializeRequest().dump();
  RawConnection conn(transport_->port());
  ASSERT_TRUE(conn.ok());
  std::ostringstream chunked;
  chunked << std::hex << 10 << "\r\n"
          << body.substr(0, 10) << "\r\n"
          << (body.size() - 10) << ";ext=1\r\n"
          << body.substr(10) << "\r\n0\r\n\r\n";
  ASSERT_TRUE(conn.Send("POST /mcp HTTP/1.1\r\n" + host +
                        "Content-Type: application/json\r\nAccept: application/json\r\n"
                        "Transfer-Encoding: chunked\r\n\r\n" +
                        chunked.str()));
  const std::string first = conn.Response();
  ASSERT_TRUE(first.starts_with("HTTP/1.1 200 ")) << first;
  EXPECT_THAT(first, HasSubstr("\"serverInfo\""));
  const size_t at = first.find("Mcp-Session-Id: ");
  ASSERT_NE(at, std::string::npos) << first;
  const std::string session = first.substr(at + 16, first.find("\r\n", at) - at - 16);
  // The same connection, with Expect: 100-continue.
  const std::string ping = Rpc(2, "ping").dump();
  ASSERT_TRUE(conn.Send(
      "POST /mcp HTTP/1.1\r\n" + host + "Mcp-Session-Id: " + session +
      "\r\nContent-Type: application/json\r\nAccept: application/json\r\nExpect: 100-continue\r\n"
      "Content-Length: " +
      std::to_string(ping.size()) + "\r\n\r\n"));
  EXPECT_EQ(conn.Response(), "HTTP/1.1 100 Continue\r\n\r\n");
  ASSERT_TRUE(conn.Send(ping));
  const std::string second = conn.Response();
  EXPECT_TRUE(second.starts_with("HTTP/1.1 200 ")) << second;
  EXPECT_TRUE(second.ends_with(R"({"jsonrpc":"2.0","id":2,"result":{}})")) << second;
  // Two requests in one write (pipelined) get two answers, in order.
  const std::string a = Rpc(3, "ping").dump();
  const std::string b = Rpc(4, "ping").dump();
  auto request = [&](const std::string& json) {
    return "POST /mcp HTTP/1.1\r\n" + host + "Mcp-Session-Id: " + session +
           "\r\nContent-Type: application/json\r\nAccept: application/json\r\nContent-Length: " +
           std::to_string(json.size()) + "\r\n\r\n" + json;
  };
  ASSERT_TRUE(conn.Send(request(a) + request(b)));
  EXPECT_THAT(conn.Response(), HasSubstr(R"("id":3)"));
  EXPECT_THAT(conn.Response(), HasSubstr(R"("id":4)"));
}

TEST(HttpAddress, ParsesHostAndPort) {
  struct Case {
    const char* text;
    const char* host;
    int port;
  };
  for (const Case& c :
       {Case{"127.0.0.1:8765", "127.0.0.1", 8765}, Case{"localhost:0", "localhost", 0},
        Case{"[::1]:9000", "::1", 9000}, Case{":8080", "127.0.0.1", 8080},
        Case{"8765", "127.0.0.1", 8765}, Case{"0.0.0.0:1", "0.0.0.0", 1}}) {
    auto parsed = ParseHostPort(c.text);
    ASSERT_TRUE(parsed) << c.text << ": " << parsed.error().message();
    EXPECT_EQ(parsed->host, c.host) << c.text;
    EXPECT_EQ(parsed->port, c.port) << c.text;
  }
  for (const char* bad :
       {"", "host", "host:", "host:65536", "host:-1", "::1:80", "[::1]", "[]:80", "h:8x"}) {
    EXPECT_FALSE(ParseHostPort(bad)) << bad;
  }
}

TEST(HttpAddress, KnowsLoopbackHosts) {
  for (const char* h : {"localhost", "LOCALHOST", "127.0.0.1", "127.1.2.3", "::1", "[::1]"}) {
    EXPECT_TRUE(IsLoopbackHost(h)) << h;
  }
  for (const char* h :
       {"0.0.0.0", "10.0.0.1", "::", "example.com", "localhost.example", "128.0.0.1", ""}) {
    EXPECT_FALSE(IsLoopbackHost(h)) << h;
  }
}

}  // namespace
}  // namespace talaria::mcp
