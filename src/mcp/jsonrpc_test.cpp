// The JSON-RPC codec against hostile input: every refusal carries the right code and, where it
// could be read, the request's id; valid messages decode to the right kind.
#include "talaria/mcp/jsonrpc.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace talaria::mcp {
namespace {

using ::testing::HasSubstr;

struct BadCase {
  std::string name;
  std::string text;
  int code;
  std::string id_json;     // the id the error must carry ("null" when none)
  std::string mentioning;  // a substring of the error message
};

TEST(DecodeMessage, RefusesHostileInputWithTheRightCodeAndId) {
  const std::vector<BadCase> cases = {
      {"empty", "", kParseError, "null", "Parse error"},
      {"not json", "hello", kParseError, "null", "Parse error"},
      {"truncated", R"({"jsonrpc":"2.0","id":1,"method":"ping")", kParseError, "null",
       "Parse error"},
      {"invalid utf-8 byte", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\xff\"}", kParseError,
       "null", "UTF-8"},
      {"overlong encoding", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xc0\xaf\"}", kParseError,
       "null", "UTF-8"},
      {"encoded surrogate", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xed\xa0\x80\"}",
       kParseError, "null", "UTF-8"},
      {"truncated sequence", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xe2\x82\"}", kParseError,
       "null", "UTF-8"},
      {"past U+10FFFF", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xf4\x90\x80\x80\"}",
       kParseError, "null", "UTF-8"},
      {"lone surrogate escape", R"({"jsonrpc":"2.0","id":1,"method":"\ud800"})", kParseError,
       "null", "Parse error"},
      {"deep arrays", std::string(100, '[') + std::string(100, ']'), kParseError, "null",
       "nesting"},
      {"deep params",
       R"({"jsonrpc":"2.0","id":1,"method":"x","params":{"a":)" + std::string(70, '[') +
           std::string(70, ']') + "}}",
       kParseError, "null", "nesting"},
      {"empty batch", "[]", kInvalidRequest, "null", "batch"},
      {"batch", R"([{"jsonrpc":"2.0","id":1,"method":"ping"}])", kInvalidRequest, "null", "batch"},
      {"scalar", "42", kInvalidRequest, "null", "object"},
      {"string", R"("ping")", kInvalidRequest, "null", "object"},
      {"no jsonrpc", R"({"id":1,"method":"ping"})", kInvalidRequest, "1", "jsonrpc"},
      {"jsonrpc 1.0", R"({"jsonrpc":"1.0","id":"a","method":"ping"})", kInvalidRequest, "\"a\"",
       "jsonrpc"},
      {"jsonrpc number", R"({"jsonrpc":2.0,"id":1,"method":"ping"})", kInvalidRequest, "1",
       "jsonrpc"},
      {"null id", R"({"jsonrpc":"2.0","id":null,"method":"ping"})", kInvalidRequest, "null", "id"},
      {"float id", R"({"jsonrpc":"2.0","id":1.5,"method":"ping"})", kInvalidRequest, "null", "id"},
      {"object id", R"({"jsonrpc":"2.0","id":{},"method":"ping"})", kInvalidRequest, "null", "id"},
      {"bool id", R"({"jsonrpc":"2.0","id":true,"method":"ping"})", kInvalidRequest, "null", "id"},
      {"method not a string", R"({"jsonrpc":"2.0","id":7,"method":5})", kInvalidRequest, "7",
       "method"},
      {"params a string", R"({"jsonrpc":"2.0","id":7,"method":"x","params":"s"})", kInvalidRequest,
       "7", "params"},
      {"params in a notification", R"({"jsonrpc":"2.0","method":"x","params":3})", kInvalidRequest,
       "null", "params"},
      {"request with result", R"({"jsonrpc":"2.0","id":7,"method":"x","result":{}})",
       kInvalidRequest, "7", "result"},
      {"neither", R"({"jsonrpc":"2.0"})", kInvalidRequest, "null", "method"},
      {"response with both", R"({"jsonrpc":"2.0","id":3,"result":{},"error":{}})", kInvalidRequest,
       "3", "response"},
      {"response error not object", R"({"jsonrpc":"2.0","id":3,"error":"x"})", kInvalidRequest, "3",
       "error"},
  };
  for (const BadCase& c : cases) {
    SCOPED_TRACE(c.name);
    const Decoded d = DecodeMessage(c.text);
    ASSERT_FALSE(d.ok());
    EXPECT_EQ(d.error.code, c.code);
    EXPECT_EQ(d.error.id ? DumpJson(*d.error.id) : "null", c.id_json);
    EXPECT_THAT(d.error.message, HasSubstr(c.mentioning));
  }
}

TEST(DecodeMessage, RefusesTextOverTheSizeCapBeforeParsing) {
  MessageLimits limits;
  limits.max_bytes = 64;
  const std::string big = R"({"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":")" +
                          std::string(100, 'x') + "\"}}";
  const Decoded d = DecodeMessage(big, limits);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.error.code, kInvalidRequest);
  EXPECT_THAT(d.error.message, HasSubstr("exceeds the limit of 64"));
  EXPECT_EQ(d.error.id, nullptr);  // not read
  EXPECT_EQ(kDefaultMaxMessageBytes, size_t{16} << 20);
}

TEST(DecodeMessage, DepthLimitIsConfigurable) {
  MessageLimits limits;
  limits.max_depth = 3;
  EXPECT_TRUE(DecodeMessage(R"({"jsonrpc":"2.0","method":"x","params":{"a":[1]}})", limits).ok());
  EXPECT_FALSE(
      DecodeMessage(R"({"jsonrpc":"2.0","method":"x","params":{"a":[[1]]}})", limits).ok());
  // Brackets inside strings are not nesting.
  EXPECT_TRUE(
      DecodeMessage(R"({"jsonrpc":"2.0","method":"x","params":{"a":"[[[[\"[[["}})", limits).ok());
}

TEST(DecodeMessage, DecodesRequestsNotificationsAndResponses) {
  Decoded r = DecodeMessage(
      R"({"jsonrpc":"2.0","id":"abc","method":"tools/list","params":{"cursor":"c"}})");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.message->kind, MessageKind::kRequest);
  EXPECT_EQ(r.message->method, "tools/list");
  EXPECT_EQ(r.message->id(), "abc");
  EXPECT_EQ(r.message->params()["cursor"], "c");

  Decoded big_id = DecodeMessage(R"({"jsonrpc":"2.0","id":-9007199254740993,"method":"ping"})");
  ASSERT_TRUE(big_id.ok());
  EXPECT_EQ(DumpJson(big_id.message->id()), "-9007199254740993");
  EXPECT_TRUE(big_id.message->params().is_null());

  Decoded n = DecodeMessage(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(n.message->kind, MessageKind::kNotification);
  EXPECT_TRUE(n.message->id().is_null());

  Decoded array_params = DecodeMessage(R"({"jsonrpc":"2.0","id":2,"method":"x","params":[1,2]})");
  ASSERT_TRUE(array_params.ok());
  EXPECT_TRUE(array_params.message->params().is_array());

  Decoded resp = DecodeMessage(R"({"jsonrpc":"2.0","id":5,"result":{}})");
  ASSERT_TRUE(resp.ok());
  EXPECT_EQ(resp.message->kind, MessageKind::kResponse);
  Decoded null_resp =
      DecodeMessage(R"({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}})");
  ASSERT_TRUE(null_resp.ok());
  EXPECT_EQ(null_resp.message->kind, MessageKind::kResponse);

  Decoded unicode =
      DecodeMessage("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"caf\xc3\xa9 \xf0\x9f\x9a\x80\"}");
  ASSERT_TRUE(unicode.ok());
  EXPECT_EQ(unicode.message->method, "caf\xc3\xa9 \xf0\x9f\x9a\x80");
}

TEST(DecodeBatch, DecodesEachElementOnItsOwnAndRefusesBadBatchesWhole) {
  EXPECT_TRUE(IsBatchText(" \n [1]"));
  EXPECT_FALSE(IsBatchText(R"({"a": [1]})"));
  EXPECT_FALSE(IsBatchText("   "));

  const DecodedBatch batch = DecodeBatch(
      R"([{"jsonrpc":"2.0","id":1,"method":"ping"}, 7, {"jsonrpc":"2.0","method":"note"},)"
      R"( {"jsonrpc":"1.0","id":"x","method":"ping"}])");
  ASSERT_TRUE(batch.ok());
  ASSERT_EQ(batch.items.size(), 4u);
  ASSERT_TRUE(batch.items[0].ok());
  EXPECT_EQ(batch.items[0].message->kind, MessageKind::kRequest);
  EXPECT_FALSE(batch.items[1].ok());
  EXPECT_EQ(batch.items[1].error.code, kInvalidRequest);
  ASSERT_TRUE(batch.items[2].ok());
  EXPECT_EQ(batch.items[2].message->kind, MessageKind::kNotification);
  ASSERT_FALSE(batch.items[3].ok());
  ASSERT_NE(batch.items[3].error.id, nullptr);  // the bad element's id is still answered
  EXPECT_EQ(*batch.items[3].error.id, "x");

  EXPECT_EQ(DecodeBatch("[]").error->code, kInvalidRequest);
  EXPECT_EQ(DecodeBatch("[{").error->code, kParseError);
  MessageLimits tiny;
  tiny.max_bytes = 8;
  EXPECT_THAT(DecodeBatch(R"([{"jsonrpc":"2.0"}])", tiny).error->message,
              HasSubstr("exceeds the limit"));
  tiny = MessageLimits{};
  tiny.max_depth = 3;
  EXPECT_EQ(DecodeBatch(R"([{"a":[[1]]}])", tiny).error->code, kParseError);
}

TEST(Encode, ProducesCompactSingleLines) {
  EXPECT_EQ(EncodeResult(Json(1), Json::object()), R"({"jsonrpc":"2.0","id":1,"result":{}})");
  EXPECT_EQ(EncodeError(nullptr, kParseError, "Parse error"),
            R"({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}})");
  const Json id = "x";
  const Json data = {{"supported", {"2025-11-25"}}};
  EXPECT_EQ(EncodeError(&id, kInvalidParams, "bad", &data),
            R"({"jsonrpc":"2.0","id":"x","error":{"code":-32602,"message":"bad",)"
            R"("data":{"supported":["2025-11-25"]}}})");
  EXPECT_EQ(EncodeNotification("notifications/tools/list_changed", Json()),
            R"({"jsonrpc":"2.0","method":"notifications/tools/list_changed"})");
  // Text with newlines stays on one line; invalid UTF-8 is replaced, never thrown on.
  const std::string line = EncodeResult(Json(2), Json::object({{"text", "a\nb\xff"}}));
  EXPECT_EQ(line.find('\n'), std::string::npos);
  EXPECT_THAT(line, HasSubstr("a\\nb"));
}

}  // namespace
}  // namespace talaria::mcp
