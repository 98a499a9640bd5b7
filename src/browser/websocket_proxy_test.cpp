// The environment's proxy for a CDP WebSocket: which variable counts for ws:// and wss://,
// no_proxy's matching, credentials, and proxy URLs we cannot use.
#include "browser/websocket_proxy.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include "talaria/base/base64.h"

namespace talaria::browser {
namespace {

class ProxyEnv : public ::testing::Test {
 protected:
  void SetUp() override { Clear(); }
  void TearDown() override { Clear(); }
  static void Clear() {
    for (const char* v : {"http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy",
                          "ALL_PROXY", "no_proxy", "NO_PROXY"}) {
      ::unsetenv(v);
    }
  }
};

TEST(WebSocketProxyRules, NoProxyCoversDomainsTheirSubdomainsAndAddresses) {
  EXPECT_TRUE(NoProxyCovers("*", "anything.example"));
  EXPECT_TRUE(NoProxyCovers("example.com", "example.com"));
  EXPECT_TRUE(NoProxyCovers("example.com", "cdp.EXAMPLE.com"));
  EXPECT_TRUE(NoProxyCovers(" other.org , .example.com", "a.b.example.com"));
  EXPECT_TRUE(NoProxyCovers("127.0.0.1", "127.0.0.1"));
  EXPECT_TRUE(NoProxyCovers("[::1]", "::1"));
  EXPECT_FALSE(NoProxyCovers("example.com", "notexample.com"));
  EXPECT_FALSE(NoProxyCovers("example.com", "example.com.evil.org"));
  EXPECT_FALSE(NoProxyCovers("127.0.0.1", "127.0.0.10"));
  EXPECT_FALSE(NoProxyCovers("", "example.com"));
  EXPECT_FALSE(NoProxyCovers(",,", "example.com"));
}

TEST_F(ProxyEnv, WssUsesHttpsProxyAndWsUsesHttpProxy) {
  auto none = WebSocketProxyFor(true, "cdp.example");
  ASSERT_TRUE(none.has_value());
  EXPECT_FALSE(none->has_value());
  ::setenv("HTTPS_PROXY", "http://proxy.corp:3128", 1);
  ::setenv("http_proxy", "plain.corp:8080", 1);
  auto tls = WebSocketProxyFor(true, "cdp.example");
  ASSERT_TRUE(tls.has_value() && tls->has_value());
  EXPECT_EQ((*tls)->host, "proxy.corp");
  EXPECT_EQ((*tls)->port, "3128");
  EXPECT_EQ((*tls)->authorization, "");
  auto plain = WebSocketProxyFor(false, "cdp.example");
  ASSERT_TRUE(plain.has_value() && plain->has_value());
  EXPECT_EQ((*plain)->where, "plain.corp:8080");
  // HTTP_PROXY (upper case) is not read for ws://, as curl does not.
  ::unsetenv("http_proxy");
  ::setenv("HTTP_PROXY", "http://evil.corp:1", 1);
  auto upper = WebSocketProxyFor(false, "cdp.example");
  ASSERT_TRUE(upper.has_value());
  EXPECT_FALSE(upper->has_value());
  ::setenv("NO_PROXY", "example", 1);
  auto exempt = WebSocketProxyFor(true, "cdp.example");
  ASSERT_TRUE(exempt.has_value());
  EXPECT_FALSE(exempt->has_value());
}

TEST_F(ProxyEnv, CredentialsBecomeBasicAuthAndBadProxiesAreErrors) {
  ::setenv("https_proxy", "http://us%40er:p%3Ass@[::1]:8888/", 1);
  auto p = WebSocketProxyFor(true, "cdp.example");
  ASSERT_TRUE(p.has_value() && p->has_value()) << (p ? "" : p.error().message());
  EXPECT_EQ((*p)->host, "::1");
  EXPECT_EQ((*p)->where, "[::1]:8888");
  EXPECT_EQ((*p)->authorization, "Basic " + Base64Encode("us@er:p:ss"));
  EXPECT_EQ((*p)->where.find("us"), std::string::npos);  // never the credentials in messages
  for (const char* bad : {"socks5://127.0.0.1:1080", "http://host:0", "http://host:99999",
                          "http://:8080", "https://proxy:443"}) {
    ::setenv("https_proxy", bad, 1);
    auto r = WebSocketProxyFor(true, "cdp.example");
    EXPECT_FALSE(r.has_value()) << bad;
  }
}

}  // namespace
}  // namespace talaria::browser
