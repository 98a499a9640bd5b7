// The Hermes text format of tool calls, for local models whose server does not parse calls:
// the model writes <tool_call>{"name": ..., "arguments": {...}}</tool_call> in its content, and
// the tools are described to it in the system prompt (<tools>[...]</tools>).
// Thread-safety: free functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "talaria/agent/chat.h"
#include "talaria/base/json.h"

namespace talaria::agent {

struct HermesExtraction {
  std::string content;  // the content with the <tool_call> blocks taken out, trimmed
  std::vector<ToolCall> tool_calls;
};

// Takes the <tool_call> blocks out of `content`. A block's JSON gives the name and the
// arguments ("arguments", or "parameters"; an object is serialized, a string kept as it is).
// A block whose JSON does not parse becomes a call without a name whose arguments are the raw
// text (the loop answers it with an error); a block left open at the end of the content is
// marked truncated.
HermesExtraction ExtractHermesToolCalls(std::string_view content);

// The system-prompt text that describes `tools` (OpenAI function definitions) and how to call
// them in this format.
std::string HermesToolsPrompt(const Json& tools);

// An assistant turn's calls written back as <tool_call> blocks (for the history sent to a
// model in this format).
std::string HermesCallsText(const std::vector<ToolCall>& calls);

}  // namespace talaria::agent
