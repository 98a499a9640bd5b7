#include "agent/agent_routing.h"

#include <map>
#include <mutex>
#include <unordered_map>

#include "agent/agent_impl.h"

namespace talaria::agent {
namespace {

struct Live {
  AgentImpl* agent = nullptr;
  const Dispatcher* dispatcher = nullptr;
};

struct Table {
  std::mutex mu;
  std::unordered_map<std::string, Live> sessions;          // Guarded by mu.
  std::map<const Dispatcher*, int> agents_per_dispatcher;  // Guarded by mu.
};

Table& Routing() {
  static auto* table = new Table;  // never destroyed: agents may outlive static destruction
  return *table;
}

// The agent a call of `dispatcher` belongs to: its session's, else (a caller that made its own
// context, e.g. an embedder's) the only agent on that dispatcher.
AgentImpl* FindLocked(Table& t, const Dispatcher& dispatcher, std::string_view session_id) {
  if (auto it = t.sessions.find(std::string(session_id)); it != t.sessions.end()) {
    return it->second.agent;
  }
  AgentImpl* only = nullptr;
  for (const auto& [id, live] : t.sessions) {
    if (live.dispatcher != &dispatcher) continue;
    if (only != nullptr) return nullptr;
    only = live.agent;
  }
  return only;
}

}  // namespace

void AttachRouting(Dispatcher& dispatcher) {
  Table& t = Routing();
  std::lock_guard lock(t.mu);
  if (t.agents_per_dispatcher[&dispatcher]++ > 0) return;
  const Dispatcher* self = &dispatcher;
  dispatcher.SetAgentLoopRouter(
      [self](std::string_view name, const Json& args,
             ToolContext& ctx) -> std::optional<ToolResult> {
        AgentImpl* agent = nullptr;
        {
          Table& table = Routing();
          std::lock_guard l(table.mu);
          agent = FindLocked(table, *self, ctx.session_id);
        }
        // The agent runs its own calls: it cannot be destroyed while one is under way.
        if (agent == nullptr) return std::nullopt;
        return agent->RouteAgentCall(name, args, ctx);
      },
      [](std::string_view name) { return AgentImpl::TakesAgentCall(name); });
  // Background subagents' results reach the model with the session's next tool result.
  dispatcher.hooks().AddTransformResult(
      [self](const PostToolEvent& event) -> std::optional<std::string> {
        Table& table = Routing();
        std::lock_guard l(table.mu);
        AgentImpl* agent = FindLocked(table, *self, event.ctx.session_id);
        if (agent == nullptr) return std::nullopt;
        std::string notices = agent->TakeDelegationNotices();
        if (notices.empty()) return std::nullopt;
        return event.result.text + notices;
      });
}

void DetachRouting(Dispatcher& dispatcher) {
  Table& t = Routing();
  std::lock_guard lock(t.mu);
  auto it = t.agents_per_dispatcher.find(&dispatcher);
  if (it == t.agents_per_dispatcher.end() || --it->second > 0) return;
  t.agents_per_dispatcher.erase(it);
  // The transform hook stays (hooks cannot be removed) but finds no agent and does nothing.
  dispatcher.SetAgentLoopRouter(nullptr);
}

void RegisterSession(const std::string& session_id, AgentImpl* agent,
                     const Dispatcher* dispatcher) {
  Table& t = Routing();
  std::lock_guard lock(t.mu);
  t.sessions[session_id] = Live{agent, dispatcher};
}

void UnregisterSession(const std::string& session_id) {
  Table& t = Routing();
  std::lock_guard lock(t.mu);
  t.sessions.erase(session_id);
}

bool WithSessionAgent(std::string_view session_id, const std::function<void(AgentImpl&)>& fn) {
  Table& t = Routing();
  std::lock_guard lock(t.mu);
  auto it = t.sessions.find(std::string(session_id));
  if (it == t.sessions.end()) return false;
  fn(*it->second.agent);
  return true;
}

}  // namespace talaria::agent
