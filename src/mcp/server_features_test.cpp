// McpServer beyond tools: resources, prompts and completion (features.h), rich tool content,
// and the requests a running tool sends to the client (elicitation, sampling) with their
// failure modes. Driven in-process like server_test.cpp; every wait is bounded.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/wait_until.h"

#include <atomic>
#include <chrono>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "mcp/server_test_util.h"
#include "talaria/base/base64.h"
#include "talaria/core/client_channel.h"
#include "talaria/mcp/features.h"
#include "talaria/mcp/server.h"
#include "talaria/mcp/tool_requests.h"

namespace talaria::mcp {
namespace {

using ::testing::HasSubstr;

class McpFeaturesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    AddTool("noop", [](const Json&, ToolContext&) {
      return ToolResult::Text("ok");
    });  // makes toolset "test"
    ResourceDef text;
    text.uri = "test://text";
    text.name = "text";
    text.mime_type = "text/plain";
    text.toolset = "test";
    text.read = [](const ResourceRequest& r, ToolContext&) -> Result<Json> {
      return TextContents(r.uri, "text/plain", "hello");
    };
    ASSERT_TRUE(features_->AddResource(std::move(text)).ok());
    ResourceDef item;
    item.uri_template = "test://items/{id}/data";
    item.name = "item";
    item.toolset = "test";
    item.read = [](const ResourceRequest& r, ToolContext&) -> Result<Json> {
      if (r.variables.at("id") == "missing") return Err(NotFoundError("no such item"));
      return TextContents(r.uri, "application/json", "item " + r.variables.at("id"));
    };
    item.complete = [](std::string_view, std::string_view value, const Json&) {
      std::vector<std::string> out;
      for (std::string c : {"123", "124", "200"}) {
        if (c.starts_with(value)) out.push_back(c);
      }
      return out;
    };
    ASSERT_TRUE(features_->AddResource(std::move(item)).ok());
    PromptDef greet;
    greet.name = "greet";
    greet.description = "Greets someone";
    greet.arguments = {{"who", "whom to greet", true}};
    greet.toolset = "test";
    greet.get = [](const Json& args, ToolContext&) -> Result<Json> {
      Json message = {
          {"role", "user"},
          {"content", {{"type", "text"}, {"text", "Hello " + args["who"].get<std::string>()}}}};
      return Json{{"messages", Json::array({message})}};
    };
    greet.complete = [](std::string_view, std::string_view value, const Json&) {
      return std::vector<std::string>{std::string(value) + "1", std::string(value) + "2"};
    };
    ASSERT_TRUE(features_->AddPrompt(std::move(greet)).ok());
    PromptDef other;
    other.name = "elsewhere";
    other.toolset = "other";
    other.get = [](const Json&, ToolContext&) -> Result<Json> {
      return Json{{"messages", Json::array()}};
    };
    ASSERT_TRUE(features_->AddPrompt(std::move(other)).ok());
  }

  void AddTool(const std::string& name, SyncHandler handler) {
    ToolSpec spec;
    spec.name = name;
    spec.toolset = "test";
    schemas_.push_back(
        R"({"name": ")" + name +
        R"(", "description": "d", "parameters": {"type": "object", "properties": {}}})");
    spec.schema = std::string_view(schemas_.back());
    spec.handler = std::move(handler);
    spec.parallel = ParallelClass::kSafe;
    ASSERT_TRUE(registry_.Register(std::move(spec)).ok());
  }

  void Start(bool with_features = true, Json client_capabilities = Json::object(),
             std::vector<std::string> selection = {"test"}, size_t page_size = 100) {
    McpServerOptions options;
    options.toolsets = std::move(selection);
    options.page_size = page_size;
    if (with_features) options.features = features_;
    auto created = McpServer::Create(dispatcher_, toolsets_, std::move(options), out_.Routed());
    ASSERT_TRUE(created.has_value()) << created.error().message();
    server_ = std::move(*created);
    init_ = Request(1000 + starts_++, "initialize",
                    {{"protocolVersion", "2025-11-25"},
                     {"capabilities", client_capabilities},
                     {"clientInfo", {{"name", "test"}, {"version", "1"}}}});
    Notify("notifications/initialized");
  }
  Json Request(int id, std::string_view method, const Json& params = Json::object()) {
    Send(id, method, params);
    return out_.Response(id);
  }
  void Send(int id, std::string_view method, const Json& params) {
    server_->HandleMessage(
        Json({{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}}).dump());
  }
  void Notify(std::string_view method, const Json& params = Json::object()) {
    server_->HandleMessage(
        Json({{"jsonrpc", "2.0"}, {"method", method}, {"params", params}}).dump());
  }
  // The first request the server sent the client with `method`.
  Json ServerRequest(std::string_view method, std::chrono::milliseconds timeout = 3s) {
    return out_.WaitFor(
        [&](const Json& j) { return j.value("method", "") == method && j.contains("id"); },
        timeout);
  }

  std::vector<std::string> schemas_;  // kept alive: ToolSpec borrows them
  Registry registry_;
  Toolsets toolsets_{registry_, {}};
  Dispatcher dispatcher_{registry_};
  std::shared_ptr<ServerFeatures> features_ = std::make_shared<ServerFeatures>();
  Outbox out_;
  Json init_;
  int starts_ = 0;  // each server's initialize gets its own id (the outbox keeps every line)
  std::unique_ptr<McpServer> server_;  // last: destroyed (and joined) before the rest
};

TEST_F(McpFeaturesTest, CapabilitiesNameWhatIsServed) {
  Start();
  const Json& caps = init_["result"]["capabilities"];
  EXPECT_EQ(caps["resources"]["subscribe"], true);
  EXPECT_TRUE(caps.contains("prompts"));
  EXPECT_TRUE(caps.contains("completions"));

  Start(/*with_features=*/false);
  EXPECT_FALSE(init_["result"]["capabilities"].contains("resources"));
  EXPECT_FALSE(init_["result"]["capabilities"].contains("prompts"));
  EXPECT_EQ(Request(1, "resources/list")["error"]["code"], kMethodNotFound);
}

TEST_F(McpFeaturesTest, ABundleServesWhatItsIncludedToolsetsDefine) {
  toolsets_.Define({"bundle", "a bundle", {}, {"test"}});
  Start(/*with_features=*/true, Json::object(), {"bundle"});
  const Json prompts = Request(1, "prompts/list")["result"]["prompts"];
  ASSERT_EQ(prompts.size(), 1u) << prompts.dump();
  EXPECT_EQ(prompts[0]["name"], "greet");
  EXPECT_TRUE(init_["result"]["capabilities"].contains("resources"));
}

TEST_F(McpFeaturesTest, ListsComeInPagesThatCoverEverythingOnce) {
  for (int i = 0; i < 4; ++i) {
    ResourceDef extra;
    extra.uri = "test://extra/" + std::to_string(i);
    extra.name = "extra" + std::to_string(i);
    extra.toolset = i == 2 ? "other" : "test";  // not served: never counted in a page
    extra.read = [](const ResourceRequest& r, ToolContext&) -> Result<Json> {
      return TextContents(r.uri, "text/plain", "");
    };
    ASSERT_TRUE(features_->AddResource(std::move(extra)).ok());
  }
  Start(/*with_features=*/true, Json::object(), {"test"}, /*page_size=*/2);
  std::vector<std::string> uris;
  Json params = Json::object();
  for (int page = 0; page < 10; ++page) {
    const Json r = Request(10 + page, "resources/list", params)["result"];
    ASSERT_LE(r["resources"].size(), 2u) << r.dump();
    for (const Json& item : r["resources"]) uris.push_back(item["uri"]);
    if (!r.contains("nextCursor")) break;
    params = Json{{"cursor", r["nextCursor"]}};
  }
  EXPECT_EQ(uris.size(), 4u);  // "test://text" and three served extras
  EXPECT_EQ(std::set<std::string>(uris.begin(), uris.end()).size(), uris.size());
  EXPECT_EQ(std::find(uris.begin(), uris.end(), "test://extra/2"), uris.end());
  for (const Json& bad : {Json("page:0"), Json("page:x"), Json("after:a"), Json(7)}) {
    EXPECT_EQ(Request(50, "resources/list", {{"cursor", bad}})["error"]["code"], kInvalidParams)
        << bad;
  }
  EXPECT_EQ(Request(60, "prompts/list")["result"]["prompts"].size(), 1u);
  EXPECT_FALSE(Request(61, "prompts/list")["result"].contains("nextCursor"));
}

TEST_F(McpFeaturesTest, ResourcesListReadAndTemplates) {
  Start();
  Json list = Request(1, "resources/list");
  ASSERT_EQ(list["result"]["resources"].size(), 1u) << list.dump();
  EXPECT_EQ(list["result"]["resources"][0]["uri"], "test://text");
  EXPECT_EQ(list["result"]["resources"][0]["mimeType"], "text/plain");
  Json templates = Request(2, "resources/templates/list");
  EXPECT_EQ(templates["result"]["resourceTemplates"][0]["uriTemplate"], "test://items/{id}/data");

  EXPECT_EQ(Request(3, "resources/read", {{"uri", "test://text"}})["result"]["contents"][0]["text"],
            "hello");
  Json item = Request(4, "resources/read", {{"uri", "test://items/123/data"}});
  EXPECT_EQ(item["result"]["contents"][0]["text"], "item 123");
  EXPECT_EQ(item["result"]["contents"][0]["uri"], "test://items/123/data");
}

TEST_F(McpFeaturesTest, UnknownOrHostileResourceRequestsGetErrors) {
  Start();
  Json unknown = Request(1, "resources/read", {{"uri", "test://nope"}});
  EXPECT_EQ(unknown["error"]["code"], kResourceNotFound);
  EXPECT_EQ(unknown["error"]["data"]["uri"], "test://nope");
  // A template match the handler does not know, an empty variable, a path escape.
  EXPECT_EQ(Request(2, "resources/read", {{"uri", "test://items/missing/data"}})["error"]["code"],
            kResourceNotFound);
  EXPECT_EQ(Request(3, "resources/read", {{"uri", "test://items//data"}})["error"]["code"],
            kResourceNotFound);
  EXPECT_EQ(Request(4, "resources/read", {{"uri", "test://items/a/b/data"}})["error"]["code"],
            kResourceNotFound);
  EXPECT_EQ(Request(5, "resources/read", {{"uri", 42}})["error"]["code"], kInvalidParams);
  EXPECT_EQ(Request(6, "resources/read", Json::object())["error"]["code"], kInvalidParams);
  EXPECT_EQ(Request(7, "resources/subscribe", {{"uri", "test://nope"}})["error"]["code"],
            kResourceNotFound);
}

// A resource handler runs off the reader thread: a slow one holds up nothing else, and
// notifications/cancelled reaches it (its answer is then suppressed).
TEST_F(McpFeaturesTest, ASlowResourceReadBlocksNothingAndCanBeCancelled) {
  std::atomic<bool> started{false}, saw_cancel{false};
  ResourceDef slow;
  slow.uri = "test://slow";
  slow.name = "slow";
  slow.toolset = "test";
  slow.read = [&](const ResourceRequest& r, ToolContext& ctx) -> Result<Json> {
    started = true;
    const auto until = std::chrono::steady_clock::now() + 5s;
    while (!ctx.cancelled() && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(2ms);
    saw_cancel = ctx.cancelled();
    return TextContents(r.uri, "text/plain", "late");
  };
  ASSERT_TRUE(features_->AddResource(std::move(slow)).ok());
  Start();
  Send(1, "resources/read", {{"uri", "test://slow"}});
  for (int i = 0; i < 2000 && !started; ++i) std::this_thread::sleep_for(1ms);
  ASSERT_TRUE(started);
  EXPECT_EQ(Request(2, "ping")["result"], Json::object());  // answered while the read runs
  EXPECT_EQ(Request(3, "resources/read", {{"uri", "test://text"}})["result"]["contents"][0]["text"],
            "hello");
  EXPECT_EQ(server_->calls_in_flight(), 1u);
  Notify("notifications/cancelled", {{"requestId", 1}});
  for (int i = 0; i < 2000 && server_->calls_in_flight() > 0; ++i) std::this_thread::sleep_for(1ms);
  EXPECT_EQ(server_->calls_in_flight(), 0u);
  EXPECT_TRUE(saw_cancel);
  EXPECT_TRUE(out_.Response(1, 50ms).is_null()) << "a cancelled read is not answered";
}

TEST_F(McpFeaturesTest, SubscribersAreToldOfUpdatesUntilTheyUnsubscribe) {
  Start();
  EXPECT_EQ(Request(1, "resources/subscribe", {{"uri", "test://text"}})["result"], Json::object());
  features_->NotifyResourceUpdated("test://other");
  features_->NotifyResourceUpdated("test://text");
  Json updated = out_.WaitFor(
      [](const Json& j) { return j.value("method", "") == "notifications/resources/updated"; });
  EXPECT_EQ(updated["params"]["uri"], "test://text");
  EXPECT_EQ(Request(2, "resources/unsubscribe", {{"uri", "test://text"}})["result"],
            Json::object());
  features_->NotifyResourceUpdated("test://text");
  EXPECT_EQ(out_.Notifications("notifications/resources/updated").size(), 1u);
}

TEST_F(McpFeaturesTest, PromptsListGetAndTheirArguments) {
  Start();
  Json list = Request(1, "prompts/list");
  ASSERT_EQ(list["result"]["prompts"].size(), 1u)
      << "the prompt of an unselected toolset is hidden";
  EXPECT_EQ(list["result"]["prompts"][0]["name"], "greet");
  EXPECT_EQ(list["result"]["prompts"][0]["arguments"][0]["required"], true);
  Json got = Request(2, "prompts/get", {{"name", "greet"}, {"arguments", {{"who", "Ada"}}}});
  EXPECT_EQ(got["result"]["messages"][0]["content"]["text"], "Hello Ada");
  EXPECT_THAT(Request(3, "prompts/get", {{"name", "greet"}})["error"]["message"].get<std::string>(),
              HasSubstr("who"));
  EXPECT_EQ(
      Request(4, "prompts/get", {{"name", "greet"}, {"arguments", {{"who", 7}}}})["error"]["code"],
      kInvalidParams);
  EXPECT_EQ(Request(5, "prompts/get", {{"name", "elsewhere"}})["error"]["code"], kInvalidParams);
}

TEST_F(McpFeaturesTest, CompletionForPromptAndTemplateArguments) {
  Start();
  Json prompt = Request(1, "completion/complete",
                        {{"ref", {{"type", "ref/prompt"}, {"name", "greet"}}},
                         {"argument", {{"name", "who"}, {"value", "A"}}}});
  EXPECT_EQ(prompt["result"]["completion"]["values"], Json::array({"A1", "A2"}));
  EXPECT_EQ(prompt["result"]["completion"]["hasMore"], false);
  Json tmpl = Request(2, "completion/complete",
                      {{"ref", {{"type", "ref/resource"}, {"uri", "test://items/{id}/data"}}},
                       {"argument", {{"name", "id"}, {"value", "12"}}}});
  EXPECT_EQ(tmpl["result"]["completion"]["values"], Json::array({"123", "124"}));
  EXPECT_EQ(Request(3, "completion/complete",
                    {{"ref", {{"type", "ref/prompt"}, {"name", "nope"}}},
                     {"argument", {{"name", "x"}, {"value", ""}}}})["error"]["code"],
            kInvalidParams);
  EXPECT_EQ(Request(4, "completion/complete", {{"ref", "greet"}})["error"]["code"], kInvalidParams);
}

TEST_F(McpFeaturesTest, ToolsReturnRichContentBlocks) {
  AddTool("picture", [](const Json&, ToolContext&) {
    Json image = {{"type", "image"}, {"data", Base64Encode("PNG")}, {"mimeType", "image/png"}};
    return ToolResult::WithContent("[an image]", Json::array({image}));
  });
  Start();
  Json r = Request(1, "tools/call", {{"name", "picture"}});
  ASSERT_TRUE(r.contains("result")) << r.dump();
  EXPECT_EQ(r["result"]["content"][0]["type"], "image");
  EXPECT_EQ(r["result"]["content"][0]["data"], "UE5H");
  EXPECT_FALSE(r["result"].contains("isError"));
}

TEST_F(McpFeaturesTest, ElicitationAndSamplingRoundTripsOnTheCallsRoute) {
  AddTool("ask", [](const Json&, ToolContext& ctx) {
    auto answer = Elicit(ctx, "Your name?",
                         {{"type", "object"}, {"properties", {{"name", {{"type", "string"}}}}}});
    if (!answer) return ToolResult::Error(answer.error().message());
    auto sampled = CreateMessage(ctx, {{"messages", Json::array()}, {"maxTokens", 5}});
    if (!sampled) return ToolResult::Error(sampled.error().message());
    ctx.client->Log("info", "ask", "asked");
    return ToolResult::Text((*answer)["content"]["name"].get<std::string>() + " / " +
                            (*sampled)["content"]["text"].get<std::string>());
  });
  Start(true, {{"elicitation", Json::object()}, {"sampling", Json::object()}});
  Request(1, "logging/setLevel", {{"level", "info"}});
  Send(7, "tools/call", {{"name", "ask"}});
  Json elicit = ServerRequest("elicitation/create");
  ASSERT_FALSE(elicit.is_null());
  EXPECT_EQ(elicit["params"]["message"], "Your name?");
  // Tied to the tools/call (id 7), so Streamable HTTP sends it on that POST's stream.
  EXPECT_EQ(out_.RouteOf("elicitation/create"), "7|related");
  server_->HandleMessage(Json({{"jsonrpc", "2.0"},
                               {"id", elicit["id"]},
                               {"result", {{"action", "accept"}, {"content", {{"name", "Ada"}}}}}})
                             .dump());
  Json sample = ServerRequest("sampling/createMessage");
  ASSERT_FALSE(sample.is_null());
  server_->HandleMessage(Json({{"jsonrpc", "2.0"},
                               {"id", sample["id"]},
                               {"result",
                                {{"role", "assistant"},
                                 {"content", {{"type", "text"}, {"text", "hi"}}},
                                 {"model", "m"}}}})
                             .dump());
  Json r = out_.Response(7);
  EXPECT_EQ(r["result"]["content"][0]["text"], "Ada / hi") << r.dump();
  EXPECT_EQ(out_.RouteOf("\"asked\""), "7|related");
  EXPECT_EQ(out_.RouteOf("\"Ada / hi\""), "7|response");
}

TEST_F(McpFeaturesTest, ElicitationFailsClearlyWithoutTheClientCapabilityOrAClient) {
  AddTool("ask", [](const Json&, ToolContext& ctx) {
    auto answer = Elicit(ctx, "Your name?", Json::object());
    return answer ? ToolResult::Text("asked") : ToolResult::Error(answer.error().message());
  });
  Start(true, {{"sampling", Json::object()}});
  Json r = Request(1, "tools/call", {{"name", "ask"}});
  EXPECT_EQ(r["result"]["isError"], true);
  EXPECT_THAT(r["result"]["content"][0]["text"].get<std::string>(),
              HasSubstr("elicitation capability"));
  EXPECT_TRUE(ServerRequest("elicitation/create", 50ms).is_null()) << "nothing was sent";

  ToolContext bare;  // outside MCP: no client at all
  auto outside = Elicit(bare, "?", Json::object());
  ASSERT_FALSE(outside.has_value());
  EXPECT_EQ(outside.error().code(), StatusCode::kFailedPrecondition);
}

TEST_F(McpFeaturesTest, ACancelledCallWaitingForTheClientEndsPromptly) {
  std::atomic<int64_t> waited_ms{-1};
  AddTool("ask", [&waited_ms](const Json&, ToolContext& ctx) {
    const auto began = std::chrono::steady_clock::now();
    auto answer = Elicit(ctx, "never answered", Json::object());
    waited_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                    std::chrono::steady_clock::now() - began)
                    .count();
    return answer ? ToolResult::Text("answered")
                  : ToolResult::Error(answer.error().message(), CallStatus::kCancelled);
  });
  Start(true, {{"elicitation", Json::object()}});
  Send(5, "tools/call", {{"name", "ask"}});
  Json elicit = ServerRequest("elicitation/create");
  ASSERT_FALSE(elicit.is_null());
  Notify("notifications/cancelled", {{"requestId", 5}, {"reason", "user gave up"}});
  // The server withdraws its own request, and sends no response for the cancelled call.
  Json withdrawn = out_.WaitFor(
      [](const Json& j) { return j.value("method", "") == "notifications/cancelled"; });
  EXPECT_EQ(withdrawn["params"]["requestId"], elicit["id"]);
  // The call ends once cancelled; uncancelled, the question would wait for its own timeout.
  EXPECT_TRUE(test_support::WaitUntil([this] { return server_->calls_in_flight() == 0; }, 10s))
      << "the cancelled call is still waiting for the client's answer";
  EXPECT_GE(waited_ms.load(), 0);
  EXPECT_TRUE(out_.Response(5, 50ms).is_null());
  // A late answer to the withdrawn request is dropped without harm.
  server_->HandleMessage(
      Json({{"jsonrpc", "2.0"}, {"id", elicit["id"]}, {"result", {{"action", "accept"}}}}).dump());
  EXPECT_EQ(Request(6, "ping")["result"], Json::object());
}

TEST(UriTemplate, MatchesLevelOneVariables) {
  std::map<std::string, std::string> vars;
  EXPECT_TRUE(MatchUriTemplate("test://template/{id}/data", "test://template/123/data", &vars));
  EXPECT_EQ(vars["id"], "123");
  EXPECT_TRUE(MatchUriTemplate("file:///{dir}/{name}.txt", "file:///a/b.txt", &vars));
  EXPECT_EQ(vars["dir"], "a");
  EXPECT_EQ(vars["name"], "b");
  EXPECT_FALSE(MatchUriTemplate("test://template/{id}/data", "test://template/123/other", &vars));
  EXPECT_FALSE(MatchUriTemplate("test://template/{id}/data", "test://template/1/2/data", &vars));
  EXPECT_FALSE(MatchUriTemplate("test://{id}", "test://", &vars));
}

}  // namespace
}  // namespace talaria::mcp
