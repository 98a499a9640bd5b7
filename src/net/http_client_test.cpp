// The HTTP client against real servers on 127.0.0.1: keep-alive, streaming, timeouts, cancel
// and the failures a model endpoint produces (refused, dropped mid-body).
#include "talaria/net/http_client.h"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "support/loopback_http.h"

namespace talaria::net {
namespace {

using namespace std::chrono_literals;
using talaria_test::LoopbackHttpServer;
using talaria_test::RawReplyServer;

HttpRequest MakeRequest(std::string method, std::string url) {
  HttpRequest request;
  request.method = std::move(method);
  request.url = std::move(url);
  return request;
}

std::unique_ptr<HttpClient> NewClient() {
  auto client = MakeHttpClient();
  EXPECT_TRUE(client.has_value()) << client.error().ToString();
  return client ? std::move(*client) : nullptr;
}

Result<HttpResponseHead> Get(HttpClient& client, const std::string& url, std::string& body,
                             std::stop_token stop = {}) {
  HttpRequest request = MakeRequest("GET", url);
  return client.Send(
      request,
      [&](std::string_view chunk) {
        body.append(chunk);
        return true;
      },
      std::move(stop));
}

TEST(HttpClient, ReusesOneConnectionAcrossRequests) {
  LoopbackHttpServer server([](httplib::Server& s) {
    s.Get("/hello", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("hi", "text/plain");
    });
  });
  auto client = NewClient();
  ASSERT_NE(client, nullptr);
  for (int i = 0; i < 5; ++i) {
    std::string body;
    auto head = Get(*client, server.url("/hello"), body);
    ASSERT_TRUE(head.has_value()) << head.error().ToString();
    EXPECT_EQ(head->status, 200);
    EXPECT_EQ(body, "hi");
  }
  EXPECT_EQ(server.requests(), 5);
  EXPECT_EQ(server.connections(), 1);
}

TEST(HttpClient, PostsBodyAndHeadersAndCapturesResponseHeaders) {
  LoopbackHttpServer server([](httplib::Server& s) {
    s.Post("/echo", [](const httplib::Request& req, httplib::Response& res) {
      res.status = 404;
      res.set_header("X-Seen-Key", req.get_header_value("X-Key"));
      res.set_content("got:" + req.body, "text/plain");
    });
  });
  auto client = NewClient();
  ASSERT_NE(client, nullptr);
  HttpRequest request = MakeRequest("POST", server.url("/echo"));
  request.headers = {{"X-Key", "abc"}, {"Content-Type", "application/json"}};
  request.body = std::string(3000, 'x');
  std::string body;
  auto head = client->Send(request, [&](std::string_view chunk) {
    body.append(chunk);
    return true;
  });
  ASSERT_TRUE(head.has_value()) << head.error().ToString();
  EXPECT_EQ(head->status, 404);  // an error status is a response, not a failure
  EXPECT_EQ(head->Header("x-seen-key"), "abc");
  EXPECT_EQ(head->Header("content-type"), "text/plain");
  EXPECT_EQ(head->Header("X-Absent"), "");
  EXPECT_EQ(body, "got:" + std::string(3000, 'x'));
}

TEST(HttpClient, StreamsBodyAsItArrives) {
  LoopbackHttpServer* srv = nullptr;
  LoopbackHttpServer server([&](httplib::Server& s) {
    s.Get("/stream", [&](const httplib::Request&, httplib::Response& res) {
      res.set_chunked_content_provider("text/event-stream", [&](size_t, httplib::DataSink& sink) {
        sink.write("first", 5);
        // The rest only once the client has seen the first.
        srv->WaitReleased(10s);
        sink.write("second", 6);
        sink.done();
        return true;
      });
    });
  });
  srv = &server;
  auto client = NewClient();
  ASSERT_NE(client, nullptr);
  std::vector<std::string> pieces;
  HttpRequest request = MakeRequest("GET", server.url("/stream"));
  auto head = client->Send(request, [&](std::string_view chunk) {
    pieces.emplace_back(chunk);
    if (pieces.size() == 1) server.Release();
    return true;
  });
  ASSERT_TRUE(head.has_value()) << head.error().ToString();
  ASSERT_GE(pieces.size(), 2u);
  EXPECT_EQ(pieces.front(), "first");
  std::string all;
  for (const auto& p : pieces) all += p;
  EXPECT_EQ(all, "firstsecond");
}

TEST(HttpClient, SilenceLongerThanIdleTimeoutIsDeadlineExceeded) {
  LoopbackHttpServer* srv = nullptr;
  LoopbackHttpServer server([&](httplib::Server& s) {
    s.Get("/stall", [&](const httplib::Request&, httplib::Response& res) {
      res.set_chunked_content_provider("text/plain", [&](size_t, httplib::DataSink& sink) {
        sink.write("x", 1);
        srv->WaitReleased(10s);
        sink.done();
        return true;
      });
    });
  });
  srv = &server;
  auto client = NewClient();
  ASSERT_NE(client, nullptr);
  HttpRequest request = MakeRequest("GET", server.url("/stall"));
  request.idle_timeout = 300ms;
  std::string body;
  auto head = client->Send(request, [&](std::string_view chunk) {
    body.append(chunk);
    return true;
  });
  server.Release();
  ASSERT_FALSE(head.has_value());
  EXPECT_EQ(head.error().code(), StatusCode::kDeadlineExceeded) << head.error().ToString();
  EXPECT_EQ(body, "x");
}

TEST(HttpClient, StopRequestCancelsMidBody) {
  LoopbackHttpServer* srv = nullptr;
  LoopbackHttpServer server([&](httplib::Server& s) {
    s.Get("/stall", [&](const httplib::Request&, httplib::Response& res) {
      res.set_chunked_content_provider("text/plain", [&](size_t, httplib::DataSink& sink) {
        sink.write("x", 1);
        srv->WaitReleased(10s);
        sink.done();
        return true;
      });
    });
  });
  srv = &server;
  auto client = NewClient();
  ASSERT_NE(client, nullptr);
  std::stop_source stop;
  std::jthread canceller([&] {
    if (server.WaitSignals(1)) stop.request_stop();
  });
  HttpRequest request = MakeRequest("GET", server.url("/stall"));
  request.idle_timeout = 0ms;
  auto head = client->Send(
      request,
      [&](std::string_view) {
        server.Signal();  // the body has begun; now cancel from another thread
        return true;
      },
      stop.get_token());
  server.Release();
  ASSERT_FALSE(head.has_value());
  EXPECT_EQ(head.error().code(), StatusCode::kCancelled) << head.error().ToString();
}

TEST(HttpClient, SinkReturningFalseIsCancelled) {
  LoopbackHttpServer server([](httplib::Server& s) {
    s.Get("/big", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(std::string(1 << 20, 'y'), "text/plain");
    });
  });
  auto client = NewClient();
  ASSERT_NE(client, nullptr);
  HttpRequest request = MakeRequest("GET", server.url("/big"));
  auto head = client->Send(request, [](std::string_view) { return false; });
  ASSERT_FALSE(head.has_value());
  EXPECT_EQ(head.error().code(), StatusCode::kCancelled);
  // The client is still usable afterwards.
  std::string body;
  auto again = Get(*client, server.url("/big"), body);
  ASSERT_TRUE(again.has_value()) << again.error().ToString();
  EXPECT_EQ(body.size(), size_t{1} << 20);
}

TEST(HttpClient, RefusedConnectionIsUnavailableAndNamesHostNotHeaders) {
  const int port = talaria_test::UnusedLoopbackPort();
  auto client = NewClient();
  ASSERT_NE(client, nullptr);
  HttpRequest request =
      MakeRequest("POST", "http://user:pw@127.0.0.1:" + std::to_string(port) + "/v1?key=q");
  request.headers = {{"Authorization", "Bearer sk-secret-value"}};
  request.body = "{}";
  auto head = client->Send(request, [](std::string_view) { return true; });
  ASSERT_FALSE(head.has_value());
  EXPECT_EQ(head.error().code(), StatusCode::kUnavailable);
  const std::string& message = head.error().message();
  EXPECT_NE(message.find("127.0.0.1:" + std::to_string(port)), std::string::npos) << message;
  EXPECT_EQ(message.find("sk-secret-value"), std::string::npos) << message;
  EXPECT_EQ(message.find("pw"), std::string::npos) << message;
  EXPECT_EQ(message.find("key=q"), std::string::npos) << message;
}

TEST(HttpClient, ConnectionDroppedMidBodyIsUnavailable) {
  RawReplyServer server([](int) {
    return std::string(
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: 1000\r\n\r\n"
        "data: partial");
  });
  auto client = NewClient();
  ASSERT_NE(client, nullptr);
  std::string body;
  auto head = Get(*client, server.url("/"), body);
  ASSERT_FALSE(head.has_value());
  EXPECT_EQ(head.error().code(), StatusCode::kUnavailable) << head.error().ToString();
  EXPECT_EQ(body, "data: partial");
}

TEST(HttpClient, ChunkedBodyCutOffIsUnavailable) {
  RawReplyServer server([](int) {
    return std::string(
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n10\r\nabc");
  });
  auto client = NewClient();
  ASSERT_NE(client, nullptr);
  std::string body;
  auto head = Get(*client, server.url("/"), body);
  ASSERT_FALSE(head.has_value());
  EXPECT_EQ(head.error().code(), StatusCode::kUnavailable) << head.error().ToString();
}

TEST(HttpClient, MalformedUrlIsInvalidArgument) {
  auto client = NewClient();
  ASSERT_NE(client, nullptr);
  std::string body;
  auto head = Get(*client, "no scheme here", body);
  ASSERT_FALSE(head.has_value());
  EXPECT_EQ(head.error().code(), StatusCode::kInvalidArgument);
  auto ftp = Get(*client, "ftp://127.0.0.1/x", body);
  ASSERT_FALSE(ftp.has_value());
  EXPECT_EQ(ftp.error().code(), StatusCode::kInvalidArgument) << ftp.error().ToString();
}

TEST(HttpClient, HeaderWithLineBreakIsRefused) {
  auto client = NewClient();
  ASSERT_NE(client, nullptr);
  HttpRequest request = MakeRequest("GET", "http://127.0.0.1:1/");
  request.headers = {{"X-A", "b\r\nX-Injected: 1"}};
  auto head = client->Send(request, [](std::string_view) { return true; });
  ASSERT_FALSE(head.has_value());
  EXPECT_EQ(head.error().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace talaria::net
