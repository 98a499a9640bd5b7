// The fetcher over HTTPS against a local TLS server whose certificate the test makes: a pinned
// TLS fetch still verifies the peer, and a redirect from https down to http is refused before
// the http server (a canary) is reached.
#include <httplib.h>

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <thread>

#include "support/loopback_http.h"
#include "support/temp_dir.h"
#include "talaria/base/subprocess.h"
#include "talaria/web/fetcher.h"

namespace talaria::web {
namespace {

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

TEST(FetcherHttps, PinnedTlsFetchVerifiesAndRefusesADowngrade) {
  test_support::TempDir dir;
  if (!MakeCertificate(dir.path())) GTEST_SKIP() << "openssl cannot make a test certificate";
  talaria_test::RawReplyServer canary(
      [](int) { return std::string("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx"); });
  const std::string down = "http://127.0.0.1:" + std::to_string(canary.port()) + "/";
  httplib::SSLServer server((dir.path() + "/local.pem").c_str(),
                            (dir.path() + "/local.key").c_str());
  server.set_keep_alive_timeout(1);  // the fetcher's pool keeps the connection; stop sooner
  server.Get("/page", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("over tls", "text/plain");
  });
  server.Get("/down",
             [&](const httplib::Request&, httplib::Response& res) { res.set_redirect(down, 302); });
  const int port = server.bind_to_any_port("127.0.0.1");
  std::thread serving([&] { server.listen_after_bind(); });
  const std::string base = "https://127.0.0.1:" + std::to_string(port);

  auto guard =
      NetworkGuard::Create({.allow_private = {"127.0.0.1:" + std::to_string(port),
                                              "127.0.0.1:" + std::to_string(canary.port())},
                            .resolver = nullptr});
  ASSERT_TRUE(guard.has_value());
  FetchOptions trusting;
  trusting.ca_file = dir.path() + "/local.pem";
  auto fetcher = Fetcher::Create(*guard, trusting);
  ASSERT_TRUE(fetcher.has_value());
  auto page = (*fetcher)->Fetch(base + "/page");
  ASSERT_TRUE(page.has_value()) << page.error().message();
  EXPECT_EQ(page->body, "over tls");

  auto downgraded = (*fetcher)->Fetch(base + "/down");
  ASSERT_FALSE(downgraded.has_value());
  EXPECT_EQ(RefusalRule(downgraded.error()), "scheme-change");

  auto untrusting = Fetcher::Create(*guard);  // the system's CAs do not know this certificate
  ASSERT_TRUE(untrusting.has_value());
  EXPECT_FALSE((*untrusting)->Fetch(base + "/page").has_value());

  server.stop();
  serving.join();
  EXPECT_EQ(canary.connections(), 0);
}

}  // namespace
}  // namespace talaria::web
