// Which tool calls of a history have no result: what a crash between persisting an assistant
// message and persisting its tool results leaves behind. Providers reject a request whose
// history has such a call, so the store answers each with a synthetic result.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>  // StoredMessage holds a Json by value

#include "talaria/store/session_store.h"

namespace talaria::store {

struct UnansweredCall {
  std::string id;
  std::string name;
};

// The calls of assistant messages in `history` (in order) that no tool message answers. Calls
// without an id cannot be answered and are skipped; a malformed tool_calls value is read as no
// calls (the store holds whatever a model sent).
std::vector<UnansweredCall> FindUnansweredCalls(const std::vector<StoredMessage>& history);

// The tool message answering `call` after an interruption.
StoredMessage InterruptedResult(const UnansweredCall& call);

}  // namespace talaria::store
