// The libgit2 half of the checkpoints module lives in libtalaria_checkpoints.so, which
// libtalaria loads from its own directory on the first CheckpointStore::Open: libgit2 and what
// it brings (mbedTLS, libssh2, Kerberos, OpenSSL's libcrypto, http-parser) would cost every
// start of talaria its dynamic loading, and checkpoints are off by default.
//
// The module exports one C symbol, talaria_checkpoints_module, returning the table below; it
// is built from the same sources and compiler as libtalaria, so C++ types cross as they are.
// Thread-safety: LoadCheckpointsModule is thread-safe (loaded once).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "talaria/base/status.h"
#include "talaria/checkpoints/checkpoint_store.h"

namespace talaria::checkpoints {

inline constexpr const char* kModuleFile = "libtalaria_checkpoints.so";
inline constexpr const char* kModuleEntry = "talaria_checkpoints_module";
// Bumped whenever a type crossing the boundary changes; a module from another build is refused.
inline constexpr uint32_t kModuleAbi = 1;

struct CheckpointsModule {
  uint32_t abi = kModuleAbi;
  size_t table_size = sizeof(CheckpointsModule);
  // REQUIRES: settings.root and refused_dirs filled in (CheckpointStore::Open does).
  Result<std::shared_ptr<CheckpointStore>> (*open_store)(CheckpointSettings settings);
};

// Defined in the module (git/git_store.cpp).
Result<std::shared_ptr<CheckpointStore>> OpenGitStore(CheckpointSettings settings);

}  // namespace talaria::checkpoints
