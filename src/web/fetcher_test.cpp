// The fetcher against real servers on 127.0.0.1 (opened with the allow list), with canary
// listeners that record any connection the guard should have prevented: redirect chains that
// end somewhere refused, a rebinding resolver, the size cap and charsets.
#include "talaria/web/fetcher.h"

#include <gtest/gtest.h>

#include <stdlib.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "support/loopback_http.h"
#include "talaria/html/url_resolve.h"
#include "talaria/web/charset.h"

namespace talaria::web {
namespace {

using talaria_test::LoopbackHttpServer;
using talaria_test::RawReplyServer;

// Records every connection it gets; a test expects none.
struct Canary {
  RawReplyServer server{
      [](int) { return std::string("HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nCANARY"); }};
  int port() const { return server.port(); }
  int connections() const { return server.connections(); }
};

std::shared_ptr<Fetcher> MakeFetcher(std::vector<std::string> allow,
                                     std::shared_ptr<Resolver> resolver = nullptr,
                                     FetchOptions options = {}) {
  auto guard = NetworkGuard::Create({.allow_private = std::move(allow), .resolver = resolver});
  EXPECT_TRUE(guard.has_value());
  auto f = Fetcher::Create(*guard, options);
  EXPECT_TRUE(f.has_value()) << f.error().message();
  return *f;
}

std::string HostPort(int port) { return "127.0.0.1:" + std::to_string(port); }

TEST(Fetcher, FetchesAnAllowedLocalPage) {
  LoopbackHttpServer server([](httplib::Server& s) {
    s.Get("/page", [](const httplib::Request& req, httplib::Response& res) {
      res.set_content(
          "<html><title>T</title><p>hello " + req.get_header_value("User-Agent") + "</p></html>",
          "text/html; charset=utf-8");
    });
  });
  auto f = MakeFetcher({HostPort(server.port())});
  auto page = f->Fetch(server.url("/page"));
  ASSERT_TRUE(page.has_value()) << page.error().message();
  EXPECT_EQ(page->status, 200);
  EXPECT_EQ(page->media_type, "text/html");
  EXPECT_NE(page->body.find("hello Mozilla/5.0 (compatible; talaria-web"), std::string::npos);
}

TEST(Fetcher, RefusesLoopbackWithoutTheAllowList) {
  Canary canary;
  auto f = MakeFetcher({});
  auto page = f->Fetch("http://127.0.0.1:" + std::to_string(canary.port()) + "/");
  ASSERT_FALSE(page.has_value());
  EXPECT_EQ(RefusalRule(page.error()), "loopback");
  auto hex = f->Fetch("http://0x7f000001:" + std::to_string(canary.port()) + "/");
  EXPECT_EQ(RefusalRule(hex.error()), "loopback");
  EXPECT_EQ(canary.connections(), 0);
}

TEST(Fetcher, JudgesEveryRedirectHop) {
  Canary canary;
  const std::string target = "http://127.0.0.1:" + std::to_string(canary.port()) + "/secret";
  LoopbackHttpServer server([&](httplib::Server& s) {
    s.Get("/to-canary",
          [&](const httplib::Request&, httplib::Response& res) { res.set_redirect(target, 302); });
    s.Get("/to-decimal", [&](const httplib::Request&, httplib::Response& res) {
      res.set_redirect("http://2130706433:" + std::to_string(canary.port()) + "/", 301);
    });
    s.Get("/to-metadata", [](const httplib::Request&, httplib::Response& res) {
      res.set_redirect("http://169.254.169.254/latest/meta-data/", 307);
    });
    s.Get("/to-file", [](const httplib::Request&, httplib::Response& res) {
      res.set_redirect("file:///etc/passwd", 302);
    });
    s.Get("/to-ftp", [](const httplib::Request&, httplib::Response& res) {
      res.set_redirect("ftp://example.com/x", 302);
    });
  });
  auto f = MakeFetcher({HostPort(server.port())});
  EXPECT_EQ(RefusalRule(f->Fetch(server.url("/to-canary")).error()), "loopback");
  EXPECT_EQ(RefusalRule(f->Fetch(server.url("/to-decimal")).error()), "loopback");
  EXPECT_EQ(RefusalRule(f->Fetch(server.url("/to-metadata")).error()), "cloud-metadata");
  EXPECT_EQ(RefusalRule(f->Fetch(server.url("/to-ftp")).error()), "scheme");
  // file:///etc/passwd is not even a web URL, resolved against the page: refused as such.
  auto file = f->Fetch(server.url("/to-file"));
  EXPECT_FALSE(file.has_value());
  EXPECT_EQ(canary.connections(), 0);
}

TEST(Fetcher, FollowsAllowedRedirectsUpToTen) {
  LoopbackHttpServer server([](httplib::Server& s) {
    s.Get(R"(/hop/(\d+))", [](const httplib::Request& req, httplib::Response& res) {
      const int n = std::stoi(req.matches[1]);
      if (n == 0) {
        res.set_content("arrived", "text/plain");
      } else {
        // Relative references, as servers send them.
        res.set_redirect(std::to_string(n - 1), 302);
      }
    });
  });
  auto f = MakeFetcher({HostPort(server.port())});
  auto ten = f->Fetch(server.url("/hop/10"));
  ASSERT_TRUE(ten.has_value()) << ten.error().message();
  EXPECT_EQ(ten->body, "arrived");
  EXPECT_EQ(ten->redirects.size(), 10U);
  EXPECT_EQ(ten->url, "http://127.0.0.1:" + std::to_string(server.port()) + "/hop/0");
  auto eleven = f->Fetch(server.url("/hop/11"));
  ASSERT_FALSE(eleven.has_value());
  EXPECT_NE(eleven.error().message().find("more than 10 redirects"), std::string::npos);
}

// Answers the first lookup with `first` and every later one with `later`.
class RebindingResolver : public Resolver {
 public:
  RebindingResolver(std::string first, std::string later)
      : first_(std::move(first)), later_(std::move(later)) {}
  Result<std::vector<IpAddress>> Resolve(const std::string&, const std::stop_token&) override {
    const bool first = calls_++ == 0;
    return std::vector<IpAddress>{*ParseIpLiteral(first ? first_ : later_)};
  }
  int calls() const { return calls_; }

 private:
  std::string first_, later_;
  std::atomic<int> calls_{0};
};

TEST(Fetcher, RebindingToLoopbackAfterThePublicAnswerReachesNothing) {
  // The name answers public (judged fine, and the connection is pinned there: no network here,
  // so it fails), then loopback: libcurl never resolves it again, so the canary stays untouched.
  Canary canary;
  auto resolver = std::make_shared<RebindingResolver>("93.184.216.34", "127.0.0.1");
  FetchOptions quick;
  quick.timeout = std::chrono::milliseconds(1500);
  auto f = MakeFetcher({}, resolver, quick);
  const std::string url = "http://rebind.test:" + std::to_string(canary.port()) + "/";
  auto first = f->Fetch(url);
  EXPECT_FALSE(first.has_value());
  EXPECT_EQ(RefusalRule(first.error()), "");  // a failure to connect, not a refusal
  auto second = f->Fetch(url);
  ASSERT_FALSE(second.has_value());
  EXPECT_EQ(RefusalRule(second.error()), "loopback");
  EXPECT_EQ(canary.connections(), 0);
  EXPECT_EQ(resolver->calls(), 2);
}

TEST(Fetcher, ConnectionGoesOnlyToTheJudgedAddress) {
  // The same port on two loopback addresses: 127.0.0.2 allowed (the page), 127.0.0.1 a canary.
  Canary canary;
  httplib::Server page;
  page.Get("/", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("judged", "text/plain");
  });
  ASSERT_TRUE(page.bind_to_port("127.0.0.2", canary.port()));
  std::thread serving([&] { page.listen_after_bind(); });
  for (int i = 0; i < 5000 && !page.is_running(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  auto resolver = std::make_shared<RebindingResolver>("127.0.0.2", "127.0.0.1");
  auto f = MakeFetcher({"127.0.0.2/32"}, resolver);
  const std::string url = "http://rebind.test:" + std::to_string(canary.port()) + "/";
  auto first = f->Fetch(url);
  ASSERT_TRUE(first.has_value()) << first.error().message();
  EXPECT_EQ(first->body, "judged");
  auto second = f->Fetch(url);
  EXPECT_EQ(RefusalRule(second.error()), "loopback");
  page.stop();
  serving.join();
  EXPECT_EQ(canary.connections(), 0);
}

TEST(Fetcher, PinRefusesASocketToAnyOtherAddress) {
  // The pin is also enforced where libcurl opens sockets: a proxy from the environment (here
  // the canary) would be a second way out; the socket to it is refused.
  Canary canary;
  ::setenv("http_proxy", ("http://127.0.0.1:" + std::to_string(canary.port())).c_str(), 1);
  auto client = net::MakeHttpClient();
  ASSERT_TRUE(client.has_value());
  net::HttpRequest req;
  req.url = "http://pinned.test:" + std::to_string(canary.port()) + "/";
  req.pinned_addresses = {"127.0.0.2"};
  auto r = (*client)->Send(req, [](std::string_view) { return true; });
  ::unsetenv("http_proxy");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), StatusCode::kPermissionDenied) << r.error().message();
  // An IP-literal URL pinned elsewhere goes to the pin, not to the literal.
  req.url = "http://127.0.0.1:" + std::to_string(canary.port()) + "/";
  req.proxy = "";
  EXPECT_FALSE((*client)->Send(req, [](std::string_view) { return true; }).has_value());
  EXPECT_EQ(canary.connections(), 0);
}

TEST(Fetcher, CapsTheBodyAndSaysSo) {
  LoopbackHttpServer server([](httplib::Server& s) {
    s.Get("/big", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(std::string(1 << 20, 'x'), "text/plain");
    });
  });
  FetchOptions small;
  small.max_bytes = 1000;
  auto f = MakeFetcher({HostPort(server.port())}, nullptr, small);
  auto page = f->Fetch(server.url("/big"));
  ASSERT_TRUE(page.has_value()) << page.error().message();
  EXPECT_TRUE(page->truncated);
  EXPECT_EQ(page->body.size(), 1000U);
  EXPECT_EQ(page->media_type, "text/plain");
}

TEST(Fetcher, SharesConnectionsAcrossParallelFetches) {
  LoopbackHttpServer server([](httplib::Server& s) {
    s.Get("/p", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("ok", "text/plain");
    });
  });
  auto f = MakeFetcher({HostPort(server.port())});
  for (int round = 0; round < 3; ++round) {
    std::vector<std::jthread> ts;
    for (int i = 0; i < 4; ++i) {
      ts.emplace_back([&] { EXPECT_TRUE(f->Fetch(server.url("/p")).has_value()); });
    }
  }
  EXPECT_EQ(server.requests(), 12);
  EXPECT_LT(server.connections(), 12);  // kept-alive connections were reused
}

TEST(Charset, FindsTheEncodingLikeABrowser) {
  EXPECT_EQ(DetectCharset("abc", "text/html; charset=ISO-8859-1", true), "windows-1252");
  EXPECT_EQ(DetectCharset("\xEF\xBB\xBFx", "text/html; charset=koi8-r", true), "utf-8");
  EXPECT_EQ(DetectCharset("<html><head><meta charset=\"Shift_JIS\">", "text/html", true),
            "shift_jis");
  EXPECT_EQ(
      DetectCharset("<meta http-equiv=\"Content-Type\" content=\"text/html; charset=koi8-r\">", "",
                    true),
      "koi8-r");
  EXPECT_EQ(DetectCharset("caf\xE9", "text/plain", false), "windows-1252");
  EXPECT_EQ(DetectCharset("caf\xC3\xA9", "", false), "utf-8");
}

TEST(Charset, DecodesToUtf8) {
  EXPECT_EQ(*DecodeToUtf8("caf\xE9 \x80", "windows-1252"), "caf\xC3\xA9 \xE2\x82\xAC");
  EXPECT_EQ(*DecodeToUtf8("\x82\xA0", "shift_jis"), "\xE3\x81\x82");               // あ
  EXPECT_EQ(*DecodeToUtf8("\xD0\xD2\xC9", "koi8-r"), "\xD0\xBF\xD1\x80\xD0\xB8");  // при
  EXPECT_EQ(*DecodeToUtf8("a\xFF"
                          "b",
                          "utf-8"),
            "a\xEF\xBF\xBD"
            "b");
  EXPECT_FALSE(DecodeToUtf8("x", "no-such-charset").has_value());
}

// A label means what browsers decode it as: pages that declare gb2312 write GBK, Shift_JIS
// pages write CP932 (qq.com's page in tests/data/real_pages has GBK-only characters).
TEST(Charset, DecodesLabelsAsTheirWebSupersets) {
  EXPECT_EQ(*DecodeToUtf8("\xE9\x46", "gb2312"), "\xE9\x95\x95");     // 镕, GBK only
  EXPECT_EQ(*DecodeToUtf8("\x88\xD2", "GBK"), "\xE5\xA0\x83");        // 堃
  EXPECT_EQ(*DecodeToUtf8("\x87\x40", "shift_jis"), "\xE2\x91\xA0");  // ①, CP932 only
  EXPECT_EQ(*DecodeToUtf8("\xF0", "iso-8859-9"), "\xC4\x9F");         // ğ
}

TEST(Fetcher, DecodesACompressedBody) {
  // A gzip body sent by hand (the bytes of "hello, gzip" compressed).
  const std::string gz(
      "\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\x03\xcb\x48\xcd\xc9\xc9\xd7\x51\x48\xaf\xca\x2c\x00"
      "\x00\x4a\x9b\xb1\x5c\x0b\x00\x00\x00",
      31);
  RawReplyServer server([&](int) {
    return "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Encoding: gzip\r\n"
           "Content-Length: " +
           std::to_string(gz.size()) + "\r\n\r\n" + gz;
  });
  auto f = MakeFetcher({HostPort(server.port())});
  auto page = f->Fetch("http://127.0.0.1:" + std::to_string(server.port()) + "/");
  ASSERT_TRUE(page.has_value()) << page.error().message();
  EXPECT_EQ(page->body, "hello, gzip");
}

// Redirect Locations are resolved by the html module's RFC 3986 resolver.
TEST(ResolveReference, HandlesEveryForm) {
  EXPECT_EQ(html::ResolveUrl("http://a:1/x/y?q", "https://b/c"), "https://b/c");
  EXPECT_EQ(html::ResolveUrl("http://a:1/x/y?q", "//b/c"), "http://b/c");
  EXPECT_EQ(html::ResolveUrl("http://a:1/x/y?q", "/c"), "http://a:1/c");
  EXPECT_EQ(html::ResolveUrl("http://a:1/x/y?q", "c"), "http://a:1/x/c");
  EXPECT_EQ(html::ResolveUrl("http://a:1/x/y?q", "?z"), "http://a:1/x/y?z");
}

}  // namespace
}  // namespace talaria::web
