#include "store/message_json.h"

#include <nlohmann/json.hpp>

namespace talaria::store {
namespace {

int64_t IntField(const Json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_number_integer() ? it->get<int64_t>() : 0;
}

}  // namespace

Json MessagesToJson(const std::vector<StoredMessage>& messages) {
  Json out = Json::array();
  for (const StoredMessage& m : messages) {
    Json j = Json::object();
    j["seq"] = m.seq;
    j["role"] = m.role;
    j["content"] = m.content;
    if (!m.reasoning.empty()) j["reasoning"] = m.reasoning;
    if (!m.tool_calls.is_null()) j["tool_calls"] = m.tool_calls;
    if (!m.tool_call_id.empty()) j["tool_call_id"] = m.tool_call_id;
    if (!m.name.empty()) j["name"] = m.name;
    const TokenTotals& u = m.usage;
    if (u.input_tokens != 0 || u.cached_tokens != 0 || u.output_tokens != 0 ||
        u.reasoning_tokens != 0 || u.cost_usd != 0) {
      j["usage"] = {{"input_tokens", u.input_tokens},
                    {"cached_tokens", u.cached_tokens},
                    {"output_tokens", u.output_tokens},
                    {"reasoning_tokens", u.reasoning_tokens},
                    {"cost_usd", u.cost_usd}};
    }
    j["created_at_ms"] = m.created_at_ms;
    out.push_back(std::move(j));
  }
  return out;
}

Result<std::vector<StoredMessage>> MessagesFromJson(std::string_view text) {
  Json parsed = TALARIA_TRY(ParseJson(text));
  if (!parsed.is_array()) return Err(InvalidArgumentError("replacement history is not an array"));
  std::vector<StoredMessage> out;
  out.reserve(parsed.size());
  for (const Json& j : parsed) {
    if (!j.is_object()) return Err(InvalidArgumentError("replacement message is not an object"));
    StoredMessage m;
    m.seq = IntField(j, "seq");
    m.role = JsonStringField(j, "role");
    m.content = JsonStringField(j, "content");
    m.reasoning = JsonStringField(j, "reasoning");
    if (auto it = j.find("tool_calls"); it != j.end()) m.tool_calls = *it;
    m.tool_call_id = JsonStringField(j, "tool_call_id");
    m.name = JsonStringField(j, "name");
    if (auto it = j.find("usage"); it != j.end() && it->is_object()) {
      m.usage.input_tokens = IntField(*it, "input_tokens");
      m.usage.cached_tokens = IntField(*it, "cached_tokens");
      m.usage.output_tokens = IntField(*it, "output_tokens");
      m.usage.reasoning_tokens = IntField(*it, "reasoning_tokens");
      auto cost = it->find("cost_usd");
      if (cost != it->end() && cost->is_number()) m.usage.cost_usd = cost->get<double>();
    }
    m.created_at_ms = IntField(j, "created_at_ms");
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace talaria::store
