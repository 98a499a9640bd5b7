// HTTPS through the client against a local server whose certificate the test makes: the peer is
// verified (an untrusted certificate and one for another host are refused), and a configured
// CA file is trusted.
#include <httplib.h>

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <thread>

#include "support/temp_dir.h"
#include "talaria/base/subprocess.h"
#include "talaria/net/http_client.h"

namespace talaria::net {
namespace {

using talaria::test_support::TempDir;

// A self-signed certificate (usable as its own CA) for `san`, e.g. "IP:127.0.0.1".
bool MakeCertificate(const std::string& dir, const std::string& name, const std::string& san) {
  SpawnOptions options;
  options.argv = {"openssl",  "req",
                  "-x509",    "-newkey",
                  "rsa:2048", "-nodes",
                  "-keyout",  dir + "/" + name + ".key",
                  "-out",     dir + "/" + name + ".pem",
                  "-days",    "2",
                  "-subj",    "/CN=talaria-test",
                  "-addext",  "subjectAltName=" + san};
  options.timeout = std::chrono::seconds(60);
  auto run = RunProcess(options);
  return run && run->exit_code == 0;
}

class Https : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!MakeCertificate(dir_.path(), "local", "IP:127.0.0.1") ||
        !MakeCertificate(dir_.path(), "other", "DNS:other.invalid")) {
      GTEST_SKIP() << "openssl cannot make a test certificate here";
    }
  }
  void TearDown() override {
    if (server_) server_->stop();
    if (thread_.joinable()) thread_.join();
  }
  // Serves GET /hello over TLS with certificate `name`; returns the URL.
  std::string Serve(const std::string& name) {
    const std::string base = dir_.path() + "/" + name;
    server_ =
        std::make_unique<httplib::SSLServer>((base + ".pem").c_str(), (base + ".key").c_str());
    server_->Get("/hello", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("hi over tls", "text/plain");
    });
    const int port = server_->bind_to_any_port("127.0.0.1");
    // Bound and listening already: a connection waits in the backlog until the loop accepts it.
    thread_ = std::thread([this] { server_->listen_after_bind(); });
    return "https://127.0.0.1:" + std::to_string(port) + "/hello";
  }
  Result<HttpResponseHead> Get(const std::string& url, const std::string& ca_file,
                               std::string& body) {
    auto client = MakeHttpClient();
    if (!client) return Err(client.error());
    HttpRequest request;
    request.method = "GET";
    request.url = url;
    request.ca_file = ca_file;
    return (*client)->Send(request, [&](std::string_view chunk) {
      body.append(chunk);
      return true;
    });
  }

  TempDir dir_;
  std::unique_ptr<httplib::SSLServer> server_;
  std::thread thread_;
};

TEST_F(Https, ACertificateNobodyTrustsIsRefused) {
  const std::string url = Serve("local");
  std::string body;
  auto head = Get(url, /*ca_file=*/"", body);
  ASSERT_FALSE(head);
  EXPECT_EQ(head.error().code(), StatusCode::kUnavailable);
  EXPECT_NE(head.error().message().find("certificate"), std::string::npos)
      << head.error().message();
  EXPECT_TRUE(body.empty());
}

TEST_F(Https, TheConfiguredCaFileIsTrusted) {
  const std::string url = Serve("local");
  std::string body;
  auto head = Get(url, dir_.path() + "/local.pem", body);
  ASSERT_TRUE(head) << head.error().message();
  EXPECT_EQ(head->status, 200);
  EXPECT_EQ(body, "hi over tls");
}

TEST_F(Https, ATrustedCertificateForAnotherHostIsRefused) {
  const std::string url = Serve("other");
  std::string body;
  auto head = Get(url, dir_.path() + "/other.pem", body);
  ASSERT_FALSE(head) << "a certificate for other.invalid was accepted for 127.0.0.1";
  EXPECT_EQ(head.error().code(), StatusCode::kUnavailable);
  EXPECT_TRUE(body.empty());
}

}  // namespace
}  // namespace talaria::net
