// SHA-256 (FIPS 180-4) via nettle: content fingerprints for write verification,
// the audit log and change detection.
// Thread-safety: Sha256Hex is thread-safe; a Sha256 object is not (caller synchronises).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace talaria {

// Lower-case hex SHA-256 of `data` (64 chars).
std::string Sha256Hex(std::string_view data);

// Incremental hashing for data that arrives in pieces.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  void Update(std::string_view data);
  // Returns the digest and resets the object for reuse.
  std::array<uint8_t, 32> Final();
  std::string FinalHex();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace talaria
