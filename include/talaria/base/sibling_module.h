// The table a helper module beside libtalaria exports (libtalaria_http.so, libtalaria_net.so):
// opened once by the caller, its entry symbol called, and its head checked against this build,
// so a module from another build of talaria is refused instead of misread.
// Thread-safety: call it from a function-local static's initializer (loaded once).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "talaria/base/status.h"

namespace talaria {

// Every module table starts with these two fields, in this order.
struct SiblingModuleHead {
  uint32_t abi = 0;
  size_t table_size = 0;
};

// Opens `file` beside libtalaria (OpenSiblingModule; never dlclose'd: what it hands out points
// into it), calls its C entry `entry` and checks the head against `abi` and `table_size`.
// Unavailable, naming the file and why, when it cannot be loaded or belongs to another build.
Result<const void*> LoadSiblingModuleTable(const char* file, const char* entry,
                                           std::string_view what, uint32_t abi, size_t table_size);

}  // namespace talaria
