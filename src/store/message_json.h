// A StoredMessage as JSON, for the replacement history a compaction stores in one column.
// Thread-safety: pure functions.
#pragma once

#include <vector>

#include <nlohmann/json.hpp>  // StoredMessage holds a Json by value

#include "talaria/base/json.h"
#include "talaria/base/status.h"
#include "talaria/store/session_store.h"

namespace talaria::store {

Json MessagesToJson(const std::vector<StoredMessage>& messages);
// InvalidArgument when `text` is not an array of message objects (a damaged row).
Result<std::vector<StoredMessage>> MessagesFromJson(std::string_view text);

}  // namespace talaria::store
