// The sessions database schema: forward migrations as a list of steps, one per version, applied
// on open. `PRAGMA user_version` is the schema version.
// Thread-safety: free functions over a connection the caller owns.
#pragma once

#include "store/sqlite_db.h"

namespace talaria::store {

// The version this build writes (the number of migration steps).
int CurrentSchemaVersion();

// Applies every missing step in order, each in its own write transaction that also sets
// user_version (a crash between steps leaves a valid older version that the next open
// continues from). FailedPrecondition when the file has a newer version than this build knows:
// an older talaria must not write into a schema it does not understand.
Status MigrateSchema(SqliteDb& db);

}  // namespace talaria::store
