// Unpredictable identifiers: session and process ids, temporary file names, protocol markers.
// Thread-safety: thread-safe.
#pragma once

#include <cstddef>
#include <string>

namespace talaria {

// `bytes` random bytes as 2*bytes lowercase hex digits, from getrandom(2). Where the kernel
// refuses (early boot, a seccomp filter) it falls back to a per-thread generator seeded from
// random_device, pid and a counter: never fails, names stay hard to guess and distinct.
std::string RandomHex(size_t bytes);

}  // namespace talaria
