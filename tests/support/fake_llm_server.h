// FakeLlmServer: a scripted OpenAI-compatible Chat Completions server on 127.0.0.1 for tests of
// the model client and the agent loop. Each POST /v1/chat/completions (or /chat/completions)
// gets the next scripted turn, streamed as SSE (or one chat.completion JSON when the request
// does not stream) with the turn's chunking and fault; every request is validated the way a
// strict provider would (roles and their order, every tool call answered exactly once, tool
// schemas) and the problems are recorded, optionally answered with HTTP 400. The script format
// is in tests/support/README.md.
//
//   std::string error;
//   auto server = FakeLlmServer::FromScript(R"({"turns": [{"text": "hi"}]})", &error);
//   ASSERT_TRUE(server && server->Start(&error)) << error;
//   ... point the client at server->base_url() ...
//   EXPECT_EQ(server->ProblemsText(), "");
//
// Also GET /v1/models, and GET /_fake/requests and /_fake/problems (JSON), for tests that run
// the server as a process (talaria-fake-llm).
// Thread-safety: thread-safe; requests are served on the server's own threads.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "support/fake_llm_script.h"
#include "support/fake_llm_validation.h"

namespace talaria::test_support {

struct FakeLlmRequest {
  size_t index = 0;
  std::string path;
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
  int turn = -1;  // the script turn that answered; -1: rejected (strict) or the exhausted answer
  std::string label;  // that turn's label ("exhausted" for the default answer)
  int status = 200;   // the HTTP status answered
  bool stream = false;
  FakeJson Json() const;  // the body parsed (discarded value when it is not JSON)
  std::string Header(std::string_view name) const;  // "" when absent; case-insensitive
};

class FakeLlmServer {
 public:
  // nullptr and *error (naming the turn and key) on a bad script.
  static std::unique_ptr<FakeLlmServer> FromScript(std::string_view json_text, std::string* error);
  static std::unique_ptr<FakeLlmServer> FromScriptFile(const std::string& path, std::string* error);
  explicit FakeLlmServer(FakeLlmScript script);
  ~FakeLlmServer();  // stops
  FakeLlmServer(const FakeLlmServer&) = delete;
  FakeLlmServer& operator=(const FakeLlmServer&) = delete;

  // Binds 127.0.0.1:`port` (0: one the kernel picks) and serves on a thread until Stop.
  // False and *error when the port cannot be bound.
  bool Start(std::string* error = nullptr, int port = 0);
  // Ends stalls at once, closes the listener, joins the threads. Idempotent.
  void Stop();

  int port() const;
  std::string base_url() const;  // "http://127.0.0.1:<port>/v1"

  // Called with one JSON line per request received (set before Start).
  void SetLogSink(std::function<void(const std::string& line)> sink);
  // Turns may be added while serving (appended to the script).
  void AddTurn(FakeTurn turn);

  std::vector<FakeLlmRequest> requests() const;
  std::vector<FakeLlmProblem> problems() const;
  // Problems, one "request N: kind: message" line each; "" when there are none (easy to
  // EXPECT_EQ against "" with a readable failure).
  std::string ProblemsText() const;
  // Waits until `count` requests have arrived (their answers may still be under way), at most
  // `timeout`; true when they have. For tests that act while a response streams or stalls.
  bool WaitForRequests(size_t count, std::chrono::milliseconds timeout) const;
  size_t turns_served() const;       // scripted turns used
  size_t turns_remaining() const;    // scripted turns not used yet
  size_t exhausted_answers() const;  // requests answered after the script ran out

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace talaria::test_support
