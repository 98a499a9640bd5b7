// What `talaria batch` reads: JSON lines of {"name", "arguments"[, "id"]}, or one OpenAI
// assistant message with "tool_calls" ({"id", "function": {"name", "arguments"}}). Arguments
// may be a JSON object or the model's JSON text (a string), kept verbatim for the dispatcher.
#pragma once

#include <string_view>
#include <vector>

#include "talaria/base/status.h"
#include "talaria/core/batch_executor.h"

namespace talaria::cli {

// Errors: InvalidArgument naming the line (JSON lines) or the tool call that is malformed.
Result<std::vector<BatchCall>> ParseBatchInput(std::string_view text);

}  // namespace talaria::cli
