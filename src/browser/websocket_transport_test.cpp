// ConnectWebSocket against a real Chromium (--remote-debugging-port=0): real CDP in both
// directions, the message cap, Close and cancel waking a blocked Receive; and against local
// servers that refuse the upgrade (the headers it saw) or never answer (the deadline).
#include <httplib.h>

#include <gtest/gtest.h>

#include <poll.h>
#include <sys/socket.h>

#include <chrono>
#include <cstdlib>
#include <future>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/local_chromium.h"
#include "support/loopback_http.h"
#include "support/loopback_listener.h"
#include "support/temp_dir.h"
#include "support/wait_until.h"
#include "talaria/base/subprocess.h"
#include "talaria/browser/cdp_transport.h"

namespace talaria::browser {
namespace {

using namespace std::chrono_literals;
using talaria_test::LocalChromium;

// Options with what a test sets (designated initializers would leave `headers` unnamed).
WebSocketOptions Ws(std::string url, size_t max_bytes = size_t{64} << 20,
                    std::chrono::milliseconds timeout = 10s) {
  WebSocketOptions o;
  o.url = std::move(url);
  o.max_message_bytes = max_bytes;
  o.connect_timeout = timeout;
  return o;
}

std::unique_ptr<LocalChromium> StartChromiumOrSkip() {
  std::string why;
  auto chromium = LocalChromium::Start(why);
  if (!chromium) ADD_FAILURE() << why;
  return chromium;
}

// The reply to command `id`, skipping events; null JSON when none came before the deadline.
nlohmann::json ReplyTo(CdpTransport& t, int id) {
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while (true) {
    auto message = t.Receive(deadline, {});
    if (!message) {
      ADD_FAILURE() << message.error().message();
      return nullptr;
    }
    auto json = nlohmann::json::parse(*message, nullptr, false);
    if (json.is_object() && json.value("id", -1) == id) return json;
  }
}

TEST(WebSocketTransport, SpeaksCdpWithARealChromium) {
  if (LocalChromium::ProgramPath().empty()) GTEST_SKIP() << "no Chromium installed";
  auto chromium = StartChromiumOrSkip();
  ASSERT_TRUE(chromium);
  auto t = ConnectWebSocket(Ws(chromium->browser_ws_url()));
  ASSERT_TRUE(t.has_value()) << t.error().message();

  ASSERT_TRUE((*t)->Send(R"({"id":1,"method":"Browser.getVersion"})").ok());
  const auto version = ReplyTo(**t, 1);
  EXPECT_NE(version["result"].value("product", "").find("Chrome"), std::string::npos) << version;

  // A page, attached as a flat session, evaluates an expression: commands and events both ways.
  ASSERT_TRUE(
      (*t)->Send(R"({"id":2,"method":"Target.createTarget","params":{"url":"about:blank"}})").ok());
  const std::string target = ReplyTo(**t, 2)["result"].value("targetId", "");
  ASSERT_FALSE(target.empty());
  ASSERT_TRUE((*t)->Send(R"({"id":3,"method":"Target.attachToTarget","params":{"targetId":")" +
                         target + R"(","flatten":true}})")
                  .ok());
  const std::string session = ReplyTo(**t, 3)["result"].value("sessionId", "");
  ASSERT_FALSE(session.empty());
  ASSERT_TRUE((*t)->Send(R"({"id":4,"sessionId":")" + session +
                         R"(","method":"Runtime.evaluate","params":{"expression":"6*7"}})")
                  .ok());
  EXPECT_EQ(ReplyTo(**t, 4)["result"]["result"].value("value", 0), 42);
  (*t)->Close();
  EXPECT_EQ((*t)->Send("{}").code(), StatusCode::kUnavailable);
}

TEST(WebSocketTransport, AMessageOverTheCapEndsTheConnection) {
  if (LocalChromium::ProgramPath().empty()) GTEST_SKIP() << "no Chromium installed";
  auto chromium = StartChromiumOrSkip();
  ASSERT_TRUE(chromium);
  auto t = ConnectWebSocket(Ws(chromium->browser_ws_url(), 64));
  ASSERT_TRUE(t.has_value()) << t.error().message();
  ASSERT_TRUE((*t)->Send(R"({"id":1,"method":"Browser.getVersion"})").ok());  // ~300 bytes back
  auto reply = (*t)->Receive(std::chrono::steady_clock::now() + 20s, {});
  ASSERT_FALSE(reply.has_value());
  EXPECT_EQ(reply.error().code(), StatusCode::kUnavailable);
  EXPECT_NE(reply.error().message().find("over the limit"), std::string::npos)
      << reply.error().message();
}

TEST(WebSocketTransport, CloseAndCancelWakeABlockedReceive) {
  if (LocalChromium::ProgramPath().empty()) GTEST_SKIP() << "no Chromium installed";
  auto chromium = StartChromiumOrSkip();
  ASSERT_TRUE(chromium);
  auto t = ConnectWebSocket(Ws(chromium->browser_ws_url()));
  ASSERT_TRUE(t.has_value()) << t.error().message();

  std::stop_source cancel;
  auto cancelled = std::async(std::launch::async, [&] {
    return (*t)->Receive(std::chrono::steady_clock::now() + 30s, cancel.get_token());
  });
  cancel.request_stop();
  auto first = cancelled.get();
  ASSERT_FALSE(first.has_value());
  EXPECT_EQ(first.error().code(), StatusCode::kCancelled);

  auto closed = std::async(std::launch::async, [&] {
    return (*t)->Receive(std::chrono::steady_clock::now() + 30s, {});
  });
  (*t)->Close();
  auto second = closed.get();
  ASSERT_FALSE(second.has_value());
  EXPECT_EQ(second.error().code(), StatusCode::kUnavailable);

  // Nothing arrives on a quiet connection: the deadline ends the wait.
  auto t2 = ConnectWebSocket(Ws(chromium->browser_ws_url()));
  ASSERT_TRUE(t2.has_value());
  auto quiet = (*t2)->Receive(std::chrono::steady_clock::now() + 50ms, {});
  ASSERT_FALSE(quiet.has_value());
  EXPECT_EQ(quiet.error().code(), StatusCode::kDeadlineExceeded);
}

TEST(WebSocketTransport, SendsTheCallersHeadersAndReportsARefusedUpgrade) {
  std::mutex mu;
  std::map<std::string, std::string> seen;
  talaria_test::LoopbackHttpServer server([&](httplib::Server& s) {
    s.Get("/devtools/browser/abc", [&](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard lock(mu);
      for (const auto& [k, v] : req.headers) seen[k] = v;
      res.status = 403;
    });
  });
  auto t = ConnectWebSocket(
      {.url = "ws://127.0.0.1:" + std::to_string(server.port()) + "/devtools/browser/abc",
       .headers = {{"Authorization", "Bearer secret-token"}, {"X-Session", "s1"}}});
  ASSERT_FALSE(t.has_value());
  EXPECT_EQ(t.error().code(), StatusCode::kUnavailable);
  EXPECT_NE(t.error().message().find("HTTP 403"), std::string::npos) << t.error().message();
  std::lock_guard lock(mu);
  EXPECT_EQ(seen["Authorization"], "Bearer secret-token");
  EXPECT_EQ(seen["X-Session"], "s1");
  EXPECT_EQ(seen["Upgrade"], "websocket");
}

bool MakeCertificate(const std::string& dir) {
  SpawnOptions options;
  options.argv = {"openssl",  "req",
                  "-x509",    "-newkey",
                  "rsa:2048", "-nodes",
                  "-keyout",  dir + "/local.key",
                  "-out",     dir + "/local.pem",
                  "-days",    "2",
                  "-subj",    "/CN=talaria-test",
                  "-addext",  "subjectAltName=IP:127.0.0.1"};
  options.timeout = std::chrono::seconds(60);
  auto run = RunProcess(options);
  return run && run->exit_code == 0;
}

// wss: the TLS handshake verifies the peer (a certificate the system does not trust is
// refused; trusted through SSL_CERT_FILE it is accepted) and the upgrade then goes over TLS.
TEST(WebSocketTransport, WssVerifiesThePeerAndUpgradesOverTls) {
  test_support::TempDir dir;
  if (!MakeCertificate(dir.path())) GTEST_SKIP() << "openssl cannot make a test certificate";
  std::mutex mu;
  std::string authorization;
  httplib::SSLServer server((dir.path() + "/local.pem").c_str(),
                            (dir.path() + "/local.key").c_str());
  server.Get("/devtools/browser/tls", [&](const httplib::Request& req, httplib::Response& res) {
    std::lock_guard lock(mu);
    authorization = req.get_header_value("Authorization");
    res.status = 401;
  });
  const int port = server.bind_to_any_port("127.0.0.1");
  std::thread serving([&] { server.listen_after_bind(); });
  const std::string url = "wss://127.0.0.1:" + std::to_string(port) + "/devtools/browser/tls";

  auto untrusted = ConnectWebSocket({.url = url, .headers = {{"Authorization", "Bearer t"}}});
  ASSERT_FALSE(untrusted.has_value());
  EXPECT_NE(untrusted.error().message().find("TLS handshake failed"), std::string::npos)
      << untrusted.error().message();

  ::setenv("SSL_CERT_FILE", (dir.path() + "/local.pem").c_str(), 1);
  auto trusted = ConnectWebSocket({.url = url, .headers = {{"Authorization", "Bearer t"}}});
  ::unsetenv("SSL_CERT_FILE");
  ASSERT_FALSE(trusted.has_value());
  EXPECT_NE(trusted.error().message().find("upgrade refused with HTTP 401"), std::string::npos)
      << trusted.error().message();
  server.stop();
  serving.join();
  std::lock_guard lock(mu);
  EXPECT_EQ(authorization, "Bearer t");
}

TEST(WebSocketTransport, APeerThatNeverAnswersHitsTheDeadline) {
  const auto listener = test_support::ListenOnLoopback();
  ASSERT_TRUE(listener.fd);
  auto t = ConnectWebSocket(
      Ws("ws://127.0.0.1:" + std::to_string(listener.port) + "/x", size_t{1} << 20, 300ms));
  ASSERT_FALSE(t.has_value());
  EXPECT_EQ(t.error().code(), StatusCode::kDeadlineExceeded) << t.error().message();
}

TEST(WebSocketTransport, RefusesBadUrlsAndHeadersAndReportsNoListener) {
  EXPECT_EQ(ConnectWebSocket(Ws("http://127.0.0.1:9/x")).error().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(ConnectWebSocket(Ws("ws://user@127.0.0.1:9/x")).error().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(ConnectWebSocket(Ws("ws://127.0.0.1:99999/x")).error().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(ConnectWebSocket({.url = "ws://127.0.0.1:9/x", .headers = {{"X-A", "b\r\nEvil: 1"}}})
                .error()
                .code(),
            StatusCode::kInvalidArgument);
  auto refused = ConnectWebSocket(
      Ws("ws://127.0.0.1:" + std::to_string(talaria_test::UnusedLoopbackPort()) + "/x"));
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code(), StatusCode::kUnavailable) << refused.error().message();
}

// A CONNECT proxy on 127.0.0.1: records each request head, answers `status`, and with 200
// splices the tunnel to the 127.0.0.1 port asked for. One connection at a time.
class ConnectProxy {
 public:
  explicit ConnectProxy(int status) : status_(status), listener_(test_support::ListenOnLoopback()) {
    thread_ = std::jthread([this](std::stop_token stop) { Serve(stop); });
  }
  ~ConnectProxy() {
    thread_.request_stop();
    ::shutdown(listener_.fd.get(), SHUT_RDWR);
  }
  int port() const { return listener_.port; }
  std::vector<std::string> heads() {
    std::lock_guard lock(mu_);
    return heads_;
  }

 private:
  void Serve(const std::stop_token& stop) {
    while (!stop.stop_requested()) {
      UniqueFd client(::accept4(listener_.fd.get(), nullptr, nullptr, SOCK_CLOEXEC));
      if (!client) return;
      std::string head;
      char c;
      while (head.find("\r\n\r\n") == std::string::npos && head.size() < 8192 &&
             ::recv(client.get(), &c, 1, 0) == 1) {
        head.push_back(c);
      }
      {
        std::lock_guard lock(mu_);
        heads_.push_back(head);
      }
      if (status_ != 200) {
        const std::string no = "HTTP/1.1 " + std::to_string(status_) + " No\r\n\r\n";
        ::send(client.get(), no.data(), no.size(), MSG_NOSIGNAL);
        continue;
      }
      const size_t colon = head.find(':', 8);
      const int target_port = std::atoi(head.c_str() + colon + 1);
      UniqueFd upstream(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
      sockaddr_in addr{};
      addr.sin_family = AF_INET;
      addr.sin_port = htons(static_cast<uint16_t>(target_port));
      addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      if (::connect(upstream.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) continue;
      const std::string ok = "HTTP/1.1 200 Connection established\r\n\r\n";
      ::send(client.get(), ok.data(), ok.size(), MSG_NOSIGNAL);
      Splice(client.get(), upstream.get(), stop);
    }
  }
  static void Splice(int a, int b, const std::stop_token& stop) {
    char buf[65536];
    while (!stop.stop_requested()) {
      pollfd p[2] = {{.fd = a, .events = POLLIN, .revents = 0},
                     {.fd = b, .events = POLLIN, .revents = 0}};
      if (::poll(p, 2, 100) <= 0) continue;
      for (int i = 0; i < 2; ++i) {
        if ((p[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
        const ssize_t n = ::recv(p[i].fd, buf, sizeof buf, 0);
        if (n <= 0) return;
        if (::send(p[1 - i].fd, buf, static_cast<size_t>(n), MSG_NOSIGNAL) != n) return;
      }
    }
  }

  const int status_;
  test_support::LoopbackListener listener_;
  std::mutex mu_;
  std::vector<std::string> heads_;
  std::jthread thread_;
};

TEST(WebSocketTransport, GoesThroughTheEnvironmentsProxyUnlessNoProxySaysNot) {
  if (LocalChromium::ProgramPath().empty()) GTEST_SKIP() << "no Chromium installed";
  auto chromium = StartChromiumOrSkip();
  ASSERT_TRUE(chromium);
  ConnectProxy proxy(200);
  ::setenv("http_proxy", ("http://cdp:s%40cret@127.0.0.1:" + std::to_string(proxy.port())).c_str(),
           1);
  {
    auto t = ConnectWebSocket(Ws(chromium->browser_ws_url()));
    ASSERT_TRUE(t.has_value()) << t.error().message();
    ASSERT_TRUE((*t)->Send(R"({"id":1,"method":"Browser.getVersion"})").ok());
    EXPECT_TRUE(ReplyTo(**t, 1).contains("result"));
    (*t)->Close();
  }
  const auto heads = proxy.heads();
  ASSERT_EQ(heads.size(), 1u);
  EXPECT_TRUE(heads[0].starts_with("CONNECT 127.0.0.1:" + std::to_string(chromium->port()) +
                                   " HTTP/1.1\r\n"))
      << heads[0];
  // "cdp:s@cret", base64.
  EXPECT_NE(heads[0].find("Proxy-Authorization: Basic Y2RwOnNAY3JldA=="), std::string::npos)
      << heads[0];

  ::setenv("no_proxy", "localhost,127.0.0.1", 1);
  auto direct = ConnectWebSocket(Ws(chromium->browser_ws_url()));
  ::unsetenv("no_proxy");
  ::unsetenv("http_proxy");
  ASSERT_TRUE(direct.has_value()) << direct.error().message();
  EXPECT_EQ(proxy.heads().size(), 1u) << "no_proxy was not honoured";
}

TEST(WebSocketTransport, WssRunsTlsAndTheUpgradeInsideTheTunnel) {
  test_support::TempDir dir;
  if (!MakeCertificate(dir.path())) GTEST_SKIP() << "openssl cannot make a test certificate";
  httplib::SSLServer server((dir.path() + "/local.pem").c_str(),
                            (dir.path() + "/local.key").c_str());
  server.Get("/devtools/browser/tls",
             [&](const httplib::Request&, httplib::Response& res) { res.status = 401; });
  const int port = server.bind_to_any_port("127.0.0.1");
  std::thread serving([&] { server.listen_after_bind(); });
  ConnectProxy proxy(200);
  ::setenv("https_proxy", ("127.0.0.1:" + std::to_string(proxy.port())).c_str(), 1);
  ::setenv("SSL_CERT_FILE", (dir.path() + "/local.pem").c_str(), 1);
  auto t =
      ConnectWebSocket(Ws("wss://127.0.0.1:" + std::to_string(port) + "/devtools/browser/tls"));
  ::unsetenv("SSL_CERT_FILE");
  ::unsetenv("https_proxy");
  server.stop();
  serving.join();
  // The server's own answer, over TLS verified against its certificate, through the proxy.
  ASSERT_FALSE(t.has_value());
  EXPECT_NE(t.error().message().find("upgrade refused with HTTP 401"), std::string::npos)
      << t.error().message();
  ASSERT_EQ(proxy.heads().size(), 1u);
  EXPECT_TRUE(proxy.heads()[0].starts_with("CONNECT 127.0.0.1:" + std::to_string(port)));
}

TEST(WebSocketTransport, AProxyThatRefusesTheTunnelIsAClearError) {
  ConnectProxy proxy(407);
  ::setenv("https_proxy", ("http://127.0.0.1:" + std::to_string(proxy.port())).c_str(), 1);
  auto t = ConnectWebSocket(Ws("wss://cdp.example:9222/devtools/browser/x"));
  ::unsetenv("https_proxy");
  ASSERT_FALSE(t.has_value());
  EXPECT_NE(t.error().message().find("refused the tunnel (HTTP 407)"), std::string::npos)
      << t.error().message();
  ASSERT_EQ(proxy.heads().size(), 1u);
  EXPECT_TRUE(proxy.heads()[0].starts_with("CONNECT cdp.example:9222 HTTP/1.1\r\n"));
}

TEST(LocalChromiumFixture, LeavesNoProcessBehind) {
  if (LocalChromium::ProgramPath().empty()) GTEST_SKIP() << "no Chromium installed";
  auto chromium = StartChromiumOrSkip();
  ASSERT_TRUE(chromium);
  const std::string profile = chromium->profile_dir();
  EXPECT_GE(talaria_test::ProcessesMentioning(profile), 1);
  chromium->Stop();
  // Killed as a group; the other members may take a moment to be gone from /proc.
  EXPECT_TRUE(test_support::WaitUntil(
      [&] { return talaria_test::ProcessesMentioning(profile) == 0; }, 10s, 10ms))
      << talaria_test::ProcessesMentioning(profile) << " processes left";
}

}  // namespace
}  // namespace talaria::browser
