// McpServer driven in-process: request strings in, response lines out through the sink. Every
// test uses its own Registry with small test tools; every wait is bounded.
#include "talaria/mcp/server.h"

#include "mcp/server_test_util.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

namespace talaria::mcp {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;

std::string Schema(std::string_view name, std::string_view properties = "{}") {
  return R"({"name": ")" + std::string(name) + R"(", "description": "test tool )" +
         std::string(name) + R"(", "parameters": {"type": "object", "properties": )" +
         std::string(properties) + "}}";
}

class McpServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Add(
        "echo", ParallelClass::kSafe,
        [](const Json& args, ToolContext&) {
          return ToolResult::FromJson({{"echo", args.value("text", "")}});
        },
        /*read_only=*/true, R"({"text": {"type": "string"}})");
    Add("plain", ParallelClass::kSafe,
        [](const Json&, ToolContext&) { return ToolResult::Text("hello"); });
    Add("fail", ParallelClass::kSafe,
        [](const Json&, ToolContext&) { return ToolResult::Error("boom"); });
    Add("slow", ParallelClass::kSafe, [this](const Json&, ToolContext& ctx) {
      slow_started_ = true;
      const auto until = std::chrono::steady_clock::now() + 5s;
      while (!ctx.cancelled() && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(2ms);
      slow_saw_cancel_ = ctx.cancelled();
      return ctx.cancelled() ? ToolResult::Error("cancelled", CallStatus::kCancelled)
                             : ToolResult::Text("done");
    });
    ToolSpec hidden;
    hidden.name = "hidden";
    hidden.toolset = "other";
    const std::string hidden_schema = Schema("hidden");
    hidden.schema = std::string_view(hidden_schema);
    hidden.handler = [](const Json&, ToolContext&) { return ToolResult::Text("no"); };
    ASSERT_TRUE(registry_.Register(std::move(hidden)).ok());
  }

  void Add(const std::string& name, ParallelClass parallel, SyncHandler handler,
           bool read_only = false, std::string_view properties = "{}") {
    ToolSpec spec;
    spec.name = name;
    spec.toolset = "test";
    const std::string schema = Schema(name, properties);
    spec.schema = std::string_view(schema);
    spec.handler = std::move(handler);
    spec.parallel = parallel;
    spec.annotations.read_only = read_only;
    spec.annotations.idempotent = read_only;
    ASSERT_TRUE(registry_.Register(std::move(spec)).ok()) << name;
  }

  McpServer& Server(McpServerOptions options = {}) {
    if (options.toolsets == std::vector<std::string>{"talaria-mcp"}) options.toolsets = {"test"};
    auto created = McpServer::Create(dispatcher_, toolsets_, std::move(options), out_.Sink());
    EXPECT_TRUE(created.has_value()) << created.error().message();
    server_ = std::move(*created);
    return *server_;
  }

  // Sends a request and returns its response.
  Json Request(int id, std::string_view method, const Json& params = Json::object()) {
    Json msg = {{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}};
    server_->HandleMessage(msg.dump());
    return out_.Response(id);
  }
  void Notify(std::string_view method, const Json& params = Json::object()) {
    server_->HandleMessage(
        Json({{"jsonrpc", "2.0"}, {"method", method}, {"params", params}}).dump());
  }
  void Initialize(std::string_view version = "2025-11-25") {
    Json r = Request(1000, "initialize",
                     {{"protocolVersion", version},
                      {"capabilities", Json::object()},
                      {"clientInfo", {{"name", "test"}, {"version", "1"}}}});
    ASSERT_TRUE(r.contains("result")) << r.dump();
    Notify("notifications/initialized");
  }
  // A session under 2025-03-26 sent the batch [tools/call `tool` (id 7), ping (id 8)]; true once
  // the tool has started.
  bool BatchOfCallAndPing(std::string_view tool, const std::atomic<bool>& started) {
    Server();
    Initialize("2025-03-26");
    server_->HandleMessage(R"([{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":")" +
                           std::string(tool) + R"("}},{"jsonrpc":"2.0","id":8,"method":"ping"}])");
    for (int i = 0; i < 5000 && !started; ++i) std::this_thread::sleep_for(1ms);
    return started;
  }

  Registry registry_;
  Toolsets toolsets_{registry_, {}};
  Dispatcher dispatcher_{registry_};
  Outbox out_;
  std::atomic<bool> slow_started_{false};
  std::atomic<bool> slow_saw_cancel_{false};
  std::unique_ptr<McpServer> server_;  // last: destroyed (and joined) before the tools' state
};

TEST_F(McpServerTest, InitializeEchoesASupportedVersionAndFallsBackToTheLatest) {
  Server();
  Json r = Request(1, "initialize",
                   {{"protocolVersion", "2025-06-18"}, {"capabilities", Json::object()}});
  EXPECT_EQ(r["result"]["protocolVersion"], "2025-06-18");
  EXPECT_EQ(r["result"]["capabilities"]["tools"]["listChanged"], true);
  EXPECT_TRUE(r["result"]["capabilities"].contains("logging"));
  EXPECT_EQ(r["result"]["serverInfo"]["name"], "talaria");
  EXPECT_EQ(server_->protocol_version(), "2025-06-18");
  EXPECT_FALSE(server_->initialized());
  Notify("notifications/initialized");
  EXPECT_TRUE(server_->initialized());
  EXPECT_EQ(Request(2, "initialize", {{"protocolVersion", "2025-06-18"}})["error"]["code"],
            kInvalidRequest);

  Server();
  EXPECT_EQ(
      Request(3, "initialize", {{"protocolVersion", "1999-01-01"}})["result"]["protocolVersion"],
      "2025-11-25");
  Server();
  EXPECT_EQ(
      Request(4, "initialize", {{"protocolVersion", "2024-11-05"}})["result"]["protocolVersion"],
      "2024-11-05");
  Server();
  EXPECT_EQ(Request(5, "initialize", Json::object())["error"]["code"], kInvalidParams);
  EXPECT_EQ(Request(6, "initialize", {{"protocolVersion", 20251125}})["error"]["code"],
            kInvalidParams);
}

TEST_F(McpServerTest, OnlyPingIsServedBeforeInitialize) {
  Server();
  EXPECT_EQ(Request(1, "ping")["result"], Json::object());
  Json r = Request(2, "tools/list");
  EXPECT_EQ(r["error"]["code"], kInvalidRequest);
  EXPECT_THAT(r["error"]["message"].get<std::string>(), HasSubstr("not initialized"));
  // Before notifications/initialized, requests after the initialize answer are served.
  Request(3, "initialize", {{"protocolVersion", "2025-11-25"}});
  EXPECT_TRUE(Request(4, "tools/list").contains("result"));
}

TEST_F(McpServerTest, ToolsListIsSortedWithAnnotationsAndPaginates) {
  McpServerOptions options;
  options.page_size = 3;
  Server(options);
  Initialize();
  Json first = Request(1, "tools/list");
  ASSERT_TRUE(first.contains("result")) << first.dump();
  const Json& tools = first["result"]["tools"];
  ASSERT_EQ(tools.size(), 3u);
  EXPECT_EQ(tools[0]["name"], "echo");
  EXPECT_EQ(tools[1]["name"], "fail");
  EXPECT_EQ(tools[2]["name"], "plain");
  EXPECT_EQ(tools[0]["description"], "test tool echo");
  EXPECT_EQ(tools[0]["inputSchema"]["type"], "object");
  EXPECT_EQ(tools[0]["inputSchema"]["properties"]["text"]["type"], "string");
  EXPECT_EQ(tools[0]["annotations"]["readOnlyHint"], true);
  EXPECT_EQ(tools[0]["annotations"]["destructiveHint"], false);
  EXPECT_EQ(tools[0]["annotations"]["idempotentHint"], true);
  EXPECT_EQ(tools[0]["annotations"]["openWorldHint"], false);
  EXPECT_EQ(tools[0]["_meta"]["talaria/parallel"], "safe");
  ASSERT_TRUE(first["result"].contains("nextCursor"));
  Json second = Request(2, "tools/list", {{"cursor", first["result"]["nextCursor"]}});
  ASSERT_EQ(second["result"]["tools"].size(), 1u);
  EXPECT_EQ(second["result"]["tools"][0]["name"], "slow");
  EXPECT_FALSE(second["result"].contains("nextCursor"));
  // Same order every time.
  EXPECT_EQ(Request(3, "tools/list")["result"], first["result"]);
  EXPECT_EQ(Request(4, "tools/list", {{"cursor", "garbage"}})["error"]["code"], kInvalidParams);
  EXPECT_EQ(Request(5, "tools/list", {{"cursor", 3}})["error"]["code"], kInvalidParams);
}

// A selected tool that cannot run (its check fails) is left out of tools/list; a call of it is
// answered with the registry's reason, not as an unknown tool.
TEST_F(McpServerTest, AnUnavailableToolIsNotListedAndACallOfItSaysWhy) {
  ToolSpec spec;
  spec.name = "keyed";
  spec.toolset = "test";
  const std::string schema = Schema("keyed");
  spec.schema = std::string_view(schema);
  spec.handler = [](const Json&, ToolContext&) { return ToolResult::Text("ran"); };
  spec.check_fn = [] { return false; };
  spec.unavailable_reason = [] { return std::string("KEYED_API_KEY is not set"); };
  ASSERT_TRUE(registry_.Register(std::move(spec)).ok());
  Server();
  Initialize();
  Json list = Request(1, "tools/list");
  for (const Json& t : list["result"]["tools"]) EXPECT_NE(t["name"], "keyed");
  Json call = Request(2, "tools/call", {{"name", "keyed"}});
  EXPECT_EQ(call["error"]["code"], kInvalidParams) << call.dump();
  EXPECT_EQ(call["error"]["message"], "Tool keyed is not available here: KEYED_API_KEY is not set");
  // Outside the selection it stays unknown.
  Json hidden = Request(3, "tools/call", {{"name", "hidden"}});
  EXPECT_EQ(hidden["error"]["message"], "Unknown tool: hidden") << hidden.dump();
}

TEST_F(McpServerTest, ToolsCallGivesTextStructuredContentAndIsError) {
  Server();
  Initialize();
  Json echo = Request(1, "tools/call", {{"name", "echo"}, {"arguments", {{"text", "hi"}}}});
  ASSERT_TRUE(echo.contains("result")) << echo.dump();
  EXPECT_EQ(echo["result"]["content"][0]["type"], "text");
  EXPECT_EQ(Json::parse(echo["result"]["content"][0]["text"].get<std::string>())["echo"], "hi");
  EXPECT_EQ(echo["result"]["structuredContent"]["echo"], "hi");
  EXPECT_FALSE(echo["result"].contains("isError"));

  Json plain = Request(2, "tools/call", {{"name", "plain"}});
  EXPECT_EQ(plain["result"]["content"][0]["text"], "hello");
  EXPECT_FALSE(plain["result"].contains("structuredContent"));

  Json fail = Request(3, "tools/call", {{"name", "fail"}, {"arguments", Json::object()}});
  EXPECT_EQ(fail["result"]["isError"], true);
  EXPECT_THAT(fail["result"]["content"][0]["text"].get<std::string>(), HasSubstr("boom"));

  // Argument validation failures are results the model can correct, not protocol errors.
  Json bad_type =
      Request(4, "tools/call", {{"name", "echo"}, {"arguments", {{"text", Json::array({1})}}}});
  EXPECT_EQ(bad_type["result"]["isError"], true) << bad_type.dump();

  EXPECT_EQ(Request(5, "tools/call", {{"name", "nope"}})["error"]["code"], kInvalidParams);
  EXPECT_EQ(Request(6, "tools/call", {{"name", "hidden"}})["error"]["code"],
            kInvalidParams);  // not exposed
  EXPECT_EQ(Request(7, "tools/call", {{"name", "echo"}, {"arguments", "x"}})["error"]["code"],
            kInvalidParams);
  EXPECT_EQ(Request(8, "tools/call", Json::object())["error"]["code"], kInvalidParams);
  EXPECT_EQ(Request(9, "tools/call", Json::array({1}))["error"]["code"], kInvalidParams);
}

TEST_F(McpServerTest, UnknownMethodsAndMalformedLinesGetErrorsAndServingGoesOn) {
  Server();
  Initialize();
  EXPECT_EQ(Request(1, "resources/list")["error"]["code"], kMethodNotFound);
  Notify("notifications/whatever");  // unknown notification: no answer
  server_->HandleMessage("{not json");
  Json parse_error =
      out_.WaitFor([](const Json& j) { return j.contains("error") && j["id"].is_null(); });
  EXPECT_EQ(parse_error["error"]["code"], kParseError);
  server_->HandleMessage(R"({"jsonrpc":"2.0","id":"b","method":7})");
  EXPECT_EQ(out_.Response("b")["error"]["code"], kInvalidRequest);
  server_->HandleMessage(R"({"jsonrpc":"2.0","id":99,"result":{}})");  // stray response: dropped
  server_->RejectMessage(kInvalidRequest, "too big");
  EXPECT_EQ(Request(2, "ping")["result"], Json::object());
  // Nothing answered the notifications or the stray response.
  size_t answers = 0;
  for (const auto& l : out_.Lines()) answers += Json::parse(l).contains("id") ? 1 : 0;
  EXPECT_EQ(answers, 6u);  // initialize, 1, parse error, "b", the rejection, 2
}

TEST_F(McpServerTest, ASlowCallDoesNotBlockPingOrOtherCalls) {
  Server();
  Initialize();
  server_->HandleMessage(
      R"({"jsonrpc":"2.0","id":"s","method":"tools/call","params":{"name":"slow"}})");
  // Answered while the slow call runs: it only ends on its own after 5 s, or when cancelled,
  // and slow_saw_cancel_ below says it was still running when these came back.
  EXPECT_EQ(Request(1, "ping")["result"], Json::object());
  EXPECT_TRUE(Request(2, "tools/call", {{"name", "plain"}}).contains("result"));
  for (int i = 0; i < 1000 && !slow_started_; ++i) std::this_thread::sleep_for(1ms);
  ASSERT_TRUE(slow_started_);
  // The plain call's thread leaves the table just after answering.
  for (int i = 0; i < 1000 && server_->calls_in_flight() > 1; ++i) std::this_thread::sleep_for(1ms);
  EXPECT_EQ(server_->calls_in_flight(), 1u);
  server_->Shutdown();  // cancels the slow call; its (cancelled) answer is still sent
  EXPECT_TRUE(slow_saw_cancel_);
  EXPECT_EQ(out_.Response("s")["result"]["isError"], true);
}

TEST_F(McpServerTest, CancelledNotificationStopsTheCallAndSuppressesItsResponse) {
  Server();
  Initialize();
  server_->HandleMessage(
      R"({"jsonrpc":"2.0","id":41,"method":"tools/call","params":{"name":"slow"}})");
  for (int i = 0; i < 1000 && !slow_started_; ++i) std::this_thread::sleep_for(1ms);
  ASSERT_TRUE(slow_started_);
  Notify("notifications/cancelled", {{"requestId", 99}});  // unknown: ignored
  Notify("notifications/cancelled", {{"requestId", 41}, {"reason", "user"}});
  for (int i = 0; i < 2000 && server_->calls_in_flight() > 0; ++i) std::this_thread::sleep_for(1ms);
  EXPECT_EQ(server_->calls_in_flight(), 0u);
  EXPECT_TRUE(slow_saw_cancel_);
  EXPECT_EQ(Request(1, "ping")["result"], Json::object());
  EXPECT_TRUE(out_.Response(41, 50ms).is_null()) << "a cancelled request must not be answered";
}

TEST_F(McpServerTest, ProgressTokenGetsStartAndFinishNotificationsBeforeTheResponse) {
  Server();
  Initialize();
  Json r = Request(1, "tools/call", {{"name", "plain"}, {"_meta", {{"progressToken", "tok"}}}});
  ASSERT_TRUE(r.contains("result"));
  auto progress = out_.Notifications("notifications/progress");
  ASSERT_EQ(progress.size(), 2u);
  EXPECT_EQ(progress[0]["params"]["progressToken"], "tok");
  EXPECT_EQ(progress[0]["params"]["progress"], 0);
  EXPECT_EQ(progress[1]["params"]["progress"], 1);
  EXPECT_EQ(progress[1]["params"]["total"], 1);
  // The finish notification precedes the response.
  const auto lines = out_.Lines();
  EXPECT_THAT(lines[lines.size() - 2], HasSubstr("notifications/progress"));
  EXPECT_THAT(lines.back(), HasSubstr(R"("id":1)"));
  Request(2, "tools/call", {{"name", "plain"}});  // no token: no progress
  EXPECT_EQ(out_.Notifications("notifications/progress").size(), 2u);
}

TEST_F(McpServerTest, LoggingSetLevelControlsLogNotifications) {
  Server();
  Initialize();
  EXPECT_EQ(Request(1, "logging/setLevel", {{"level", "verbose"}})["error"]["code"],
            kInvalidParams);
  server_->SendLog("info", "test", "quiet by default");
  EXPECT_EQ(Request(2, "logging/setLevel", {{"level", "debug"}})["result"], Json::object());
  Request(3, "tools/call", {{"name", "plain"}});
  Json log =
      out_.WaitFor([](const Json& j) { return j.value("method", "") == "notifications/message"; });
  ASSERT_FALSE(log.is_null());
  EXPECT_EQ(log["params"]["level"], "debug");
  EXPECT_EQ(log["params"]["data"]["tool"], "plain");
  for (const Json& m : out_.Notifications("notifications/message"))
    EXPECT_NE(m["params"]["data"], "quiet by default");
}

TEST_F(McpServerTest, RegistryChangesToExposedToolsSendListChanged) {
  Server();
  Initialize();
  ToolSpec other;
  other.name = "other_tool";
  other.toolset = "other";
  const std::string other_schema = Schema("other_tool");
  other.schema = std::string_view(other_schema);
  other.handler = [](const Json&, ToolContext&) { return ToolResult::Text("x"); };
  ASSERT_TRUE(registry_.Register(std::move(other)).ok());
  EXPECT_TRUE(out_.Notifications("notifications/tools/list_changed").empty())
      << "not an exposed toolset";
  Add("fresh", ParallelClass::kSafe,
      [](const Json&, ToolContext&) { return ToolResult::Text("new"); });
  ASSERT_FALSE(out_.WaitFor([](const Json& j) {
                     return j.value("method", "") == "notifications/tools/list_changed";
                   })
                   .is_null());
  EXPECT_EQ(Request(1, "tools/call", {{"name", "fresh"}})["result"]["content"][0]["text"], "new");
}

TEST_F(McpServerTest, RefusesADuplicateInFlightIdAndCallsAfterShutdown) {
  Server();
  Initialize();
  server_->HandleMessage(
      R"({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow"}})");
  for (int i = 0; i < 1000 && !slow_started_; ++i) std::this_thread::sleep_for(1ms);
  server_->HandleMessage(
      R"({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"plain"}})");
  EXPECT_EQ(out_.Response(7)["error"]["code"], kInvalidRequest);
  server_->Shutdown();
  EXPECT_EQ(Request(8, "tools/call", {{"name", "plain"}})["error"]["code"], kInternalError);
}

// 2025-03-26 is the one version with JSON-RPC batches: one array answers every request of a
// batch (and every element that is no valid message); nothing of it goes out on its own.
TEST_F(McpServerTest, ABatchUnder20250326IsAnsweredAsOneArray) {
  Server();
  Initialize("2025-03-26");
  server_->HandleMessage(
      R"([{"jsonrpc":"2.0","id":1,"method":"ping"},)"
      R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}},)"
      R"({"jsonrpc":"2.0","method":"notifications/whatever"},)"
      R"({"not":"a message"},)"
      R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"plain"}},)"
      R"({"jsonrpc":"2.0","id":3,"method":"ping"},)"
      R"({"jsonrpc":"2.0","id":4,"method":"initialize","params":{"protocolVersion":"2025-03-26"}}])");
  const Json batch = out_.WaitFor([](const Json& j) { return j.is_array(); });
  ASSERT_TRUE(batch.is_array());
  ASSERT_EQ(batch.size(), 6u) << batch.dump();
  std::map<std::string, std::vector<Json>> by_id;
  for (const Json& answer : batch) by_id[answer["id"].dump()].push_back(answer);
  EXPECT_EQ(by_id["1"].at(0)["result"], Json::object());
  EXPECT_EQ(by_id["2"].at(0)["result"]["structuredContent"]["echo"], "hi");
  EXPECT_EQ(by_id["null"].at(0)["error"]["code"], kInvalidRequest);
  ASSERT_EQ(by_id["3"].size(), 2u);  // the call's answer and the refused duplicate id
  const bool call_first = by_id["3"][0].contains("result");
  EXPECT_EQ(by_id["3"][call_first ? 0 : 1]["result"]["content"][0]["text"], "hello");
  EXPECT_THAT(by_id["3"][call_first ? 1 : 0]["error"]["message"].get<std::string>(),
              HasSubstr("already in use"));
  EXPECT_THAT(by_id["4"].at(0)["error"]["message"].get<std::string>(), HasSubstr("initialize"));
  for (const auto& line : out_.Lines()) {
    const Json j = Json::parse(line);
    EXPECT_FALSE(j.is_object() && j.contains("id") && j["id"] != 1000)
        << "answered alone: " << line;
  }

  // Notifications only: nothing comes back. An empty batch is one error.
  server_->HandleMessage(R"([{"jsonrpc":"2.0","method":"notifications/whatever"}])");
  server_->HandleMessage("[]");
  EXPECT_EQ(out_.WaitFor([](const Json& j) {
    return j.is_object() && j.contains("error");
  })["error"]["code"],
            kInvalidRequest);
  EXPECT_EQ(Request(5, "ping")["result"], Json::object());
  size_t arrays = 0;
  for (const auto& line : out_.Lines()) arrays += Json::parse(line).is_array() ? 1 : 0;
  EXPECT_EQ(arrays, 1u);
}

TEST_F(McpServerTest, ABatchLeavesOutACallTheClientCancelled) {
  ASSERT_TRUE(BatchOfCallAndPing("slow", slow_started_));
  Notify("notifications/cancelled", {{"requestId", 7}});
  const Json batch = out_.WaitFor([](const Json& j) { return j.is_array(); });
  ASSERT_EQ(batch.size(), 1u) << batch.dump();
  EXPECT_EQ(batch[0]["id"], 8);
}

// A lone request reusing an id a batch still waits on is refused on its own; the batch keeps
// its own answer for that id.
TEST_F(McpServerTest, ALoneRequestReusingAnIdOfAnOpenBatchIsRefusedOutsideTheArray) {
  std::atomic<bool> started{false};
  std::atomic<bool> release{false};
  Add("held", ParallelClass::kSafe, [&](const Json&, ToolContext& ctx) {
    started = true;
    for (int i = 0; i < 10000 && !release && !ctx.cancelled(); ++i)
      std::this_thread::sleep_for(1ms);
    return ToolResult::Text("held done");
  });
  ASSERT_TRUE(BatchOfCallAndPing("held", started));
  server_->HandleMessage(R"({"jsonrpc":"2.0","id":7,"method":"ping"})");
  const Json alone =
      out_.WaitFor([](const Json& j) { return j.is_object() && j.contains("id") && j["id"] == 7; });
  ASSERT_TRUE(alone.is_object()) << "the lone request was not answered on its own";
  EXPECT_EQ(alone["error"]["code"], kInvalidRequest);
  EXPECT_THAT(alone["error"]["message"].get<std::string>(), HasSubstr("already in use"));
  release = true;
  const Json batch = out_.WaitFor([](const Json& j) { return j.is_array(); });
  ASSERT_EQ(batch.size(), 2u) << batch.dump();
  for (const Json& answer : batch) {
    if (answer["id"] == 7) {
      EXPECT_EQ(answer["result"]["content"][0]["text"], "held done") << batch.dump();
    }
  }
  size_t sevens = 0;
  for (const auto& line : out_.Lines()) {
    const Json j = Json::parse(line);
    sevens += j.is_object() && j.contains("id") && j["id"] == 7 ? 1 : 0;
  }
  EXPECT_EQ(sevens, 1u) << "only the refusal goes out alone";
}

TEST_F(McpServerTest, BatchesAreRefusedAfter20250326) {
  Server();
  Initialize();  // 2025-11-25
  server_->HandleMessage(R"([{"jsonrpc":"2.0","id":5,"method":"ping"}])");
  const Json refusal =
      out_.WaitFor([](const Json& j) { return j.is_object() && j.contains("error"); });
  EXPECT_EQ(refusal["error"]["code"], kInvalidRequest);
  EXPECT_TRUE(refusal["id"].is_null());
  EXPECT_TRUE(out_.Response(5, 50ms).is_null()) << "a refused batch is not served";
  // Hostile text that starts like a batch is refused for what it is.
  server_->HandleMessage(std::string(5000, '[') + std::string(5000, ']'));
  EXPECT_EQ(out_.WaitFor([](const Json& j) {
    return j.is_object() && j.contains("error") && j["error"]["code"] == kParseError;
  })["error"]["code"],
            kParseError);
}

TEST_F(McpServerTest, CreateRefusesAnUnknownToolset) {
  McpServerOptions options;
  options.toolsets = {"no_such_toolset"};
  auto created = McpServer::Create(dispatcher_, toolsets_, options, out_.Sink());
  ASSERT_FALSE(created.has_value());
  EXPECT_EQ(created.error().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace talaria::mcp
