#include "cli/batch_input.h"
#include "talaria/base/strings.h"

#include <nlohmann/json.hpp>

namespace talaria::cli {
namespace {

// `arguments` as the dispatcher takes it: the model's text as is, an object serialised, absent {}.
Result<std::string> ArgumentsText(const Json& holder, const std::string& where) {
  auto it = holder.find("arguments");
  if (it == holder.end() || it->is_null()) return std::string("{}");
  if (it->is_string()) return it->get<std::string>();
  if (it->is_object()) return it->dump();
  return Err(InvalidArgumentError(where + ": \"arguments\" must be an object or a JSON string"));
}

Result<BatchCall> CallFromLine(const Json& line, const std::string& where) {
  if (!line.is_object())
    return Err(InvalidArgumentError(where + ": expected an object {\"name\", \"arguments\"}"));
  auto name = line.find("name");
  if (name == line.end() || !name->is_string() || name->get<std::string>().empty()) {
    return Err(InvalidArgumentError(where + ": \"name\" must be a non-empty string"));
  }
  BatchCall call;
  call.name = name->get<std::string>();
  call.arguments = TALARIA_TRY(ArgumentsText(line, where));
  if (auto id = line.find("id"); id != line.end() && id->is_string())
    call.id = id->get<std::string>();
  return call;
}

Result<std::vector<BatchCall>> CallsFromMessage(const Json& message) {
  const Json& tool_calls = message["tool_calls"];
  if (!tool_calls.is_array()) return Err(InvalidArgumentError("\"tool_calls\" must be an array"));
  std::vector<BatchCall> calls;
  for (size_t i = 0; i < tool_calls.size(); ++i) {
    const std::string where = "tool_calls[" + std::to_string(i) + "]";
    const Json& tc = tool_calls[i];
    if (!tc.is_object() || !tc.contains("function") || !tc["function"].is_object()) {
      return Err(InvalidArgumentError(
          where + ": expected {\"id\", \"function\": {\"name\", \"arguments\"}}"));
    }
    BatchCall call = TALARIA_TRY(CallFromLine(tc["function"], where + ".function"));
    if (auto id = tc.find("id"); id != tc.end() && id->is_string())
      call.id = id->get<std::string>();
    calls.push_back(std::move(call));
  }
  return calls;
}

}  // namespace

Result<std::vector<BatchCall>> ParseBatchInput(std::string_view text) {
  // One document holding a whole assistant message (possibly pretty-printed over many lines).
  if (auto whole = ParseJson(text); whole && whole->is_object() && whole->contains("tool_calls")) {
    return CallsFromMessage(*whole);
  }
  std::vector<BatchCall> calls;
  size_t line_no = 0;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    ++line_no;
    if (IsBlank(line, kJsonSpace)) continue;
    const std::string where = "line " + std::to_string(line_no);
    auto parsed = ParseJson(line);
    if (!parsed)
      return Err(InvalidArgumentError(where + ": not JSON: " + parsed.error().message()));
    calls.push_back(TALARIA_TRY(CallFromLine(*parsed, where)));
  }
  return calls;
}

}  // namespace talaria::cli
