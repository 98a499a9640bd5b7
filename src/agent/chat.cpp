// chat.h: roles, usage arithmetic, cost, and messages in the Chat Completions wire shape.
#include "talaria/agent/chat.h"

#include <algorithm>

#include <nlohmann/json.hpp>

namespace talaria::agent {

std::string_view RoleName(Role role) {
  switch (role) {
    case Role::kSystem:
      return "system";
    case Role::kUser:
      return "user";
    case Role::kAssistant:
      return "assistant";
    case Role::kTool:
      return "tool";
  }
  return "user";
}

std::optional<Role> ParseRole(std::string_view name) {
  if (name == "system") return Role::kSystem;
  if (name == "user") return Role::kUser;
  if (name == "assistant") return Role::kAssistant;
  if (name == "tool") return Role::kTool;
  return std::nullopt;
}

Usage& Usage::operator+=(const Usage& other) {
  input_tokens += other.input_tokens;
  cached_tokens += other.cached_tokens;
  output_tokens += other.output_tokens;
  reasoning_tokens += other.reasoning_tokens;
  return *this;
}

double Pricing::Cost(const Usage& usage) const {
  // Cached tokens are part of input_tokens; they are billed at the cached rate when there is one.
  const int64_t cached = std::min(std::max<int64_t>(usage.cached_tokens, 0), usage.input_tokens);
  const int64_t uncached = std::max<int64_t>(usage.input_tokens - cached, 0);
  const double cached_rate = cached_per_mtok > 0 ? cached_per_mtok : input_per_mtok;
  const double cost =
      static_cast<double>(uncached) * input_per_mtok + static_cast<double>(cached) * cached_rate +
      static_cast<double>(std::max<int64_t>(usage.output_tokens, 0)) * output_per_mtok;
  return cost / 1'000'000.0;
}

Json MessageToWire(const Message& message) {
  Json wire = Json::object();
  wire["role"] = std::string(RoleName(message.role));
  if (message.role == Role::kAssistant && !message.tool_calls.empty()) {
    // An assistant turn that only called tools has null content (some servers refuse "").
    wire["content"] = message.content.empty() ? Json(nullptr) : Json(message.content);
    Json calls = Json::array();
    for (const ToolCall& call : message.tool_calls) {
      calls.push_back({{"id", call.id},
                       {"type", "function"},
                       {"function", {{"name", call.name}, {"arguments", call.arguments}}}});
    }
    wire["tool_calls"] = std::move(calls);
  } else {
    wire["content"] = message.content;
  }
  if (message.role == Role::kTool) {
    wire["tool_call_id"] = message.tool_call_id;
    if (!message.name.empty()) wire["name"] = message.name;
  }
  return wire;
}

}  // namespace talaria::agent
