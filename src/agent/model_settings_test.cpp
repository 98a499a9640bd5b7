#include <nlohmann/json.hpp>  // before model_client.h: ChatRequest holds a Json by value

#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>

#include "talaria/agent/model_client.h"

namespace talaria::agent {
namespace {

using namespace std::chrono_literals;

// Sets (or unsets, for nullptr) an environment variable for the scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = getenv(name)) old_ = old;
    had_ = getenv(name) != nullptr;
    if (value != nullptr) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;
  ~ScopedEnv() {
    if (had_) {
      setenv(name_, old_.c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

struct CleanEnv {
  ScopedEnv a{"TALARIA_MODEL", nullptr};
  ScopedEnv b{"TALARIA_BASE_URL", nullptr};
  ScopedEnv c{"TALARIA_API_KEY", nullptr};
  ScopedEnv d{"OPENAI_API_KEY", nullptr};
};

Result<ModelSettings> FromYaml(const std::string& yaml, const ModelOverrides& flags = {}) {
  auto config = ParseConfig(yaml);
  EXPECT_TRUE(config.has_value()) << config.error().ToString();
  if (!config) return Err(config.error());
  EXPECT_TRUE(config->warnings.empty()) << config->warnings.front();
  return ModelSettingsFromConfig(*config, flags);
}

TEST(ModelSettings, ReadsTheModelSection) {
  CleanEnv env;
  ScopedEnv key("MY_KEY", "sk-from-env");
  auto settings = FromYaml(R"(
model:
  base_url: http://127.0.0.1:8080/v1
  name: qwen2.5-coder
  api_key_env: MY_KEY
  context_window: 32768
  max_output_tokens: 4096
  temperature: 0.2
  headers: {HTTP-Referer: https://example.org}
  tool_call_format: hermes_text
  stream: false
  idle_timeout: 30
  ca_file: /etc/ssl/private-ca.pem
  max_retries: 2
  pricing: {input: 0.15, cached: 0.075, output: 0.60}
  fallback:
    - {name: gpt-4o-mini, base_url: https://api.openai.com/v1}
    - {name: local-small}
)");
  ASSERT_TRUE(settings.has_value()) << settings.error().ToString();
  EXPECT_EQ(settings->base_url, "http://127.0.0.1:8080/v1");
  EXPECT_EQ(settings->model, "qwen2.5-coder");
  EXPECT_EQ(settings->api_key_env, "MY_KEY");
  EXPECT_EQ(settings->api_key, "sk-from-env");
  EXPECT_EQ(settings->context_window, 32768);
  EXPECT_EQ(settings->max_output_tokens, 4096);
  EXPECT_EQ(settings->temperature, 0.2);
  ASSERT_EQ(settings->headers.size(), 1u);
  EXPECT_EQ(settings->headers[0].first, "HTTP-Referer");
  EXPECT_EQ(settings->tool_call_format, ToolCallFormat::kHermesText);
  EXPECT_FALSE(settings->stream);
  EXPECT_EQ(settings->idle_timeout, 30s);
  EXPECT_EQ(settings->ca_file, "/etc/ssl/private-ca.pem");
  EXPECT_EQ(settings->max_retries, 2);
  EXPECT_DOUBLE_EQ(settings->pricing.output_per_mtok, 0.60);
  ASSERT_EQ(settings->fallback.size(), 2u);
  EXPECT_EQ(settings->fallback[0].model, "gpt-4o-mini");
  EXPECT_EQ(settings->fallback[0].base_url, "https://api.openai.com/v1");
  // A fallback names only what differs; the rest is the main model's.
  EXPECT_EQ(settings->fallback[1].base_url, "http://127.0.0.1:8080/v1");
  EXPECT_EQ(settings->fallback[1].api_key, "sk-from-env");
  EXPECT_EQ(settings->fallback[1].max_output_tokens, 4096);
  EXPECT_TRUE(settings->fallback[1].fallback.empty());
}

TEST(ModelSettings, EnvironmentThenFlagsOverrideTheConfig) {
  CleanEnv env;
  ScopedEnv model("TALARIA_MODEL", "env-model");
  ScopedEnv url("TALARIA_BASE_URL", "http://env/v1");
  const std::string yaml = "model: {name: cfg-model, base_url: http://cfg/v1}\n";
  auto from_env = FromYaml(yaml);
  ASSERT_TRUE(from_env.has_value());
  EXPECT_EQ(from_env->model, "env-model");
  EXPECT_EQ(from_env->base_url, "http://env/v1");
  ModelOverrides flags;
  flags.model = "flag-model";
  flags.base_url = "http://flag/v1";
  auto from_flags = FromYaml(yaml, flags);
  ASSERT_TRUE(from_flags.has_value());
  EXPECT_EQ(from_flags->model, "flag-model");
  EXPECT_EQ(from_flags->base_url, "http://flag/v1");
}

TEST(ModelSettings, KeyDefaultsToTalariaThenOpenAiVariableAndMayBeAbsent) {
  {
    CleanEnv env;
    auto none = FromYaml("");
    ASSERT_TRUE(none.has_value());
    EXPECT_EQ(none->api_key, "");  // a local endpoint needs none
    EXPECT_EQ(none->base_url, "https://api.openai.com/v1");
  }
  {
    CleanEnv env;
    ScopedEnv openai("OPENAI_API_KEY", "sk-openai");
    auto s = FromYaml("");
    ASSERT_TRUE(s.has_value());
    EXPECT_EQ(s->api_key, "sk-openai");
    EXPECT_EQ(s->api_key_env, "OPENAI_API_KEY");
  }
  {
    CleanEnv env;
    ScopedEnv openai("OPENAI_API_KEY", "sk-openai");
    ScopedEnv talaria("TALARIA_API_KEY", "sk-talaria");
    auto s = FromYaml("");
    ASSERT_TRUE(s.has_value());
    EXPECT_EQ(s->api_key, "sk-talaria");
    EXPECT_EQ(s->api_key_env, "TALARIA_API_KEY");
  }
}

TEST(ModelSettings, BadKeysAreNamed) {
  CleanEnv env;
  struct Case {
    const char* yaml;
    const char* names;
  };
  for (const Case& c : {
           Case{"model: {nmae: x}\n", "model.nmae"},
           Case{"model: {context_window: -5}\n", "model.context_window"},
           Case{"model: {temperature: hot}\n", "model.temperature"},
           Case{"model: {tool_call_format: xml}\n", "model.tool_call_format"},
           Case{"model: {pricing: {inptu: 1}}\n", "model.pricing.inptu"},
           Case{"model: {fallback: [{name: a, bogus: 1}]}\n", "model.fallback[0].bogus"},
           Case{"model: {fallback: [{fallback: []}]}\n", "model.fallback[0].fallback"},
           Case{"model: [1, 2]\n", "model must be a mapping"},
           Case{"model: {stream: maybe}\n", "model.stream"},
       }) {
    auto s = FromYaml(c.yaml);
    ASSERT_FALSE(s.has_value()) << c.yaml;
    EXPECT_EQ(s.error().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(s.error().message().find(c.names), std::string::npos) << s.error().message();
  }
}

}  // namespace
}  // namespace talaria::agent
