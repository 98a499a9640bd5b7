// The sessions table as SessionRow holds it: the column list the queries select and the reader
// of one such row, shared by the writer's connection and the read-only recall connection.
#pragma once

#include "store/sqlite_db.h"
#include "talaria/store/session_store.h"

// A string literal, so statements can be built from it at compile time: the statement cache is
// keyed by the address of each statement's text.
#define TALARIA_SESSION_COLUMNS                                                             \
  "id, coalesce(parent_id, ''), cwd, model, title, source, started_at_ms, updated_at_ms, "  \
  "ended_at_ms, end_reason, input_tokens, cached_tokens, output_tokens, reasoning_tokens, " \
  "cost_usd, message_count"

namespace talaria::store {

// The row at the statement's current step, from TALARIA_SESSION_COLUMNS at column 0 onwards.
SessionRow ReadSessionRow(const Stmt& s);

}  // namespace talaria::store
