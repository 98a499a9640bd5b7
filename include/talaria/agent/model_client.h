// ModelClient: one OpenAI-compatible Chat Completions endpoint (OpenAI, OpenRouter, vLLM,
// llama.cpp's server, Ollama, LM Studio, ...): builds the request, streams the response (SSE)
// or reads it whole, assembles tool calls, retries with backoff and falls back to the next
// configured model.
//
//   auto settings = talaria::agent::ModelSettingsFromConfig(config, overrides);
//   auto client = talaria::agent::ModelClient::Open(*settings);
//   auto reply = (*client)->Complete(request, &observer, stop_token);
//
// Thread-safety: one Complete at a time per client.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

// ChatRequest holds a Json by value, which needs the complete type (json_fwd.hpp is not
// enough: the header did not compile on its own, e.g. under clang-tidy, which cannot use the PCH).
#include <nlohmann/json.hpp>

#include "talaria/agent/chat.h"
#include "talaria/base/json.h"
#include "talaria/base/status.h"
#include "talaria/core/config.h"

namespace talaria::agent {

// How a model calls tools: the API's tool_calls, or the Hermes text format for local models
// (<tool_call>{"name": ..., "arguments": {...}}</tool_call> inside the content).
enum class ToolCallFormat : unsigned char { kNative, kHermesText };

// config.yaml's `model:` section, then TALARIA_MODEL / TALARIA_BASE_URL, then flags.
//   model:
//     base_url: http://127.0.0.1:8080/v1
//     name: qwen2.5-coder
//     api_key_env: OPENROUTER_API_KEY   # default TALARIA_API_KEY, then OPENAI_API_KEY
//     context_window: 32768
//     max_output_tokens: 4096
//     temperature: 0.2
//     headers: {HTTP-Referer: https://example.org}
//     tool_call_format: native          # or hermes_text
//     stream: true
//     ca_file: /etc/ssl/private-ca.pem   # trust this CA for the endpoint (default: the system's)
//     fallback: [{name: gpt-4o-mini, base_url: ..., api_key_env: ...}]
//     pricing: {input: 0.15, cached: 0.075, output: 0.60}   # USD per million tokens
struct ModelSettings {
  std::string base_url = "https://api.openai.com/v1";
  std::string model;
  std::string api_key_env;  // the variable the key was read from; the key is never stored
  std::string api_key;      // read at start-up; empty for an endpoint that needs none
  int64_t context_window = 128'000;
  int64_t max_output_tokens = 0;  // 0: the endpoint's default
  std::optional<double> temperature;
  // How hard a reasoning model thinks ("low" ... "xhigh"); empty: the field is not sent.
  // Sent as OpenRouter's `reasoning: {enabled, effort}`, or `reasoning_effort` to OpenAI's API.
  std::string reasoning_effort;
  std::vector<std::pair<std::string, std::string>> headers;
  ToolCallFormat tool_call_format = ToolCallFormat::kNative;
  bool stream = true;
  Pricing pricing;
  std::vector<ModelSettings> fallback;  // tried in order after the retries are spent
  int max_retries = 3;
  std::chrono::milliseconds backoff_base{2'000};
  std::chrono::milliseconds backoff_cap{60'000};
  std::chrono::milliseconds retry_after_cap{120'000};
  std::chrono::milliseconds connect_timeout{30'000};
  std::chrono::milliseconds idle_timeout{120'000};  // silence allowed inside a stream
  std::string ca_file;  // PEM certificates to trust for this endpoint; empty: the system's
};

// What flags and the environment override (empty: not given).
struct ModelOverrides {
  std::string model;
  std::string base_url;
  std::string api_key_env;
};

// Errors: InvalidArgument naming the bad key of the `model` section.
Result<ModelSettings> ModelSettingsFromConfig(const Config& config, const ModelOverrides& flags);

struct ChatRequest {
  std::vector<Message> messages;
  Json tools = Json::array();  // OpenAI function definitions; empty: the request has none
  std::string tool_choice = "auto";
  bool parallel_tool_calls = true;
  std::optional<int64_t> max_tokens;  // overrides ModelSettings::max_output_tokens
};

struct ChatResponse {
  Message message;            // role assistant: content, reasoning, tool_calls
  std::string finish_reason;  // "stop", "tool_calls", "length", "content_filter", ...
  Usage usage;
  std::string model;  // the model that answered (a fallback's name when one did)
};

// Told as the response arrives, on the thread that called Complete.
class StreamObserver {
 public:
  virtual ~StreamObserver() = default;
  virtual void OnText(std::string_view /*delta*/) {}
  virtual void OnReasoning(std::string_view /*delta*/) {}
  virtual void OnToolCallStarted(size_t /*index*/, std::string_view /*name*/) {}
  // A failed attempt that will be retried after `delay` (or with the next fallback model).
  // Text, reasoning and call starts told so far belonged to that attempt: the next one streams
  // its answer from the start.
  virtual void OnRetry(int /*attempt*/, std::chrono::milliseconds /*delay*/,
                       std::string_view /*reason*/) {}
};

class ModelClient {
 public:
  virtual ~ModelClient() = default;
  // Errors: Unavailable (endpoint unreachable, 5xx or 429 after the retries and fallbacks:
  // one line naming the endpoint and the last cause), PermissionDenied (401/403),
  // InvalidArgument (400/404: the message carries the provider's error text), Cancelled
  // (`stop` requested: the stream is closed at once), DeadlineExceeded (the stream went silent).
  virtual Result<ChatResponse> Complete(const ChatRequest& request, StreamObserver* observer,
                                        std::stop_token stop) = 0;

  // Errors: Unavailable when the HTTP client cannot be loaded.
  static Result<std::unique_ptr<ModelClient>> Open(ModelSettings settings);
};

}  // namespace talaria::agent
