#include "agent/message_rows.h"

namespace talaria::agent {

store::StoredMessage ToRow(const Message& message) {
  store::StoredMessage row;
  row.role = std::string(RoleName(message.role));
  row.content = message.content;
  row.reasoning = message.reasoning;
  if (!message.tool_calls.empty()) {
    Json calls = Json::array();
    for (const ToolCall& call : message.tool_calls) {
      calls.push_back({{"id", call.id},
                       {"type", "function"},
                       {"function", {{"name", call.name}, {"arguments", call.arguments}}}});
    }
    row.tool_calls = std::move(calls);
  }
  row.tool_call_id = message.tool_call_id;
  row.name = message.name;
  return row;
}

Message FromRow(const store::StoredMessage& row) {
  Message message;
  message.role = ParseRole(row.role).value_or(Role::kUser);
  message.content = row.content;
  message.reasoning = row.reasoning;
  message.tool_call_id = row.tool_call_id;
  message.name = row.name;
  if (row.tool_calls.is_array()) {
    for (const Json& call : row.tool_calls) {
      if (!call.is_object()) continue;
      ToolCall out;
      out.id = JsonStringField(call, "id");
      auto function = call.find("function");
      if (function != call.end() && function->is_object()) {
        out.name = JsonStringField(*function, "name");
        out.arguments = JsonStringField(*function, "arguments");
      }
      message.tool_calls.push_back(std::move(out));
    }
  }
  return message;
}

std::vector<Message> FromRows(const std::vector<store::StoredMessage>& rows) {
  std::vector<Message> out;
  out.reserve(rows.size());
  for (const auto& row : rows) out.push_back(FromRow(row));
  return out;
}

std::vector<store::StoredMessage> ToRows(const std::vector<Message>& messages) {
  std::vector<store::StoredMessage> out;
  out.reserve(messages.size());
  for (const auto& message : messages) out.push_back(ToRow(message));
  return out;
}

store::TokenTotals ToTotals(const Usage& usage, double cost_usd) {
  store::TokenTotals totals;
  totals.input_tokens = usage.input_tokens;
  totals.cached_tokens = usage.cached_tokens;
  totals.output_tokens = usage.output_tokens;
  totals.reasoning_tokens = usage.reasoning_tokens;
  totals.cost_usd = cost_usd;
  return totals;
}

}  // namespace talaria::agent
