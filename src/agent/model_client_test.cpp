// ModelClient end to end against real HTTP servers on 127.0.0.1: what it sends, what it
// assembles, and how it retries, falls back, times out and cancels.
#include <nlohmann/json.hpp>  // before model_client.h: ChatRequest holds a Json by value

#include "talaria/agent/model_client.h"

#include <gtest/gtest.h>

#include <deque>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/loopback_http.h"

namespace talaria::agent {
namespace {

using namespace std::chrono_literals;
using talaria_test::LoopbackHttpServer;
using talaria_test::RawReplyServer;

struct Reply {
  int status = 200;
  std::string content_type = "text/event-stream";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
  bool stall = false;  // send the first half, then hold until released
};

Reply Stream(std::string body, bool stall = false) {
  Reply reply;
  reply.body = std::move(body);
  reply.stall = stall;
  return reply;
}

Reply Whole(int status, std::string content_type, std::string body,
            std::vector<std::pair<std::string, std::string>> headers = {}) {
  Reply reply;
  reply.status = status;
  reply.content_type = std::move(content_type);
  reply.body = std::move(body);
  reply.headers = std::move(headers);
  return reply;
}

std::string Sse(const std::vector<Json>& chunks, bool done = true) {
  std::string body;
  for (const Json& chunk : chunks) body += "data: " + chunk.dump() + "\n\n";
  if (done) body += "data: [DONE]\n\n";
  return body;
}

Json Delta(const Json& delta, const Json& finish = nullptr) {
  return {{"model", "served-model"},
          {"choices", Json::array({{{"index", 0}, {"delta", delta}, {"finish_reason", finish}}})}};
}

// A Chat Completions endpoint that answers with the scripted replies in order and records
// every request it received.
class FakeEndpoint {
 public:
  FakeEndpoint()
      : server_([this](httplib::Server& s) {
          s.Post("/v1/chat/completions",
                 [this](const httplib::Request& req, httplib::Response& res) { Handle(req, res); });
        }) {}

  void Add(Reply reply) {
    std::lock_guard lock(mu_);
    replies_.push_back(std::move(reply));
  }
  std::string base_url() const { return server_.url("/v1"); }
  std::vector<Json> requests() {
    std::lock_guard lock(mu_);
    return requests_;
  }
  std::vector<std::string> authorizations() {
    std::lock_guard lock(mu_);
    return authorizations_;
  }
  std::vector<std::string> custom_headers() {
    std::lock_guard lock(mu_);
    return custom_;
  }
  LoopbackHttpServer& server() { return server_; }

 private:
  void Handle(const httplib::Request& req, httplib::Response& res) {
    Reply reply;
    {
      std::lock_guard lock(mu_);
      requests_.push_back(Json::parse(req.body, nullptr, false));
      authorizations_.push_back(req.get_header_value("Authorization"));
      custom_.push_back(req.get_header_value("X-Custom"));
      if (replies_.empty()) {
        reply.status = 500;
        reply.content_type = "application/json";
        reply.body = R"({"error":{"message":"no scripted reply left"}})";
      } else {
        reply = replies_.front();
        replies_.pop_front();
      }
    }
    res.status = reply.status;
    for (const auto& [name, value] : reply.headers) res.set_header(name, value);
    if (reply.content_type != "text/event-stream") {
      res.set_content(reply.body, reply.content_type);
      return;
    }
    auto body = std::make_shared<std::string>(reply.body);
    const bool stall = reply.stall;
    res.set_chunked_content_provider(
        reply.content_type, [this, body, stall](size_t, httplib::DataSink& sink) {
          const size_t half = stall ? body->size() / 2 : body->size();
          // Small pieces: the client must reassemble events across them.
          for (size_t pos = 0; pos < half; pos += 7) {
            sink.write(body->data() + pos, std::min<size_t>(7, half - pos));
          }
          if (stall) {
            server_.WaitReleased(10s);
            sink.write(body->data() + half, body->size() - half);
          }
          sink.done();
          return true;
        });
  }

  std::mutex mu_;
  std::deque<Reply> replies_;                // Guarded by mu_.
  std::vector<Json> requests_;               // Guarded by mu_.
  std::vector<std::string> authorizations_;  // Guarded by mu_.
  std::vector<std::string> custom_;          // Guarded by mu_.
  LoopbackHttpServer server_;                // last: stopped before the rest goes
};

struct Recorder : StreamObserver {
  std::string text, reasoning, calls;
  std::vector<std::pair<int, std::chrono::milliseconds>> retries;
  std::vector<std::string> retry_reasons;
  std::function<void()> on_text;
  void OnText(std::string_view delta) override {
    text += delta;
    if (on_text) on_text();
  }
  void OnReasoning(std::string_view delta) override { reasoning += delta; }
  void OnToolCallStarted(size_t index, std::string_view name) override {
    calls += std::to_string(index) + ":" + std::string(name) + ";";
  }
  void OnRetry(int attempt, std::chrono::milliseconds delay, std::string_view reason) override {
    retries.emplace_back(attempt, delay);
    retry_reasons.emplace_back(reason);
  }
};

ModelSettings FastSettings(const std::string& base_url) {
  ModelSettings settings;
  settings.base_url = base_url;
  settings.model = "test-model";
  settings.backoff_base = 1ms;
  settings.backoff_cap = 4ms;
  settings.retry_after_cap = 20ms;
  settings.idle_timeout = 5s;
  return settings;
}

std::unique_ptr<ModelClient> OpenClient(ModelSettings settings) {
  auto client = ModelClient::Open(std::move(settings));
  EXPECT_TRUE(client.has_value()) << client.error().ToString();
  return client ? std::move(*client) : nullptr;
}

ChatRequest SimpleRequest() {
  ChatRequest request;
  Message system;
  system.role = Role::kSystem;
  system.content = "be brief";
  Message user;
  user.content = "list files";
  request.messages = {system, user};
  request.tools =
      Json::array({{{"type", "function"},
                    {"function", {{"name", "terminal"}, {"parameters", {{"type", "object"}}}}}}});
  return request;
}

const std::string kToolStream = Sse({
    Delta({{"role", "assistant"}, {"reasoning_content", "think"}}),
    Delta({{"content", "Let me look."}}),
    Delta({{"tool_calls",
            {{{"index", 0},
              {"id", "call_a"},
              {"type", "function"},
              {"function", {{"name", "terminal"}, {"arguments", "{\"comm"}}}}}}}),
    Delta({{"tool_calls", {{{"index", 0}, {"function", {{"arguments", "and\":\"ls\"}"}}}}}}}),
    Delta(Json::object(), "tool_calls"),
    {{"choices", Json::array()},
     {"usage",
      {{"prompt_tokens", 50},
       {"completion_tokens", 9},
       {"prompt_tokens_details", {{"cached_tokens", 20}}}}}},
});

TEST(ModelClient, StreamsTextAndCallsAndSendsAValidRequest) {
  FakeEndpoint endpoint;
  endpoint.Add(Stream(kToolStream));
  ModelSettings settings = FastSettings(endpoint.base_url());
  settings.api_key = "sk-test-key";
  settings.headers = {{"X-Custom", "yes"}};
  settings.max_output_tokens = 512;
  settings.temperature = 0.5;
  auto client = OpenClient(settings);
  ASSERT_NE(client, nullptr);
  Recorder recorder;
  auto response = client->Complete(SimpleRequest(), &recorder, {});
  ASSERT_TRUE(response.has_value()) << response.error().ToString();
  EXPECT_EQ(response->message.role, Role::kAssistant);
  EXPECT_EQ(response->message.content, "Let me look.");
  EXPECT_EQ(response->message.reasoning, "think");
  ASSERT_EQ(response->message.tool_calls.size(), 1u);
  EXPECT_EQ(response->message.tool_calls[0].id, "call_a");
  EXPECT_EQ(response->message.tool_calls[0].name, "terminal");
  EXPECT_EQ(response->message.tool_calls[0].arguments, "{\"command\":\"ls\"}");
  EXPECT_FALSE(response->message.tool_calls[0].truncated);
  EXPECT_EQ(response->finish_reason, "tool_calls");
  EXPECT_EQ(response->usage.input_tokens, 50);
  EXPECT_EQ(response->usage.cached_tokens, 20);
  EXPECT_EQ(response->model, "served-model");
  EXPECT_EQ(recorder.text, "Let me look.");
  EXPECT_EQ(recorder.reasoning, "think");
  EXPECT_EQ(recorder.calls, "0:terminal;");
  EXPECT_TRUE(recorder.retries.empty());

  const auto requests = endpoint.requests();
  ASSERT_EQ(requests.size(), 1u);
  const Json& sent = requests[0];
  EXPECT_EQ(sent["model"], "test-model");
  EXPECT_EQ(sent["stream"], true);
  EXPECT_EQ(sent["stream_options"]["include_usage"], true);
  EXPECT_EQ(sent["tool_choice"], "auto");
  EXPECT_EQ(sent["parallel_tool_calls"], true);
  EXPECT_EQ(sent["tools"][0]["function"]["name"], "terminal");
  EXPECT_EQ(sent["max_tokens"], 512);
  EXPECT_EQ(sent["temperature"], 0.5);
  ASSERT_EQ(sent["messages"].size(), 2u);
  EXPECT_EQ(sent["messages"][0]["role"], "system");
  EXPECT_EQ(sent["messages"][1]["content"], "list files");
  EXPECT_EQ(endpoint.authorizations()[0], "Bearer sk-test-key");
  EXPECT_EQ(endpoint.custom_headers()[0], "yes");
}

TEST(ModelClient, SendsNoAuthorizationWithoutAKeyAndNoToolsWhenThereAreNone) {
  FakeEndpoint endpoint;
  endpoint.Add(Stream(Sse({Delta({{"content", "hi"}}, "stop")})));
  auto client = OpenClient(FastSettings(endpoint.base_url()));
  ASSERT_NE(client, nullptr);
  ChatRequest request = SimpleRequest();
  request.tools = Json::array();
  auto response = client->Complete(request, nullptr, {});
  ASSERT_TRUE(response.has_value()) << response.error().ToString();
  EXPECT_EQ(response->message.content, "hi");
  EXPECT_EQ(endpoint.authorizations()[0], "");
  const Json sent = endpoint.requests()[0];
  EXPECT_FALSE(sent.contains("tools"));
  EXPECT_FALSE(sent.contains("tool_choice"));
  EXPECT_FALSE(sent.contains("parallel_tool_calls"));
}

TEST(ModelClient, KeepsOneConnectionAcrossRequests) {
  FakeEndpoint endpoint;
  for (int i = 0; i < 3; ++i) endpoint.Add(Stream(Sse({Delta({{"content", "hi"}}, "stop")})));
  auto client = OpenClient(FastSettings(endpoint.base_url()));
  ASSERT_NE(client, nullptr);
  for (int i = 0; i < 3; ++i) {
    auto response = client->Complete(SimpleRequest(), nullptr, {});
    ASSERT_TRUE(response.has_value()) << response.error().ToString();
  }
  EXPECT_EQ(endpoint.server().requests(), 3);
  EXPECT_EQ(endpoint.server().connections(), 1);
}

TEST(ModelClient, ReadsANonStreamingResponse) {
  FakeEndpoint endpoint;
  endpoint.Add(Whole(200, "application/json",
                     R"({"model":"m","choices":[{"index":0,"finish_reason":"tool_calls",
                  "message":{"role":"assistant","content":null,"tool_calls":[
                  {"id":"","type":"function","function":{"name":"read_file","arguments":"{}"}},
                  {"type":"function","function":{"name":"terminal","arguments":"{}"}}]}}],
                  "usage":{"prompt_tokens":3,"completion_tokens":2}})"));
  ModelSettings settings = FastSettings(endpoint.base_url());
  settings.stream = false;
  auto client = OpenClient(settings);
  ASSERT_NE(client, nullptr);
  auto response = client->Complete(SimpleRequest(), nullptr, {});
  ASSERT_TRUE(response.has_value()) << response.error().ToString();
  ASSERT_EQ(response->message.tool_calls.size(), 2u);
  // Calls without ids get distinct ones: the loop pairs results with calls by id.
  EXPECT_FALSE(response->message.tool_calls[0].id.empty());
  EXPECT_NE(response->message.tool_calls[0].id, response->message.tool_calls[1].id);
  EXPECT_EQ(response->usage.output_tokens, 2);
  EXPECT_FALSE(endpoint.requests()[0].contains("stream"));
}

TEST(ModelClient, HonoursRetryAfterUpToItsCapThenSucceeds) {
  FakeEndpoint endpoint;
  endpoint.Add(Whole(429, "application/json", R"({"error":{"message":"slow down"}})",
                     {{"Retry-After", "0.01"}}));
  endpoint.Add(Whole(503, "application/json", "{}", {{"Retry-After", "120"}}));
  endpoint.Add(Stream(Sse({Delta({{"content", "ok"}}, "stop")})));
  auto client = OpenClient(FastSettings(endpoint.base_url()));
  ASSERT_NE(client, nullptr);
  Recorder recorder;
  auto response = client->Complete(SimpleRequest(), &recorder, {});
  ASSERT_TRUE(response.has_value()) << response.error().ToString();
  EXPECT_EQ(response->message.content, "ok");
  ASSERT_EQ(recorder.retries.size(), 2u);
  EXPECT_EQ(recorder.retries[0], std::make_pair(1, std::chrono::milliseconds(10)));
  EXPECT_EQ(recorder.retries[1], std::make_pair(2, std::chrono::milliseconds(20)));  // capped
  EXPECT_NE(recorder.retry_reasons[0].find("slow down"), std::string::npos);
  EXPECT_EQ(endpoint.requests().size(), 3u);
}

TEST(ModelClient, ServerErrorsSpendTheRetriesThenTheFallbackAnswers) {
  FakeEndpoint endpoint;
  for (int i = 0; i < 4; ++i) {
    endpoint.Add(Whole(500, "application/json", "{}"));
  }
  endpoint.Add(Stream(Sse({Delta({{"content", "from fallback"}}, "stop")})));
  ModelSettings settings = FastSettings(endpoint.base_url());
  ModelSettings fallback = settings;
  fallback.model = "fallback-model";
  settings.fallback = {fallback};
  auto client = OpenClient(settings);
  ASSERT_NE(client, nullptr);
  Recorder recorder;
  auto response = client->Complete(SimpleRequest(), &recorder, {});
  ASSERT_TRUE(response.has_value()) << response.error().ToString();
  EXPECT_EQ(response->message.content, "from fallback");
  const auto requests = endpoint.requests();
  ASSERT_EQ(requests.size(), 5u);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(requests[i]["model"], "test-model");
  EXPECT_EQ(requests[4]["model"], "fallback-model");
  ASSERT_EQ(recorder.retries.size(), 4u);  // 3 backoffs, then the switch
  for (int i = 0; i < 3; ++i) {
    EXPECT_GE(recorder.retries[i].second, 1ms);
    EXPECT_LE(recorder.retries[i].second, 6ms);  // cap 4 ms + 50 % jitter
  }
  EXPECT_NE(recorder.retry_reasons[3].find("fallback-model"), std::string::npos);
}

TEST(ModelClient, ServerErrorsWithoutFallbackEndInOneUnavailableLine) {
  FakeEndpoint endpoint;
  for (int i = 0; i < 4; ++i) {
    endpoint.Add(Whole(502, "text/html", "<html>bad gateway</html>"));
  }
  auto client = OpenClient(FastSettings(endpoint.base_url()));
  ASSERT_NE(client, nullptr);
  auto response = client->Complete(SimpleRequest(), nullptr, {});
  ASSERT_FALSE(response.has_value());
  EXPECT_EQ(response.error().code(), StatusCode::kUnavailable);
  EXPECT_NE(response.error().message().find("502"), std::string::npos);
  EXPECT_EQ(endpoint.requests().size(), 4u);
}

TEST(ModelClient, UnauthorizedIsNotRetried) {
  FakeEndpoint endpoint;
  endpoint.Add(
      Whole(401, "application/json", R"({"error":{"message":"Incorrect API key provided"}})"));
  ModelSettings settings = FastSettings(endpoint.base_url());
  settings.api_key = "sk-wrong-key-value";
  auto client = OpenClient(settings);
  ASSERT_NE(client, nullptr);
  Recorder recorder;
  auto response = client->Complete(SimpleRequest(), &recorder, {});
  ASSERT_FALSE(response.has_value());
  EXPECT_EQ(response.error().code(), StatusCode::kPermissionDenied);
  EXPECT_NE(response.error().message().find("Incorrect API key"), std::string::npos);
  EXPECT_EQ(response.error().message().find("sk-wrong-key-value"), std::string::npos);
  EXPECT_EQ(endpoint.requests().size(), 1u);
  EXPECT_TRUE(recorder.retries.empty());
}

TEST(ModelClient, BadRequestCarriesTheProvidersTextAndIsNotRetried) {
  FakeEndpoint endpoint;
  endpoint.Add(
      Whole(400, "application/json", R"({"error":{"message":"context length exceeded"}})"));
  auto client = OpenClient(FastSettings(endpoint.base_url()));
  ASSERT_NE(client, nullptr);
  auto response = client->Complete(SimpleRequest(), nullptr, {});
  ASSERT_FALSE(response.has_value());
  EXPECT_EQ(response.error().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(response.error().message().find("context length exceeded"), std::string::npos);
  EXPECT_EQ(endpoint.requests().size(), 1u);
}

TEST(ModelClient, DroppedConnectionMidStreamIsRetried) {
  const std::string full = Sse({Delta({{"content", "whole answer"}}, "stop")});
  RawReplyServer server([&](int n) {
    if (n == 0) {
      return "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: 5000\r\n\r\n" +
             Sse({Delta({{"content", "partial"}})}, false);
    }
    return "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n"
           "Content-Length: " +
           std::to_string(full.size()) + "\r\n\r\n" + full;
  });
  auto client = OpenClient(FastSettings(server.url("/v1")));
  ASSERT_NE(client, nullptr);
  Recorder recorder;
  auto response = client->Complete(SimpleRequest(), &recorder, {});
  ASSERT_TRUE(response.has_value()) << response.error().ToString();
  EXPECT_EQ(response->message.content, "whole answer");
  ASSERT_EQ(recorder.retries.size(), 1u);
  EXPECT_EQ(server.connections(), 2);
}

TEST(ModelClient, StalledStreamEndsWithTheIdleTimeout) {
  FakeEndpoint endpoint;
  endpoint.Add(Stream(Sse({Delta({{"content", "a long answer that stops"}}, "stop")}), true));
  ModelSettings settings = FastSettings(endpoint.base_url());
  settings.idle_timeout = 200ms;
  settings.max_retries = 0;
  auto client = OpenClient(settings);
  ASSERT_NE(client, nullptr);
  auto response = client->Complete(SimpleRequest(), nullptr, {});
  endpoint.server().Release();
  ASSERT_FALSE(response.has_value());
  EXPECT_EQ(response.error().code(), StatusCode::kDeadlineExceeded) << response.error().ToString();
}

TEST(ModelClient, StopRequestCancelsTheStream) {
  FakeEndpoint endpoint;
  endpoint.Add(
      Stream(Sse({Delta({{"content", "first part"}}), Delta({{"content", "never"}})}), true));
  auto client = OpenClient(FastSettings(endpoint.base_url()));
  ASSERT_NE(client, nullptr);
  std::stop_source stop;
  Recorder recorder;
  recorder.on_text = [&] { endpoint.server().Signal(); };
  std::jthread canceller([&] {
    if (endpoint.server().WaitSignals(1)) stop.request_stop();
  });
  auto response = client->Complete(SimpleRequest(), &recorder, stop.get_token());
  endpoint.server().Release();
  ASSERT_FALSE(response.has_value());
  EXPECT_EQ(response.error().code(), StatusCode::kCancelled) << response.error().ToString();
  EXPECT_EQ(recorder.text.find("never"), std::string::npos);
  EXPECT_TRUE(recorder.retries.empty());
}

TEST(ModelClient, StopDuringBackoffCancelsTheWait) {
  FakeEndpoint endpoint;
  endpoint.Add(Whole(500, "application/json", "{}"));
  ModelSettings settings = FastSettings(endpoint.base_url());
  settings.backoff_base = 60s;  // only a stop ends this wait
  settings.backoff_cap = 60s;
  auto client = OpenClient(settings);
  ASSERT_NE(client, nullptr);
  std::stop_source stop;
  struct StopOnRetry : Recorder {
    std::stop_source* stop = nullptr;
    void OnRetry(int attempt, std::chrono::milliseconds delay, std::string_view reason) override {
      Recorder::OnRetry(attempt, delay, reason);
      stop->request_stop();
    }
  } recorder;
  recorder.stop = &stop;
  auto response = client->Complete(SimpleRequest(), &recorder, stop.get_token());
  ASSERT_FALSE(response.has_value());
  EXPECT_EQ(response.error().code(), StatusCode::kCancelled);
  EXPECT_EQ(endpoint.requests().size(), 1u);
}

TEST(ModelClient, UnreachableEndpointIsOneLineNamingIt) {
  const std::string base_url =
      "http://127.0.0.1:" + std::to_string(talaria_test::UnusedLoopbackPort()) + "/v1";
  auto client = OpenClient(FastSettings(base_url));
  ASSERT_NE(client, nullptr);
  Recorder recorder;
  auto response = client->Complete(SimpleRequest(), &recorder, {});
  ASSERT_FALSE(response.has_value());
  EXPECT_EQ(response.error().code(), StatusCode::kUnavailable);
  const std::string& message = response.error().message();
  EXPECT_NE(message.find("cannot reach the model endpoint " + base_url), std::string::npos)
      << message;
  EXPECT_EQ(message.find('\n'), std::string::npos);
  EXPECT_TRUE(recorder.retries.empty());  // no row of silent retries
}

TEST(ModelClient, ErrorObjectMidStreamFailsTheAttempt) {
  FakeEndpoint endpoint;
  endpoint.Add(Stream("data: " + Delta({{"content", "par"}}).dump() +
                      "\n\nevent: error\ndata: {\"error\":{\"message\":\"tool_use_failed\","
                      "\"status_code\":400}}\n\n"));
  auto client = OpenClient(FastSettings(endpoint.base_url()));
  ASSERT_NE(client, nullptr);
  auto response = client->Complete(SimpleRequest(), nullptr, {});
  ASSERT_FALSE(response.has_value());
  EXPECT_EQ(response.error().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(response.error().message().find("tool_use_failed"), std::string::npos);
  EXPECT_EQ(endpoint.requests().size(), 1u);

  // An error without a client-error code (overloaded) is retried.
  FakeEndpoint flaky;
  flaky.Add(
      Stream(Sse({Delta({{"content", "x"}}), {{"error", {{"message", "overloaded"}}}}}, false)));
  flaky.Add(Stream(Sse({Delta({{"content", "fine"}}, "stop")})));
  auto again = OpenClient(FastSettings(flaky.base_url()));
  ASSERT_NE(again, nullptr);
  auto recovered = again->Complete(SimpleRequest(), nullptr, {});
  ASSERT_TRUE(recovered.has_value()) << recovered.error().ToString();
  EXPECT_EQ(recovered->message.content, "fine");
}

TEST(ModelClient, LengthInsideACallMarksItTruncated) {
  FakeEndpoint endpoint;
  endpoint.Add(Stream(Sse(
      {Delta({{"tool_calls",
               {{{"index", 0},
                 {"id", "c1"},
                 {"function",
                  {{"name", "write_file"}, {"arguments", "{\"path\":\"a\",\"content\":\"abc"}}}}}}},
             "length")})));
  auto client = OpenClient(FastSettings(endpoint.base_url()));
  ASSERT_NE(client, nullptr);
  auto response = client->Complete(SimpleRequest(), nullptr, {});
  ASSERT_TRUE(response.has_value()) << response.error().ToString();
  ASSERT_EQ(response->message.tool_calls.size(), 1u);
  EXPECT_TRUE(response->message.tool_calls[0].truncated);
  EXPECT_EQ(response->finish_reason, "length");
}

TEST(ModelClient, HermesTextFormatDescribesToolsAndParsesCallsFromContent) {
  FakeEndpoint endpoint;
  endpoint.Add(Stream(Sse({Delta({{"content", "Checking.<tool_"}}),
                           Delta({{"content", "call>{\"name\": \"terminal\", \"arguments\": "}}),
                           Delta({{"content", "{\"command\": \"ls\"}}</tool_call>"}}, "stop")})));
  ModelSettings settings = FastSettings(endpoint.base_url());
  settings.tool_call_format = ToolCallFormat::kHermesText;
  auto client = OpenClient(settings);
  ASSERT_NE(client, nullptr);
  ChatRequest request = SimpleRequest();
  Message assistant;
  assistant.role = Role::kAssistant;
  ToolCall earlier;
  earlier.id = "c0";
  earlier.name = "terminal";
  earlier.arguments = "{\"command\":\"pwd\"}";
  assistant.tool_calls = {earlier};
  Message result;
  result.role = Role::kTool;
  result.tool_call_id = "c0";
  result.name = "terminal";
  result.content = "/tmp";
  request.messages.push_back(assistant);
  request.messages.push_back(result);
  Recorder recorder;
  auto response = client->Complete(request, &recorder, {});
  ASSERT_TRUE(response.has_value()) << response.error().ToString();
  EXPECT_EQ(response->message.content, "Checking.");
  ASSERT_EQ(response->message.tool_calls.size(), 1u);
  EXPECT_EQ(response->message.tool_calls[0].name, "terminal");
  EXPECT_EQ(response->message.tool_calls[0].arguments, "{\"command\":\"ls\"}");
  EXPECT_FALSE(response->message.tool_calls[0].id.empty());
  EXPECT_EQ(response->finish_reason, "tool_calls");
  EXPECT_EQ(recorder.text, "Checking.");  // the block is not shown as text
  EXPECT_EQ(recorder.calls, "0:terminal;");

  const Json sent = endpoint.requests()[0];
  EXPECT_FALSE(sent.contains("tools"));
  const std::string system = sent["messages"][0]["content"];
  EXPECT_NE(system.find("<tools>"), std::string::npos);
  EXPECT_NE(system.find("\"terminal\""), std::string::npos);
  const Json& history_call = sent["messages"][2];
  EXPECT_FALSE(history_call.contains("tool_calls"));
  EXPECT_NE(history_call["content"].get<std::string>().find("<tool_call>"), std::string::npos);
  EXPECT_NE(sent["messages"][3]["content"].get<std::string>().find("<tool_response>"),
            std::string::npos);
}

TEST(ModelClient, GarbageBodyIsRetriedThenReported) {
  FakeEndpoint endpoint;
  for (int i = 0; i < 2; ++i) endpoint.Add(Stream("data: <html>not json</html>\n\n"));
  ModelSettings settings = FastSettings(endpoint.base_url());
  settings.max_retries = 1;
  auto client = OpenClient(settings);
  ASSERT_NE(client, nullptr);
  auto response = client->Complete(SimpleRequest(), nullptr, {});
  ASSERT_FALSE(response.has_value());
  EXPECT_EQ(response.error().code(), StatusCode::kUnavailable);
  EXPECT_NE(response.error().message().find("not JSON"), std::string::npos);
  EXPECT_EQ(endpoint.requests().size(), 2u);
}

}  // namespace
}  // namespace talaria::agent
