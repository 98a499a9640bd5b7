// The scripted OpenAI-compatible server, driven by a plain HTTP client (cpp-httplib): streamed
// and whole answers, every chunking mode reassembling to the same turn, each fault, expectations,
// strict validation, the exhausted script, and the talaria-fake-llm program.
#include "support/fake_llm_server.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <thread>

#include "support/fake_llm_render.h"
#include "support/temp_dir.h"

extern char** environ;

namespace talaria::test_support {
namespace {

using namespace std::chrono_literals;

// A reference assembler with the rules a client must follow (calls keyed by index; a new id at a
// used index opens a new call; id-only deltas keyed by id; the name assigned, arguments appended).
struct Assembled {
  std::string content;
  std::string reasoning;
  std::string finish_reason;
  std::vector<FakeToolCall> calls;
  FakeJson usage;
  bool usage_with_empty_choices = false;
  bool done = false;
  int errors = 0;
  int events = 0;
  std::vector<FakeJson> call_deltas;  // every tool_calls entry, as sent
};

Assembled AssembleSse(const std::string& body) {
  Assembled out;
  std::map<int64_t, size_t> slot_of_index;
  std::istringstream lines(body);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("data: ", 0) != 0) continue;
    ++out.events;
    const std::string data = line.substr(6);
    if (data == "[DONE]") {
      out.done = true;
      continue;
    }
    const FakeJson chunk = FakeJson::parse(data, nullptr, false);
    if (chunk.is_discarded()) continue;
    if (chunk.contains("error")) ++out.errors;
    if (chunk.contains("usage") && !chunk["usage"].is_null()) {
      out.usage = chunk["usage"];
      if (chunk.contains("choices") && chunk["choices"].empty())
        out.usage_with_empty_choices = true;
    }
    if (!chunk.contains("choices") || chunk["choices"].empty()) continue;
    const FakeJson& choice = chunk["choices"][0];
    if (choice.contains("finish_reason") && choice["finish_reason"].is_string())
      out.finish_reason = choice["finish_reason"].get<std::string>();
    const FakeJson& delta = choice["delta"];
    if (delta.contains("content") && delta["content"].is_string())
      out.content += delta["content"].get<std::string>();
    for (const char* field : {"reasoning_content", "reasoning"}) {
      if (delta.contains(field) && delta[field].is_string())
        out.reasoning += delta[field].get<std::string>();
    }
    if (!delta.contains("tool_calls")) continue;
    for (const auto& tc : delta["tool_calls"]) {
      out.call_deltas.push_back(tc);
      const std::string id = tc.contains("id") ? tc["id"].get<std::string>() : "";
      size_t slot = 0;
      if (tc.contains("index")) {
        const int64_t index = tc["index"].get<int64_t>();
        auto it = slot_of_index.find(index);
        if (it == slot_of_index.end() ||
            (!id.empty() && !out.calls[it->second].id.empty() && out.calls[it->second].id != id)) {
          out.calls.emplace_back();
          slot_of_index[index] = out.calls.size() - 1;
        }
        slot = slot_of_index[index];
      } else if (!id.empty()) {
        auto it = std::find_if(out.calls.begin(), out.calls.end(),
                               [&](const FakeToolCall& c) { return c.id == id; });
        if (it == out.calls.end()) {
          out.calls.emplace_back();
          it = out.calls.end() - 1;
        }
        slot = static_cast<size_t>(it - out.calls.begin());
      } else {
        if (out.calls.empty()) out.calls.emplace_back();
        slot = out.calls.size() - 1;
      }
      FakeToolCall& call = out.calls[slot];
      if (!id.empty()) call.id = id;
      if (tc.contains("function")) {
        const FakeJson& fn = tc["function"];
        if (fn.contains("name") && fn["name"].is_string()) call.name = fn["name"];
        if (fn.contains("arguments") && fn["arguments"].is_string())
          call.arguments += fn["arguments"].get<std::string>();
      }
    }
  }
  return out;
}

std::unique_ptr<FakeLlmServer> StartServer(const std::string& script) {
  std::string error;
  auto server = FakeLlmServer::FromScript(script, &error);
  EXPECT_NE(server, nullptr) << error;
  if (server == nullptr) return nullptr;
  EXPECT_TRUE(server->Start(&error)) << error;
  return server;
}

std::string ChatBody(bool stream, bool include_usage = false) {
  FakeJson body = {{"model", "test-model"},
                   {"messages", {{{"role", "user"}, {"content", "hi"}}}},
                   {"stream", stream}};
  if (stream && include_usage) body["stream_options"] = {{"include_usage", true}};
  return body.dump();
}

httplib::Result Post(const FakeLlmServer& server, const std::string& body,
                     const std::string& path = "/v1/chat/completions") {
  httplib::Client client("127.0.0.1", server.port());
  client.set_read_timeout(10, 0);
  client.set_connection_timeout(5, 0);
  return client.Post(path, body, "application/json");
}

constexpr const char* kToolTurn = R"({
  "text": "Let me look — ünïcode.",
  "reasoning": "The user wants files read.",
  "tool_calls": [
    {"id": "call_a", "name": "read_file", "arguments": {"path": "src/main.cpp", "offset": 1}},
    {"id": "call_b", "name": "search_files", "arguments": "{\"pattern\": \"TODO\", \"path\": \".\"}"}
  ],
  "usage": {"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150}
})";

void ExpectToolTurn(const Assembled& got) {
  EXPECT_EQ(got.content, "Let me look — ünïcode.");
  EXPECT_EQ(got.reasoning, "The user wants files read.");
  ASSERT_EQ(got.calls.size(), 2u);
  EXPECT_EQ(got.calls[0].id, "call_a");
  EXPECT_EQ(got.calls[0].name, "read_file");
  EXPECT_EQ(got.calls[0].arguments, R"({"path":"src/main.cpp","offset":1})");
  EXPECT_EQ(got.calls[1].id, "call_b");
  EXPECT_EQ(got.calls[1].name, "search_files");
  EXPECT_EQ(got.calls[1].arguments, R"({"pattern": "TODO", "path": "."})");
  EXPECT_EQ(got.finish_reason, "tool_calls");
}

TEST(FakeLlmServer, StreamsTextReasoningToolCallsAndUsage) {
  auto server = StartServer(std::string(R"({"turns": [)") + kToolTurn + "]}");
  ASSERT_NE(server, nullptr);
  auto res = Post(*server, ChatBody(true, true));
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_NE(res->get_header_value("Content-Type").find("text/event-stream"), std::string::npos);
  const Assembled got = AssembleSse(res->body);
  ExpectToolTurn(got);
  EXPECT_TRUE(got.done);
  EXPECT_TRUE(got.usage_with_empty_choices);
  EXPECT_EQ(got.usage["total_tokens"], 150);
  EXPECT_EQ(server->ProblemsText(), "");
  ASSERT_EQ(server->requests().size(), 1u);
  EXPECT_EQ(server->requests()[0].turn, 0);
  EXPECT_TRUE(server->requests()[0].stream);
  EXPECT_EQ(server->turns_remaining(), 0u);
}

TEST(FakeLlmServer, AnswersANonStreamingRequestWithOneCompletion) {
  auto server = StartServer(std::string(R"({"turns": [)") + kToolTurn + "]}");
  ASSERT_NE(server, nullptr);
  auto res = Post(*server, ChatBody(false), "/chat/completions");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  const FakeJson body = FakeJson::parse(res->body);
  EXPECT_EQ(body["object"], "chat.completion");
  EXPECT_EQ(body["model"], "test-model");
  const FakeJson& message = body["choices"][0]["message"];
  EXPECT_EQ(message["role"], "assistant");
  EXPECT_EQ(message["content"], "Let me look — ünïcode.");
  EXPECT_EQ(message["reasoning_content"], "The user wants files read.");
  ASSERT_EQ(message["tool_calls"].size(), 2u);
  EXPECT_EQ(message["tool_calls"][1]["function"]["name"], "search_files");
  EXPECT_EQ(body["choices"][0]["finish_reason"], "tool_calls");
  EXPECT_EQ(body["usage"]["prompt_tokens"], 120);
}

TEST(FakeLlmServer, EveryChunkingModeReassemblesToTheSameTurn) {
  const std::vector<std::string> shapes = {
      R"({})",
      R"({"chunking": "fixed", "size": 1})",
      R"({"chunking": "fixed", "size": 5, "args_piece": 1, "text_piece": 1})",
      R"({"chunking": "random", "size": 9, "seed": 7, "args_piece": 3})",
      R"({"args_piece": 4, "interleave": true})",
      R"({"args_piece": 2, "repeat_name": true})",
      R"({"call_style": "ollama"})",
      R"({"call_style": "ollama", "args_piece": 5})",
      R"({"call_style": "id_only", "args_piece": 3, "interleave": true})",
      R"({"call_style": "index_only", "args_piece": 3})",
      R"({"calls_in_one_delta": true})",
      R"({"usage": "final", "omit_done": true, "role_chunk": false})",
  };
  for (const auto& shape : shapes) {
    FakeJson turn = FakeJson::parse(kToolTurn);
    turn["stream"] = FakeJson::parse(shape);
    auto server = StartServer(FakeJson{{"turns", {turn}}}.dump());
    ASSERT_NE(server, nullptr);
    auto res = Post(*server, ChatBody(true, true));
    ASSERT_TRUE(res) << shape;
    Assembled got = AssembleSse(res->body);
    if (shape.find("index_only") != std::string::npos) {
      // No ids on the wire: the client makes its own; everything else must match.
      ASSERT_EQ(got.calls.size(), 2u) << shape;
      EXPECT_EQ(got.calls[0].id, "") << shape;
      got.calls[0].id = "call_a";
      got.calls[1].id = "call_b";
    }
    SCOPED_TRACE(shape);
    ExpectToolTurn(got);
    EXPECT_EQ(got.done, shape.find("omit_done") == std::string::npos);
    EXPECT_EQ(got.usage["total_tokens"], 150);
  }
}

TEST(FakeLlmServer, CallStylesPutIndicesAndIdsWhereProvidersDo) {
  auto shaped = [](const std::string& shape) {
    FakeJson turn = FakeJson::parse(kToolTurn);
    turn["stream"] = FakeJson::parse(shape);
    FakeRenderContext ctx;
    ctx.model = "m";
    std::string body;
    for (const auto& e :
         RenderStreamEvents(ParseFakeLlmScriptJson({{"turns", {turn}}}, nullptr)->turns[0], ctx))
      body += e;
    return AssembleSse(body);
  };
  // Ollama: every call at index 0, told apart by its id.
  for (const auto& d : shaped(R"({"call_style": "ollama"})").call_deltas) EXPECT_EQ(d["index"], 0);
  // id-only: no index anywhere, the id on every delta.
  for (const auto& d : shaped(R"({"call_style": "id_only", "args_piece": 3})").call_deltas) {
    EXPECT_FALSE(d.contains("index"));
    EXPECT_TRUE(d.contains("id"));
  }
  // index-only: no id anywhere.
  for (const auto& d : shaped(R"({"call_style": "index_only", "args_piece": 3})").call_deltas)
    EXPECT_FALSE(d.contains("id"));
  // Interleaved: the indices alternate instead of running 0,0,...,1,1.
  std::vector<int64_t> order;
  for (const auto& d : shaped(R"({"args_piece": 4, "interleave": true})").call_deltas)
    order.push_back(d["index"].get<int64_t>());
  ASSERT_GE(order.size(), 4u);
  EXPECT_EQ(order[0], 0);
  EXPECT_EQ(order[1], 1);
  EXPECT_EQ(order[2], 0);
  EXPECT_FALSE(std::is_sorted(order.begin(), order.end()));
  // Fragmented: arguments arrive in several deltas per call.
  EXPECT_GT(shaped(R"({"args_piece": 2})").call_deltas.size(), 10u);
  // The name repeated on each fragment (assigned, so the assembled name is still right).
  size_t named = 0;
  for (const auto& d : shaped(R"({"args_piece": 2, "repeat_name": true})").call_deltas)
    named += d["function"].contains("name") ? 1 : 0;
  EXPECT_GT(named, 10u);
}

TEST(FakeLlmServer, ByteChunkingCutsAnywhereAndIsReproducible) {
  std::string error;
  auto script = ParseFakeLlmScript(std::string(R"({"turns": [)") + kToolTurn + "]}", &error);
  ASSERT_TRUE(script) << error;
  FakeRenderContext ctx;
  const auto events = RenderStreamEvents(script->turns[0], ctx);
  std::string whole;
  for (const auto& e : events) whole += e;
  auto plan_with = [&](FakeStreamShape::Chunking chunking, size_t size, uint32_t seed) {
    FakeTurn turn = script->turns[0];
    turn.shape.chunking = chunking;
    turn.shape.size = size;
    turn.shape.seed = seed;
    std::vector<std::string> writes;
    for (const auto& step : PlanSend(events, turn)) {
      EXPECT_EQ(step.kind, FakeSendStep::Kind::kWrite);
      writes.push_back(step.bytes);
    }
    return writes;
  };
  auto joined = [](const std::vector<std::string>& writes) {
    std::string out;
    for (const auto& w : writes) out += w;
    return out;
  };
  EXPECT_EQ(plan_with(FakeStreamShape::Chunking::kEvents, 0, 0).size(), events.size());
  const auto fixed = plan_with(FakeStreamShape::Chunking::kFixed, 3, 0);
  EXPECT_EQ(joined(fixed), whole);
  for (size_t i = 0; i + 1 < fixed.size(); ++i) EXPECT_EQ(fixed[i].size(), 3u);
  const auto random_a = plan_with(FakeStreamShape::Chunking::kRandom, 11, 42);
  const auto random_b = plan_with(FakeStreamShape::Chunking::kRandom, 11, 42);
  const auto random_c = plan_with(FakeStreamShape::Chunking::kRandom, 11, 43);
  EXPECT_EQ(joined(random_a), whole);
  EXPECT_EQ(joined(random_c), whole);
  EXPECT_EQ(random_a, random_b);
  EXPECT_NE(random_a, random_c);
  for (const auto& w : random_a) EXPECT_LE(w.size(), 11u);
}

TEST(FakeLlmServer, ReasoningSpellingsAndRawBodies) {
  const std::string raw =
      "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"recorded\"}}]}\n\n"
      ": a comment line\n\n"
      "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n";
  FakeJson script = {
      {"turns",
       {{{"reasoning", "r1"}, {"reasoning_field", "reasoning"}},
        {{"reasoning", "r2"}, {"reasoning_field", "reasoning.text"}},
        {{"raw_body", raw}, {"stream", {{"chunking", "fixed"}, {"size", 3}}}},
        {{"raw_body", raw}, {"fault", {{"kind", "error_event"}, {"after_events", 1}}}}}}};
  auto server = StartServer(script.dump());
  ASSERT_NE(server, nullptr);
  auto plain = Post(*server, ChatBody(true));
  ASSERT_TRUE(plain);
  EXPECT_NE(plain->body.find(R"("delta":{"reasoning":"r1"})"), std::string::npos) << plain->body;
  auto object = Post(*server, ChatBody(false));
  ASSERT_TRUE(object);
  EXPECT_EQ(FakeJson::parse(object->body)["choices"][0]["message"]["reasoning"]["text"], "r2");
  auto replay = Post(*server, ChatBody(true));
  ASSERT_TRUE(replay);
  EXPECT_EQ(replay->body, raw);  // byte for byte, whatever the chunking
  auto cut = Post(*server, ChatBody(true));
  ASSERT_TRUE(cut);
  const Assembled got = AssembleSse(cut->body);
  EXPECT_EQ(got.content, "recorded");
  EXPECT_EQ(got.errors, 1);
  EXPECT_EQ(got.finish_reason, "");
}

TEST(FakeLlmServer, HttpFaultsThenTheNextTurn) {
  auto server = StartServer(R"({"turns": [
    {"fault": {"kind": "429", "retry_after": 2}},
    {"fault": {"kind": "500", "message": "Failed to parse tool call arguments"}},
    {"fault": {"kind": "401"}},
    {"fault": {"kind": "http", "status": 503, "body": "upstream down", "retry_after": 0.5}},
    {"text": "recovered"}
  ]})");
  ASSERT_NE(server, nullptr);
  auto r429 = Post(*server, ChatBody(true));
  ASSERT_TRUE(r429);
  EXPECT_EQ(r429->status, 429);
  EXPECT_EQ(r429->get_header_value("Retry-After"), "2");
  EXPECT_EQ(FakeJson::parse(r429->body)["error"]["code"], "rate_limit_exceeded");
  auto r500 = Post(*server, ChatBody(true));
  ASSERT_TRUE(r500);
  EXPECT_EQ(r500->status, 500);
  EXPECT_EQ(FakeJson::parse(r500->body)["error"]["message"], "Failed to parse tool call arguments");
  auto r401 = Post(*server, ChatBody(false));
  ASSERT_TRUE(r401);
  EXPECT_EQ(r401->status, 401);
  auto r503 = Post(*server, ChatBody(false));
  ASSERT_TRUE(r503);
  EXPECT_EQ(r503->status, 503);
  EXPECT_EQ(r503->body, "upstream down");
  EXPECT_EQ(r503->get_header_value("Retry-After"), "0.5");
  auto ok = Post(*server, ChatBody(true));
  ASSERT_TRUE(ok);
  EXPECT_EQ(AssembleSse(ok->body).content, "recovered");
  const auto requests = server->requests();
  ASSERT_EQ(requests.size(), 5u);
  EXPECT_EQ(requests[0].status, 429);
  EXPECT_EQ(requests[4].turn, 4);
  EXPECT_EQ(server->ProblemsText(), "");
}

TEST(FakeLlmServer, DroppedConnectionEndsTheResponseMidBody) {
  auto server = StartServer(R"({"turns": [
    {"text": "a long answer that will never finish", "stream": {"text_piece": 4},
     "fault": {"kind": "drop", "after_events": 3}},
    {"text": "whole answer", "fault": {"kind": "drop", "after_bytes": 20}},
    {"text": "after"}
  ]})");
  ASSERT_NE(server, nullptr);
  // A streamed response cut after 3 events: the client sees a failed read, never [DONE].
  std::string received;
  httplib::Client client("127.0.0.1", server->port());
  client.set_read_timeout(10, 0);
  httplib::Request req;
  req.method = "POST";
  req.path = "/v1/chat/completions";
  req.body = ChatBody(true);
  req.set_header("Content-Type", "application/json");
  req.content_receiver = [&](const char* data, size_t len, uint64_t, uint64_t) {
    received.append(data, len);
    return true;
  };
  auto streamed = client.send(req);
  EXPECT_FALSE(streamed) << "a dropped stream must not look complete";
  const Assembled partial = AssembleSse(received);
  EXPECT_FALSE(partial.done);
  EXPECT_EQ(partial.events, 3);
  EXPECT_EQ(partial.content, "a long a");  // the role chunk, "a lo", "ng a"
  // A whole body promised by Content-Length, 20 bytes sent, then the connection closed.
  auto whole = Post(*server, ChatBody(false));
  EXPECT_FALSE(whole && whole->status == 200 && FakeJson::accept(whole->body));
  auto after = Post(*server, ChatBody(true));
  ASSERT_TRUE(after);
  EXPECT_EQ(AssembleSse(after->body).content, "after");
}

TEST(FakeLlmServer, StallPausesTheStreamThenFinishes) {
  auto server = StartServer(R"({"turns": [
    {"text": "slow answer", "fault": {"kind": "stall", "ms": 50, "after_events": 1}},
    {"text": "never sent in time", "fault": {"kind": "stall", "ms": 60000}}
  ]})");
  ASSERT_NE(server, nullptr);
  auto res = Post(*server, ChatBody(true));
  ASSERT_TRUE(res);
  const Assembled got = AssembleSse(res->body);
  EXPECT_EQ(got.content, "slow answer");
  EXPECT_TRUE(got.done);
  // A client with an idle timeout gives up on a long stall; Stop ends the stall at once.
  httplib::Client client("127.0.0.1", server->port());
  client.set_read_timeout(0, 200'000);
  auto stalled = client.Post("/v1/chat/completions", ChatBody(true), "application/json");
  EXPECT_FALSE(stalled && AssembleSse(stalled->body).done);
  EXPECT_TRUE(server->WaitForRequests(2, 10s));
  server->Stop();  // returns instead of waiting out the 60 s stall (ctest's timeout guards it)
}

TEST(FakeLlmServer, HoldAnswersOnlyOnceEnoughRequestsArrived) {
  // Two held turns: each answer waits for the other request, so they finish only together.
  auto server = StartServer(R"({"turns": [
    {"match": {"any_content_contains": "one"}, "text": "first", "hold": {"until_requests": 2}},
    {"match": {"any_content_contains": "two"}, "text": "second", "hold": {"until_requests": 2}},
    {"text": "alone", "hold": {"until_requests": 9, "timeout_ms": 50}}
  ]})");
  ASSERT_NE(server, nullptr);
  auto body = [](const char* word) {
    return FakeJson{{"model", "m"}, {"messages", {{{"role", "user"}, {"content", word}}}}}.dump();
  };
  std::optional<httplib::Result> second;
  std::thread other([&] { second.emplace(Post(*server, body("two"))); });
  auto first = Post(*server, body("one"));
  other.join();
  ASSERT_TRUE(first && second && *second);
  EXPECT_NE(first->body.find("first"), std::string::npos);
  EXPECT_NE((*second)->body.find("second"), std::string::npos);
  EXPECT_EQ(server->ProblemsText(), "");
  // Never reached: answered after the timeout, with a problem saying so.
  auto alone = Post(*server, body("three"));
  ASSERT_TRUE(alone);
  EXPECT_NE(alone->body.find("alone"), std::string::npos);
  EXPECT_NE(server->ProblemsText().find("hold_timeout"), std::string::npos);
  std::string error;
  EXPECT_FALSE(ParseFakeLlmScript(R"([{"hold": {"until_requests": 0}}])", &error));
  EXPECT_NE(error.find("until_requests"), std::string::npos) << error;
}

TEST(FakeLlmServer, ErrorEventMidStreamEndsTheStream) {
  auto server = StartServer(R"({"turns": [
    {"text": "partial text here", "stream": {"text_piece": 5},
     "fault": {"kind": "error_event", "after_events": 2, "message": "model overloaded"}}
  ]})");
  ASSERT_NE(server, nullptr);
  auto res = Post(*server, ChatBody(true));
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  const Assembled got = AssembleSse(res->body);
  EXPECT_EQ(got.errors, 1);
  EXPECT_FALSE(got.done);
  EXPECT_EQ(got.content, "parti");
  EXPECT_NE(res->body.find("model overloaded"), std::string::npos);
}

TEST(FakeLlmServer, TruncatedToolCallEndsWithLengthMidArguments) {
  auto server = StartServer(R"({"turns": [
    {"tool_calls": [{"id": "c1", "name": "write_file", "arguments": {"path": "a", "content": "xyz"}},
                    {"id": "c2", "name": "terminal", "arguments": {"command": "ls"}}],
     "stream": {"args_piece": 3},
     "fault": {"kind": "truncate_tool_call", "call": 0, "at": 12}},
    {"tool_calls": [{"id": "c3", "name": "terminal", "arguments": {"command": "make test"}}],
     "fault": {"kind": "truncate_tool_call"}}
  ]})");
  ASSERT_NE(server, nullptr);
  auto res = Post(*server, ChatBody(true));
  ASSERT_TRUE(res);
  const Assembled got = AssembleSse(res->body);
  EXPECT_EQ(got.finish_reason, "length");
  ASSERT_EQ(got.calls.size(), 1u);
  EXPECT_EQ(got.calls[0].arguments, R"({"path":"a",)");
  auto whole = Post(*server, ChatBody(false));
  ASSERT_TRUE(whole);
  const FakeJson body = FakeJson::parse(whole->body);
  EXPECT_EQ(body["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(body["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"],
            R"({"command":)");
}

TEST(FakeLlmServer, ExpectationsBecomeProblemsAndMatchChoosesTheTurn) {
  auto server = StartServer(R"({"turns": [
    {"label": "after c2", "match": {"last_tool_call_id": "c2"}, "text": "got c2"},
    {"label": "first", "expect": {"last_role": "user", "tools_include": ["read_file"]},
     "text": "plain"}
  ]})");
  ASSERT_NE(server, nullptr);
  // The first request is no tool result for c2: the second turn answers it, and its
  // expectation (tools offered) fails.
  auto first = Post(*server, ChatBody(true));
  ASSERT_TRUE(first);
  EXPECT_EQ(AssembleSse(first->body).content, "plain");
  const auto problems = server->problems();
  ASSERT_EQ(problems.size(), 1u) << server->ProblemsText();
  EXPECT_EQ(problems[0].kind, "expectation");
  EXPECT_NE(problems[0].message.find("read_file"), std::string::npos);
  EXPECT_NE(problems[0].message.find("first"), std::string::npos);
  const FakeJson tool_result = {{"model", "m"},
                                {"stream", false},
                                {"messages",
                                 {{{"role", "user"}, {"content", "hi"}},
                                  {{"role", "assistant"},
                                   {"content", nullptr},
                                   {"tool_calls",
                                    {{{"id", "c2"},
                                      {"type", "function"},
                                      {"function", {{"name", "x"}, {"arguments", "{}"}}}}}}},
                                  {{"role", "tool"}, {"tool_call_id", "c2"}, {"content", "ok"}}}}};
  auto second = Post(*server, tool_result.dump());
  ASSERT_TRUE(second);
  EXPECT_EQ(FakeJson::parse(second->body)["choices"][0]["message"]["content"], "got c2");
  EXPECT_EQ(server->requests()[1].label, "after c2");
}

TEST(FakeLlmServer, StrictModeRejectsInvalidRequestsWithoutUsingATurn) {
  auto server = StartServer(R"({"strict": true, "turns": [{"text": "only for valid requests"}]})");
  ASSERT_NE(server, nullptr);
  const FakeJson invalid = {
      {"model", "m"},
      {"messages",
       {{{"role", "user"}, {"content", "hi"}},
        {{"role", "tool"}, {"tool_call_id", "nope"}, {"content", "orphan"}}}}};
  auto rejected = Post(*server, invalid.dump());
  ASSERT_TRUE(rejected);
  EXPECT_EQ(rejected->status, 400);
  EXPECT_NE(rejected->body.find("tool_without_call"), std::string::npos);
  auto bad_json = Post(*server, "{not json");
  ASSERT_TRUE(bad_json);
  EXPECT_EQ(bad_json->status, 400);
  EXPECT_EQ(server->turns_remaining(), 1u);
  auto ok = Post(*server, ChatBody(false));
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200);
  EXPECT_EQ(server->turns_remaining(), 0u);
  const auto problems = server->problems();
  ASSERT_EQ(problems.size(), 2u) << server->ProblemsText();
  EXPECT_EQ(problems[0].request, 0u);
  EXPECT_EQ(problems[1].kind, "invalid_json");
}

TEST(FakeLlmServer, ExhaustedScriptAnswersDoneOrAnError) {
  auto lenient = StartServer(R"({"turns": []})");
  ASSERT_NE(lenient, nullptr);
  auto done = Post(*lenient, ChatBody(true));
  ASSERT_TRUE(done);
  EXPECT_EQ(AssembleSse(done->body).content, "done");
  EXPECT_EQ(lenient->exhausted_answers(), 1u);
  auto custom = StartServer(R"({"on_exhausted": {"text": "no more"}, "turns": []})");
  ASSERT_NE(custom, nullptr);
  auto more = Post(*custom, ChatBody(false));
  ASSERT_TRUE(more);
  EXPECT_EQ(FakeJson::parse(more->body)["choices"][0]["message"]["content"], "no more");
  auto strict = StartServer(R"({"on_exhausted": "error", "turns": [{"text": "one"}]})");
  ASSERT_NE(strict, nullptr);
  ASSERT_TRUE(Post(*strict, ChatBody(true)));
  auto over = Post(*strict, ChatBody(true));
  ASSERT_TRUE(over);
  EXPECT_EQ(over->status, 500);
  EXPECT_EQ(FakeJson::parse(over->body)["error"]["code"], "script_exhausted");
}

TEST(FakeLlmServer, RecordsHeadersAndServesModelsAndState) {
  auto server = StartServer(R"({"model": "fake-1", "turns": [{"text": "x"}]})");
  ASSERT_NE(server, nullptr);
  httplib::Client client("127.0.0.1", server->port());
  client.set_read_timeout(10, 0);
  auto res = client.Post("/v1/chat/completions", {{"Authorization", "Bearer sk-test"}},
                         ChatBody(false), "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(server->requests()[0].Header("authorization"), "Bearer sk-test");
  EXPECT_EQ(server->requests()[0].Json()["messages"][0]["content"], "hi");
  auto models = client.Get("/v1/models");
  ASSERT_TRUE(models);
  EXPECT_EQ(FakeJson::parse(models->body)["data"][0]["id"], "fake-1");
  auto state = client.Get("/_fake/requests");
  ASSERT_TRUE(state);
  EXPECT_EQ(FakeJson::parse(state->body).size(), 1u);
}

TEST(FakeLlmScript, RejectsBadScriptsNamingThePlace) {
  std::string error;
  EXPECT_FALSE(ParseFakeLlmScript(R"({"turns": [{"txt": "typo"}]})", &error));
  EXPECT_NE(error.find("turn 0"), std::string::npos) << error;
  EXPECT_NE(error.find("txt"), std::string::npos) << error;
  EXPECT_FALSE(ParseFakeLlmScript(R"({"turns": [{"fault": {"kind": "meteor"}}]})", &error));
  EXPECT_NE(error.find("meteor"), std::string::npos) << error;
  EXPECT_FALSE(ParseFakeLlmScript(R"([{"stream": {"chunking": "fixed", "size": 0}}])", &error));
  EXPECT_NE(error.find("size"), std::string::npos) << error;
  EXPECT_FALSE(ParseFakeLlmScript("not json\n", &error));
  // repeat: copies with distinct default call ids.
  auto repeated = ParseFakeLlmScript(
      R"({"turns": [{"text": "a"}, {"repeat": 3, "tool_calls": [{"name": "t"}, {"name": "u"}]}]})",
      &error);
  ASSERT_TRUE(repeated) << error;
  ASSERT_EQ(repeated->turns.size(), 4u);
  EXPECT_EQ(repeated->turns[1].tool_calls[0].id, "call_1_1");
  EXPECT_EQ(repeated->turns[3].tool_calls[1].id, "call_3_2");
  // JSON lines: one turn per line.
  auto lines = ParseFakeLlmScript("{\"text\": \"a\"}\n\n{\"text\": \"b\"}\n", &error);
  ASSERT_TRUE(lines) << error;
  ASSERT_EQ(lines->turns.size(), 2u);
  EXPECT_EQ(lines->turns[1].text, "b");
}

// Reaps `pid` within 10 s; past that, kills it (by its pid) and says false.
bool WaitForExit(pid_t pid, int* status) {
  for (int i = 0; i < 10000; ++i) {
    if (waitpid(pid, status, WNOHANG) == pid) return true;
    std::this_thread::sleep_for(1ms);
  }
  kill(pid, SIGKILL);
  waitpid(pid, status, 0);
  return false;
}

// Kills and reaps a child the test did not see exit (a failed ASSERT returns early).
struct ChildGuard {
  pid_t pid = 0;
  ~ChildGuard() {
    if (pid <= 0) return;
    int status = 0;
    kill(pid, SIGKILL);
    WaitForExit(pid, &status);
  }
};

// The program: writes its port file, serves, logs each request as a JSON line, exits 0 on
// SIGTERM.
TEST(FakeLlmProgram, WritesPortFileServesLogsAndExitsOnSigterm) {
  const TempDir temp;
  const std::filesystem::path dir = temp.path();
  { std::ofstream(dir / "script.json") << R"({"turns": [{"text": "from the program"}]})"; }
  const std::string script = (dir / "script.json").string();
  const std::string port_file = (dir / "port").string();
  const std::string log = (dir / "log.jsonl").string();
  std::vector<std::string> args = {
      TALARIA_FAKE_LLM_PATH, "--script", script, "--port-file", port_file, "--log", log};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  ASSERT_EQ(posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ), 0);
  ChildGuard guard{pid};
  int port = 0;
  for (int i = 0; i < 10000 && port == 0; ++i) {  // bounded: 10 s
    std::ifstream in(port_file);
    if (!(in >> port)) std::this_thread::sleep_for(1ms);
  }
  ASSERT_GT(port, 0);
  httplib::Client client("127.0.0.1", port);
  client.set_read_timeout(10, 0);
  auto res = client.Post("/v1/chat/completions", ChatBody(true), "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(AssembleSse(res->body).content, "from the program");
  auto problems = client.Get("/_fake/problems");
  ASSERT_TRUE(problems);
  EXPECT_EQ(problems->body, "[]");

  ASSERT_EQ(kill(pid, SIGTERM), 0);
  int status = -1;
  ASSERT_TRUE(WaitForExit(pid, &status));
  guard.pid = 0;
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  std::ifstream in(log);
  std::string line;
  ASSERT_TRUE(std::getline(in, line));
  const FakeJson entry = FakeJson::parse(line);
  EXPECT_EQ(entry["request"], 0);
  EXPECT_EQ(entry["turn"], 0);
  EXPECT_EQ(entry["body"]["messages"][0]["content"], "hi");
}

TEST(FakeLlmProgram, RefusesABadScript) {
  const TempDir temp;
  const std::filesystem::path dir = temp.path();
  { std::ofstream(dir / "bad.json") << R"({"turns": [{"nope": 1}]})"; }
  std::vector<std::string> args = {TALARIA_FAKE_LLM_PATH, "--script", (dir / "bad.json").string()};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  ASSERT_EQ(posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ), 0);
  int status = -1;
  ASSERT_TRUE(WaitForExit(pid, &status));  // kills it past the deadline
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 2);
}

}  // namespace
}  // namespace talaria::test_support
