// The conversation as the model sees it: messages, tool calls and token usage, in the shape of
// OpenAI Chat Completions (the wire format every compatible endpoint speaks).
// Thread-safety: value types and free functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "talaria/base/json.h"

namespace talaria::agent {

enum class Role : unsigned char { kSystem, kUser, kAssistant, kTool };

std::string_view RoleName(Role role);  // "system", "user", "assistant", "tool"
std::optional<Role> ParseRole(std::string_view name);

struct ToolCall {
  std::string id;
  std::string name;
  std::string arguments;  // the model's JSON text, as assembled
  // The response ended (finish_reason "length", or the stream dropped) while this call's
  // arguments were still being written: it must not run.
  bool truncated = false;
};

struct Message {
  Role role = Role::kUser;
  std::string content;
  std::string reasoning;             // assistant: reasoning/thinking text, if the model sent any
  std::vector<ToolCall> tool_calls;  // assistant
  std::string tool_call_id;          // tool: the call this answers
  std::string name;                  // tool: the tool's name
};

// Token counts as the provider reported them (0 when it did not).
struct Usage {
  int64_t input_tokens = 0;   // prompt tokens, cached ones included
  int64_t cached_tokens = 0;  // of input_tokens, read from the provider's prompt cache
  int64_t output_tokens = 0;  // completion tokens, reasoning included
  int64_t reasoning_tokens = 0;
  Usage& operator+=(const Usage& other);
};

// USD per million tokens; a model without pricing costs 0 and says so ("unknown").
struct Pricing {
  double input_per_mtok = 0;
  double cached_per_mtok = 0;  // 0: cached tokens cost input_per_mtok
  double output_per_mtok = 0;
  bool known() const { return input_per_mtok > 0 || output_per_mtok > 0; }
  double Cost(const Usage& usage) const;
};

// A message as the Chat Completions API takes it ({"role": ..., "content": ..., "tool_calls":
// [...]}); reasoning is not sent back.
Json MessageToWire(const Message& message);

}  // namespace talaria::agent
