// The local Chromium behind its egress proxy, with real Debian Chromium: what Fetch interception
// cannot see (a WebSocket the page opens, a preconnect) and what it cannot pin (Chromium's own
// DNS answer for a name the guard judged) reaches only addresses the guard admitted. Canary
// listeners on 127.0.0.1 that never accept must end with an empty backlog.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <gtest/gtest.h>

#include <atomic>
#include <string>

#include "browser/chromium_process.h"
#include "support/host_table_resolver.h"
#include "support/loopback_http.h"
#include "support/loopback_listener.h"
#include "support/wait_until.h"
#include "talaria/browser/cdp_page_driver.h"

namespace talaria::browser {
namespace chromium_egress_testing {

using namespace std::chrono_literals;
using talaria::test_support::BacklogHasConnection;
using talaria::test_support::WaitUntil;

CallLimits EgressWithin(std::chrono::milliseconds d) {
  return {.deadline = std::chrono::steady_clock::now() + d, .cancel = {}};
}

void EgressHtml(httplib::Response& res, const std::string& body) {
  res.set_content(
      "<!doctype html><html><head><meta charset=utf-8><title>t</title>" + body + "</html>",
      "text/html");
}

// An HTTP server on 127.0.0.2:`port` (the address the guard is told to admit).
class SecondAddressServer {
 public:
  explicit SecondAddressServer(int port) {
    server_.set_tcp_nodelay(true);
    server_.Get("/", [](const httplib::Request&, httplib::Response& res) {
      EgressHtml(res, "</head><body><h1>Judged page</h1></body>");
    });
    ok_ = server_.bind_to_port("127.0.0.2", port);
    if (ok_) thread_ = std::jthread([this] { server_.listen_after_bind(); });
    for (int i = 0; ok_ && i < 5000 && !server_.is_running(); ++i) {
      std::this_thread::sleep_for(1ms);
    }
  }
  ~SecondAddressServer() {
    server_.stop();
    if (thread_.joinable()) thread_.join();
  }
  bool ok() const { return ok_; }

 private:
  httplib::Server server_;
  bool ok_ = false;
  std::jthread thread_;
};

class ChromiumEgressTest : public ::testing::Test {
 protected:
  ChromiumEgressTest()
      : pages_([this](httplib::Server& s) {
          s.Get("/ws", [this](const httplib::Request&, httplib::Response& res) {
            EgressHtml(res,
                       "<script>function open_(u,tag){const w=new WebSocket(u);"
                       "w.onopen=()=>console.log(tag+'-open');"
                       "w.onerror=()=>console.log(tag+'-error');}"
                       "open_('ws://127.0.0.1:" +
                           std::to_string(canary_.port) +
                           "/','canary');"
                           "open_('wss://127.0.0.1:" +
                           std::to_string(canary_.port) +
                           "/','canary-tls');"
                           "open_('ws://127.0.0.1:" +
                           std::to_string(pages_.port()) +
                           "/wsprobe','allowed');</script></head><body>ws</body>");
          });
          s.Get("/wsprobe", [this](const httplib::Request&, httplib::Response& res) {
            ++probes_;
            res.status = 404;
          });
          s.Get("/subresources", [this](const httplib::Request&, httplib::Response& res) {
            const std::string c = "http://127.0.0.1:" + std::to_string(canary_.port);
            EgressHtml(res, "<link rel=preconnect href='" + c + "'><link rel=dns-prefetch href='" +
                                c + "'></head><body><img src='" + c + "/x.png'><script>fetch('" +
                                c + "/f').catch(()=>console.log('fetch-failed'));</script></body>");
          });
        }) {}

  void Launch(std::vector<std::string> allow, std::vector<std::string> extra_args = {}) {
    if (FindChromium().empty()) GTEST_SKIP() << "no Chromium installed (apt-get install chromium)";
    ASSERT_TRUE(canary_.fd.valid());
    allow.push_back("127.0.0.1:" + std::to_string(pages_.port()));
    auto guard = web::NetworkGuard::Create({.allow_private = allow, .resolver = dns_});
    ASSERT_TRUE(guard.has_value()) << guard.error().message();
    auto page = LaunchLocalChromium(
        {.guard = *guard, .executable = "", .extra_args = std::move(extra_args)},
        EgressWithin(60s));
    ASSERT_TRUE(page.has_value()) << page.error().message();
    page_ = std::move(*page);
  }

  std::string ConsoleText() {
    std::string all;
    auto entries = page_->Console(false, EgressWithin(5s));
    for (const ConsoleEntry& e : entries ? *entries : std::vector<ConsoleEntry>{}) {
      all += e.type + ": " + e.text + "\n";
    }
    return all;
  }
  bool ConsoleHas(std::string_view type, std::string_view needle) {
    auto entries = page_->Console(false, EgressWithin(5s));
    if (!entries) return false;
    for (const ConsoleEntry& e : *entries) {
      if (e.type == type && e.text.find(needle) != std::string::npos) return true;
    }
    return false;
  }

  test_support::LoopbackListener canary_ = test_support::ListenOnLoopback();
  std::atomic<int> probes_{0};
  talaria_test::LoopbackHttpServer pages_;
  std::shared_ptr<test_support::HostTableResolver> dns_ =
      std::make_shared<test_support::HostTableResolver>();
  std::unique_ptr<PageDriver> page_;
};

TEST_F(ChromiumEgressTest, AWebSocketToARefusedAddressNeverConnects) {
  Launch({});
  ASSERT_TRUE(page_->Navigate(pages_.url("/ws"), EgressWithin(30s)).has_value());
  ASSERT_TRUE(WaitUntil(
      [&] { return ConsoleHas("log", "canary-error") && ConsoleHas("log", "canary-tls-error"); },
      20s, 10ms));
  // The allowed WebSocket went out (through the proxy) and reached its server.
  ASSERT_TRUE(WaitUntil([&] { return probes_.load() >= 1; }, 20s, 10ms));
  EXPECT_FALSE(BacklogHasConnection(canary_));
  EXPECT_FALSE(ConsoleHas("log", "canary-open"));
  EXPECT_TRUE(ConsoleHas("blocked", "(rule: loopback)")) << ConsoleText();
  EXPECT_TRUE(ConsoleHas("blocked", "[socket 127.0.0.1:" + std::to_string(canary_.port) + "]"))
      << ConsoleText();
}

TEST_F(ChromiumEgressTest, SubresourcesAndPreconnectsToARefusedAddressNeverConnect) {
  Launch({});
  ASSERT_TRUE(page_->Navigate(pages_.url("/subresources"), EgressWithin(30s)).has_value());
  ASSERT_TRUE(WaitUntil([&] { return ConsoleHas("log", "fetch-failed"); }, 20s, 10ms));
  // The preconnect never reaches Fetch interception: it is the proxy that refuses it.
  ASSERT_TRUE(WaitUntil(
      [&] {
        return ConsoleHas("blocked", "[socket 127.0.0.1:" + std::to_string(canary_.port) + "]");
      },
      20s, 10ms));
  EXPECT_FALSE(BacklogHasConnection(canary_));
}

TEST_F(ChromiumEgressTest, ANavigationGoesToTheJudgedAddressNotChromiumsAnswer) {
  // The guard's DNS says 127.0.0.2 (admitted); Chromium's own resolver would say 127.0.0.1,
  // where the canary listens on the same port: a rebinding answer between check and connect.
  SecondAddressServer judged(canary_.port);
  ASSERT_TRUE(judged.ok());
  dns_->Set("rebind.test", {"127.0.0.2"});
  Launch({"127.0.0.2/32"}, {"--host-resolver-rules=MAP rebind.test 127.0.0.1"});
  auto snap = page_->Navigate("http://rebind.test:" + std::to_string(canary_.port) + "/",
                              EgressWithin(30s));
  ASSERT_TRUE(snap.has_value()) << snap.error().message();
  EXPECT_NE(snap->text.find("Judged page"), std::string::npos) << snap->text;
  EXPECT_FALSE(BacklogHasConnection(canary_));
}

TEST_F(ChromiumEgressTest, ANameThatRebindsToLoopbackAfterTheCheckIsRefused) {
  // Public (stand-in: the admitted 127.0.0.2) for the navigation's checks, loopback after.
  SecondAddressServer judged(canary_.port);
  ASSERT_TRUE(judged.ok());
  dns_->Set("flip.test", {"127.0.0.2", "127.0.0.2", "127.0.0.1"});
  Launch({"127.0.0.2/32"}, {"--host-resolver-rules=MAP flip.test 127.0.0.1"});
  auto snap =
      page_->Navigate("http://flip.test:" + std::to_string(canary_.port) + "/", EgressWithin(30s));
  ASSERT_FALSE(snap.has_value()) << snap->text;
  EXPECT_EQ(snap.error().code(), StatusCode::kPermissionDenied) << snap.error().message();
  EXPECT_NE(snap.error().message().find("(rule: loopback)"), std::string::npos)
      << snap.error().message();
  EXPECT_FALSE(BacklogHasConnection(canary_));
}

}  // namespace chromium_egress_testing
}  // namespace talaria::browser
