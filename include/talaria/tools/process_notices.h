// Background-process notices reach the model with its next tool result: the session's process
// table queues them (completion with notify_on_complete, watch-pattern matches) and the
// dispatcher's result transform appends them, cleaned like terminal output, to whatever result
// the session's next call returns. MCP front ends can push them instead (ProcessTable's
// listener).
//
//   talaria::tools::AttachProcessNotices(dispatcher);
//
// Thread-safety: the hook is thread-safe (each table hands a notice out once).
#pragma once

#include <string>

#include "talaria/core/dispatcher.h"
#include "talaria/env/process_table.h"

namespace talaria::tools {

// "[IMPORTANT: Background process proc_... completed normally (exit code 0). ...]" and the
// like: one bracketed block, output ANSI-stripped and redacted.
std::string FormatProcessNotice(const env::ProcessNotice& notice);

// Adds the result transform to `dispatcher`'s hooks. Call once per dispatcher.
void AttachProcessNotices(Dispatcher& dispatcher);

}  // namespace talaria::tools
