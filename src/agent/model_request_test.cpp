#include "agent/model_request.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace talaria::agent {
namespace {

TEST(ModelRequest, UrlJoinsBaseAndPath) {
  ModelSettings model;
  model.base_url = "http://127.0.0.1:8080/v1/";
  EXPECT_EQ(ChatCompletionsUrl(model), "http://127.0.0.1:8080/v1/chat/completions");
  model.base_url = "http://h/v1";
  EXPECT_EQ(ChatCompletionsUrl(model), "http://h/v1/chat/completions");
}

TEST(ModelRequest, OpenAiGetsMaxCompletionTokensOthersMaxTokens) {
  ModelSettings model;
  model.model = "m";
  model.max_output_tokens = 100;
  ChatRequest request;
  model.base_url = "https://api.openai.com/v1";
  Json openai = Json::parse(BuildRequestBody(model, request));
  EXPECT_EQ(openai["max_completion_tokens"], 100);
  EXPECT_FALSE(openai.contains("max_tokens"));
  model.base_url = "http://127.0.0.1:11434/v1";
  request.max_tokens = 7;  // the request's own limit wins
  Json local = Json::parse(BuildRequestBody(model, request));
  EXPECT_EQ(local["max_tokens"], 7);
  EXPECT_FALSE(local.contains("temperature"));
}

TEST(ModelRequest, ReasoningEffortIsSentInTheEndpointsOwnShape) {
  ModelSettings model;
  model.model = "m";
  ChatRequest request;
  model.base_url = "https://openrouter.ai/api/v1";
  EXPECT_FALSE(Json::parse(BuildRequestBody(model, request)).contains("reasoning"))
      << "no effort configured, none sent";
  model.reasoning_effort = "xhigh";
  Json router = Json::parse(BuildRequestBody(model, request));
  EXPECT_EQ(router["reasoning"], Json::parse(R"({"enabled": true, "effort": "xhigh"})"));
  EXPECT_FALSE(router.contains("reasoning_effort"));
  model.base_url = "https://api.openai.com/v1";
  Json openai = Json::parse(BuildRequestBody(model, request));
  EXPECT_EQ(openai["reasoning_effort"], "xhigh");
  EXPECT_FALSE(openai.contains("reasoning"));
}

TEST(ModelRequest, ConfiguredHeadersOverrideTheDefaults) {
  ModelSettings model;
  model.api_key = "k";
  model.headers = {{"authorization", "Token other"}, {"X-Title", "talaria"}};
  net::HeaderList headers = BuildRequestHeaders(model);
  int authorizations = 0;
  for (const auto& [name, value] : headers) {
    if (name == "Authorization" || name == "authorization") {
      ++authorizations;
      EXPECT_EQ(value, "Token other");
    }
  }
  EXPECT_EQ(authorizations, 1);
  EXPECT_EQ(headers.back().first, "X-Title");
}

}  // namespace
}  // namespace talaria::agent
