// Building messages without spelling out every field.
// Thread-safety: free functions, no shared state.
#pragma once

#include <string>
#include <utility>

#include "talaria/agent/chat.h"

namespace talaria::agent {

inline Message TextMessage(Role role, std::string content) {
  Message m;
  m.role = role;
  m.content = std::move(content);
  return m;
}

inline Message ToolMessage(std::string call_id, std::string name, std::string content) {
  Message m;
  m.role = Role::kTool;
  m.content = std::move(content);
  m.tool_call_id = std::move(call_id);
  m.name = std::move(name);
  return m;
}

}  // namespace talaria::agent
