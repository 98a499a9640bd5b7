// One memory operation as JSON, the tool's argument shape {action, content?, old_text?}: what
// a call carries, what a staged write keeps on disk (memory_pending.cpp) and what `talaria memory
// pending` lists.
// Thread-safety: pure functions.
#pragma once

#include "talaria/base/json.h"
#include "talaria/base/status.h"
#include "talaria/memory/memory_store.h"

namespace talaria::memory {

// InvalidArgument saying what is wrong ("action must be one of add, replace, remove").
Result<Operation> ParseOperation(const Json& object);

Json OperationJson(const Operation& op);

}  // namespace talaria::memory
