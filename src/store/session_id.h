// Session ids: YYYYMMDD_HHMMSS_<6 random hex> (UTC), sortable by start and easy to read aloud.
// Thread-safety: thread-safe.
#pragma once

#include <cstdint>
#include <string>

namespace talaria::store {

// The id of a session started at `unix_ms`, with a fresh random suffix.
std::string NewSessionId(int64_t unix_ms);

// Unix time in milliseconds, the store's timestamp unit.
int64_t NowUnixMs();

}  // namespace talaria::store
