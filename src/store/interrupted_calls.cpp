#include "store/interrupted_calls.h"

#include <unordered_set>

#include <nlohmann/json.hpp>

namespace talaria::store {

std::vector<UnansweredCall> FindUnansweredCalls(const std::vector<StoredMessage>& history) {
  std::unordered_set<std::string> answered;
  for (const StoredMessage& m : history) {
    if (m.role == "tool" && !m.tool_call_id.empty()) answered.insert(m.tool_call_id);
  }
  std::vector<UnansweredCall> out;
  std::unordered_set<std::string> seen;  // a call id repeated by the model is answered once
  for (const StoredMessage& m : history) {
    if (m.role != "assistant" || !m.tool_calls.is_array()) continue;
    for (const Json& call : m.tool_calls) {
      if (!call.is_object()) continue;
      std::string id = JsonStringField(call, "id");
      if (id.empty() || answered.contains(id) || !seen.insert(id).second) continue;
      std::string name;
      if (auto fn = call.find("function"); fn != call.end()) name = JsonStringField(*fn, "name");
      out.push_back({std::move(id), std::move(name)});
    }
  }
  return out;
}

StoredMessage InterruptedResult(const UnansweredCall& call) {
  StoredMessage m;
  m.role = "tool";
  m.tool_call_id = call.id;
  m.name = call.name;
  m.content = DumpJson(Json{
      {"error",
       "interrupted: this tool call was cut off before it finished (talaria stopped while it "
       "ran). Whatever it changed is unknown: check its side effects before relying on them or "
       "running it again."},
      {"interrupted", true}});
  return m;
}

}  // namespace talaria::store
