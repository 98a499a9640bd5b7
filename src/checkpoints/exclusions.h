// What snapshots leave out, by name (the original's default excludes): dependencies, build
// output, caches, virtual environments, version-control directories, binaries and media,
// archives, `.env*` files and logs. Content that is not text (a NUL byte in its first 8 KiB)
// is left out too, whatever its name (tree_scan.cpp).
// Thread-safety: pure functions.
#pragma once

#include <string_view>

namespace talaria::checkpoints {

// A directory entry named `name` is not descended into.
bool IsExcludedDirName(std::string_view name);
// A file named `name` is not snapshotted.
bool IsExcludedFileName(std::string_view name);

}  // namespace talaria::checkpoints
