#include "agent/hermes_text.h"

#include <nlohmann/json.hpp>

#include "agent/stream_assembler.h"

#include "talaria/base/strings.h"

namespace talaria::agent {
namespace {

constexpr std::string_view kOpen = "<tool_call>";
constexpr std::string_view kClose = "</tool_call>";

ToolCall CallFromBlock(std::string_view block) {
  ToolCall call;
  const std::string_view text = Trim(block);
  Json parsed = ParseBoundedJson(text);
  if (parsed.is_discarded() || !parsed.is_object()) {
    call.arguments = std::string(text);
    return call;
  }
  call.name = JsonStringField(parsed, "name");
  auto args = parsed.find("arguments");
  if (args == parsed.end()) args = parsed.find("parameters");
  if (args == parsed.end() || args->is_null()) {
    call.arguments = "{}";
  } else if (args->is_string()) {
    call.arguments = args->get<std::string>();
  } else {
    call.arguments = DumpJson(*args);
  }
  return call;
}

}  // namespace

HermesExtraction ExtractHermesToolCalls(std::string_view content) {
  HermesExtraction out;
  size_t pos = 0;
  while (pos < content.size()) {
    const size_t open = content.find(kOpen, pos);
    if (open == std::string_view::npos) {
      out.content.append(content.substr(pos));
      break;
    }
    out.content.append(content.substr(pos, open - pos));
    const size_t body = open + kOpen.size();
    const size_t close = content.find(kClose, body);
    if (close == std::string_view::npos) {
      ToolCall call = CallFromBlock(content.substr(body));
      call.truncated = true;
      out.tool_calls.push_back(std::move(call));
      break;
    }
    out.tool_calls.push_back(CallFromBlock(content.substr(body, close - body)));
    pos = close + kClose.size();
  }
  out.content = std::string(Trim(out.content));
  return out;
}

std::string HermesToolsPrompt(const Json& tools) {
  std::string prompt =
      "You are a function-calling model. The functions you may call are described inside "
      "<tools></tools>:\n<tools>\n";
  if (tools.is_array()) {
    for (const Json& tool : tools) {
      prompt += DumpJson(tool);
      prompt += '\n';
    }
  }
  prompt +=
      "</tools>\nTo call a function, write one block per call, with a JSON object holding the "
      "function's name and its arguments:\n<tool_call>\n{\"name\": <function-name>, "
      "\"arguments\": <args-json-object>}\n</tool_call>\nThe results come back inside "
      "<tool_response></tool_response>.";
  return prompt;
}

std::string HermesCallsText(const std::vector<ToolCall>& calls) {
  std::string text;
  for (const ToolCall& call : calls) {
    if (!text.empty()) text += '\n';
    Json args = ParseBoundedJson(call.arguments);
    Json block = {{"name", call.name}};
    block["arguments"] = args.is_discarded() ? Json(call.arguments) : std::move(args);
    text += "<tool_call>\n" + DumpJson(block) + "\n</tool_call>";
  }
  return text;
}

}  // namespace talaria::agent
