// The HTTP request of one Chat Completions call: its JSON body and headers.
// Thread-safety: free functions.
#pragma once

#include <string>

#include "talaria/agent/model_client.h"
#include "talaria/net/http_client.h"

namespace talaria::agent {

// `{base_url}/chat/completions`, whether or not base_url ends in a slash.
std::string ChatCompletionsUrl(const ModelSettings& model);

// The body for `model`: model name, messages (MessageToWire), tools with tool_choice and
// parallel_tool_calls (only when there are tools), stream with stream_options.include_usage,
// max_tokens, temperature. In the Hermes text format the tools go into the system prompt
// instead and the history's calls and results are written as text.
std::string BuildRequestBody(const ModelSettings& model, const ChatRequest& request);

// Content-Type, Accept, Authorization (Bearer, only when a key is set) and the configured
// headers (which may override the others).
net::HeaderList BuildRequestHeaders(const ModelSettings& model);

}  // namespace talaria::agent
