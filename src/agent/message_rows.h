// The agent's messages as the session store keeps them (rows with the wire's role names and
// tool-call JSON) and back.
// Thread-safety: free functions, no shared state.
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "agent/messages.h"
#include "talaria/agent/chat.h"
#include "talaria/store/session_store.h"

namespace talaria::agent {

store::StoredMessage ToRow(const Message& message);
// A row with an unknown role becomes a user message (a newer build's row must not crash this
// one); tool calls that are not objects are skipped.
Message FromRow(const store::StoredMessage& row);
std::vector<Message> FromRows(const std::vector<store::StoredMessage>& rows);
std::vector<store::StoredMessage> ToRows(const std::vector<Message>& messages);

store::TokenTotals ToTotals(const Usage& usage, double cost_usd);

}  // namespace talaria::agent
