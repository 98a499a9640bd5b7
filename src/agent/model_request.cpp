#include "agent/model_request.h"

#include <nlohmann/json.hpp>

#include "agent/hermes_text.h"
#include "talaria/base/ascii.h"

namespace talaria::agent {
namespace {

// The history as a model using the Hermes text format reads it: the tools in the system
// prompt, calls as <tool_call> blocks in the assistant's content, results in <tool_response>.
Json HermesMessages(const ChatRequest& request) {
  Json messages = Json::array();
  const bool has_tools = request.tools.is_array() && !request.tools.empty();
  bool prompted = false;
  for (const Message& message : request.messages) {
    Message copy = message;
    if (message.role == Role::kSystem && has_tools && !prompted) {
      copy.content += "\n\n" + HermesToolsPrompt(request.tools);
      prompted = true;
    } else if (message.role == Role::kAssistant && !message.tool_calls.empty()) {
      const std::string calls = HermesCallsText(message.tool_calls);
      copy.content = copy.content.empty() ? calls : copy.content + "\n" + calls;
      copy.tool_calls.clear();
    } else if (message.role == Role::kTool) {
      Json response = {{"name", message.name}, {"content", message.content}};
      copy.content = "<tool_response>\n" + DumpJson(response) + "\n</tool_response>";
    }
    messages.push_back(MessageToWire(copy));
  }
  if (has_tools && !prompted) {
    Message system;
    system.role = Role::kSystem;
    system.content = HermesToolsPrompt(request.tools);
    messages.insert(messages.begin(), MessageToWire(system));
  }
  return messages;
}

}  // namespace

std::string ChatCompletionsUrl(const ModelSettings& model) {
  std::string url = model.base_url;
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url + "/chat/completions";
}

std::string BuildRequestBody(const ModelSettings& model, const ChatRequest& request) {
  Json body = Json::object();
  if (!model.model.empty()) body["model"] = model.model;
  const bool hermes = model.tool_call_format == ToolCallFormat::kHermesText;
  if (hermes) {
    body["messages"] = HermesMessages(request);
  } else {
    Json messages = Json::array();
    for (const Message& message : request.messages) messages.push_back(MessageToWire(message));
    body["messages"] = std::move(messages);
    if (request.tools.is_array() && !request.tools.empty()) {
      body["tools"] = request.tools;
      body["tool_choice"] = request.tool_choice;
      body["parallel_tool_calls"] = request.parallel_tool_calls;
    }
  }
  if (model.stream) {
    body["stream"] = true;
    body["stream_options"] = {{"include_usage", true}};
  }
  const int64_t max_tokens = request.max_tokens.value_or(model.max_output_tokens);
  // OpenAI's own API refuses max_tokens for its reasoning models and takes
  // max_completion_tokens for all; the compatible servers know max_tokens.
  const bool openai = model.base_url.find("://api.openai.com") != std::string::npos;
  if (max_tokens > 0) body[openai ? "max_completion_tokens" : "max_tokens"] = max_tokens;
  if (model.temperature) body["temperature"] = *model.temperature;
  if (!model.reasoning_effort.empty()) {
    // OpenAI names it at the top level; OpenRouter (and the servers copying it) take the
    // object, which the reference sends as its extra_body.
    if (openai) {
      body["reasoning_effort"] = model.reasoning_effort;
    } else {
      body["reasoning"] = {{"enabled", true}, {"effort", model.reasoning_effort}};
    }
  }
  return DumpJson(body);
}

net::HeaderList BuildRequestHeaders(const ModelSettings& model) {
  net::HeaderList headers = {
      {"Content-Type", "application/json"},
      {"Accept", model.stream ? "text/event-stream" : "application/json"},
  };
  if (!model.api_key.empty()) headers.emplace_back("Authorization", "Bearer " + model.api_key);
  for (const auto& [name, value] : model.headers) {
    bool replaced = false;
    for (auto& [existing, old] : headers) {
      if (EqualsIgnoringAsciiCase(existing, name)) {
        old = value;
        replaced = true;
      }
    }
    if (!replaced) headers.emplace_back(name, value);
  }
  return headers;
}

}  // namespace talaria::agent
